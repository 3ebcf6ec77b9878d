import Synchronization
import Testing
@testable import NotesKit
#if canImport(Glibc)
import Glibc
#endif

/// What the exporters asked of the file system in this test's folder, counted by the calls
/// installed below (other tests may export at the same time, elsewhere).
private let synced = Atomic<Int>(0)
private let renamed = Atomic<Int>(0)
private let marker = "noteskit-durability-seam"

private func isMine(_ fd: Int32) -> Bool {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
    return n > 0 && String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).contains(marker)
}

@Suite("Durability: a returned write survives a power cut", .serialized)
struct DurabilityTests {
    @Test("a store file syncs every commit unless opened fast; a memory store is unaffected")
    func synchronousSetting() throws {
        let folder = try temporaryFolder()
        let durable = try Store.open(path: folder + "/durable.db")
        let fast = try Store.open(path: folder + "/fast.db", durability: .fast)
        defer { durable.close(); fast.close() }
        #expect(durable.durability == .durable && fast.durability == .fast)
        #expect(try durable.read { try Store.scalar($0, "PRAGMA synchronous") } == 2)  // FULL
        #expect(try fast.read { try Store.scalar($0, "PRAGMA synchronous") } == 1)     // NORMAL
        #expect(try Store.memory().durability == .fast)
    }

    @Test("an export syncs its bytes, renames and syncs its folder, through the file calls")
    func exportThroughTheSeam() throws {
        let folder = try temporaryFolder() + "/" + marker
        #expect(mkdir(folder, 0o700) == 0)
        let store = try Store.memory()
        _ = try store.articles.create(title: "t", content: "c")
        var counting = FileCalls.posix
        counting.fsync = { fd in
            if isMine(fd) { synced.add(1, ordering: .relaxed) }
            return Glibc.fsync(fd)
        }
        counting.renameat = { from, old, to, new in
            if String(cString: new!).contains(marker) { renamed.add(1, ordering: .relaxed) }
            return Glibc.renameat(from, old!, to, new!)
        }
        FileCalls.install(counting)
        defer { FileCalls.install(nil) }
        _ = try store.export(to: folder + "/backup.json")
        #expect(synced.load(ordering: .relaxed) == 2)   // the file, then its folder
        #expect(renamed.load(ordering: .relaxed) == 1)
        FileCalls.install(nil)
        _ = try store.export(to: folder + "/again.json")
        #expect(synced.load(ordering: .relaxed) == 2)
    }
}
