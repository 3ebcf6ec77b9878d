import Testing
@testable import NotesKit
#if canImport(Glibc)
import Glibc
#endif

@Suite("Private files in the core: modes, temporary names, leftovers")
struct PrivateFilesTests {
    @Test("temporary names are unpredictable and only NotesKit's own shape is recognised")
    func temporaryNames() {
        let tokens = (0..<1000).map { _ in TempEntries.token() }
        #expect(Set(tokens).count == 1000)
        for token in tokens.prefix(20) {
            #expect(TempEntries.parse(Array((TempEntries.tempPrefix + token).utf8)) == false)
            #expect(TempEntries.parse(Array((TempEntries.newPrefix + token).utf8)) == true)
        }
        let token = tokens[0]
        for foreign in [".noteskit-tmp-" + token.dropLast(), ".noteskit-tmp-" + token + "x", ".noteskit-tmp-" + token.uppercased(),
                        ".noteskit-" + token, "noteskit-tmp-" + token, ".noteskit-tmp-" + token.dropLast() + "1"] {
            #expect(TempEntries.parse(Array(foreign.utf8)) == nil, "\(foreign)")
        }
    }

    @Test("file modes: read and write bits with the owner's; folders list where files are read")
    func modes() throws {
        #expect(try FileModes.fileMode(nil) == 0o600)
        #expect(try FileModes.fileMode(0o644) == 0o644)
        for bad: UInt32 in [0o700, 0o755, 0o400, 0o4600, 0o2600, 0o1600, 0o000] {
            #expect(throws: NotesError.self) { try FileModes.fileMode(bad) }
        }
        #expect(FileModes.folderMode(forFiles: 0o600) == 0o700)
        #expect(FileModes.folderMode(forFiles: 0o640) == 0o750)
        #expect(FileModes.folderMode(forFiles: 0o666) == 0o777)
    }

    @Test("a sweep removes an unlocked leftover of ours and keeps a locked one and a young new one")
    func sweep() throws {
        let folder = try temporaryFolder()
        let dead = TempEntries.tempPrefix + TempEntries.token()
        try writeFile(folder + "/" + dead, "half")
        let young = TempEntries.newPrefix + TempEntries.token()
        try writeFile(folder + "/" + young, "")
        let fd = open(folder, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        let live = try TempEntries.createFile(in: fd, mode: 0o600, for: folder + "/x.json")
        defer { close(live.fd) }
        #expect(TempEntries.sweep(fd) == [dead])
        var info = stat()
        #expect(stat(folder + "/" + young, &info) == 0 && stat(folder + "/" + live.name, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}
