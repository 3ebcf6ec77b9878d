import Synchronization
import Testing
@testable import NotesKit
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body(0..<count)` on `count` threads of their own (real pthreads, not the task pool), all
/// started before any is joined.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Work: Sendable {
        let index: Int
        let body: @Sendable (Int) -> Void
        init(_ index: Int, _ body: @escaping @Sendable (Int) -> Void) { self.index = index; self.body = body }
    }
    var threads: [pthread_t] = []
    for index in 0..<count {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Work(index, body)).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let work = Unmanaged<Work>.fromOpaque(context).takeRetainedValue()
            work.body(work.index)
            return nil
        }, context)
        if rc == 0 { threads.append(thread) } else { Unmanaged<Work>.fromOpaque(context).release(); body(index) }
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// The paths the compiler can no longer see into — the store's one connection behind its lock, the
/// layouts and selections on it, the shared fontconfig configuration — used from many threads.
@Suite("One store, many threads")
struct ConcurrencyTests {
    @Test("eight threads writing and reading one store end with exact counts and a complete change feed")
    func mixedCalls() throws {
        let folder = try temporaryFolder()
        let store = try Store.open(path: folder + "/threads.db", durability: .fast)
        defer { store.close() }
        let chat = try store.conversations.create(title: "threads")
        let rounds = 40
        let problems = Mutex<[String]>([])
        onThreads(8) { t in
            do {
                for i in 0..<rounds {
                    let made = try store.articles.create(title: "t\(t)-\(i)", content: "c")
                    let read = try store.articles.get(made.id)
                    if read.title != made.title { problems.withLock { $0.append("read \(read.title) for \(made.title)") } }
                    let edited = try store.articles.update(made.id, content: "edited", expectedRevision: 1)
                    if edited.revision != 2 { problems.withLock { $0.append("revision \(edited.revision)") } }
                    if i % 4 == 0 { try store.articles.delete(made.id) }
                    _ = try store.messages.send("m\(t)-\(i)", in: chat.id)
                    let page = try store.articles.list(limit: 5)
                    if page.items.contains(where: { $0.revision < 1 }) { problems.withLock { $0.append("bad page") } }
                }
            } catch {
                problems.withLock { $0.append("thread \(t): \(error)") }
            }
        }
        #expect(problems.withLock { $0 } == [])
        let deleted = 8 * (rounds / 4)
        #expect(try store.articles.count() == 8 * rounds - deleted)
        #expect(try store.messages.history(of: chat.id, limit: 1_000).items.count == 8 * rounds)
        // A create and an update for each article, a delete for every fourth, a create for each message.
        var changes: [Change] = []
        while let next = Optional(try store.changes(since: changes.last?.seq ?? 0)), !next.isEmpty { changes += next }
        func counted(_ entity: String, _ operation: Change.Operation) -> Int {
            changes.filter { $0.entity == entity && $0.operation == operation }.count
        }
        #expect(counted("article", .create) == 8 * rounds && counted("article", .update) == 8 * rounds)
        #expect(counted("article", .delete) == deleted && counted("message", .create) == 8 * rounds)
        #expect(changes.map(\.seq) == Array(1...Int64(changes.count)))
    }

    @Test("closing a store while other threads call it gives them closed errors, never a crash")
    func closeWhileInUse() throws {
        for _ in 0..<10 {
            let store = try Store.memory()
            let unexpected = Mutex<[String]>([])
            let started = Atomic<Int>(0)
            onThreads(4) { t in
                if t == 0 {
                    while started.load(ordering: .acquiring) < 3 { sched_yield() }
                    store.close()
                    return
                }
                started.wrappingAdd(1, ordering: .releasing)
                for i in 0..<200 {
                    do {
                        _ = try store.articles.create(title: "t\(i)", content: "c")
                        _ = try store.articles.list(limit: 3)
                    } catch let error as NotesError where error.kind == .closed {
                        continue
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(unexpected.withLock { $0 } == [])
            #expect(store.isClosed)
        }
    }

    @Test("a layout, its row offsets and a prefetch used from many threads agree with one thread")
    func layoutFromThreads() throws {
        let store = try Store.memory()
        let made = try store.articles.createMany((0..<60).map {
            NewArticle(title: "row \($0)", content: String(repeating: "今天天气真好 hello ", count: $0 % 7 + 1))
        })
        let ids = made.map(\.id)
        let alone = try store.layout(width: 320)
        let expected = try alone.articleHeights(ids)
        let layout = try store.layout(width: 320)
        let rows = try layout.rows(ids)
        let problems = Mutex<[String]>([])
        onThreads(6) { t in
            do {
                if t == 0 {
                    _ = try layout.prefetch(ids, threads: 3)
                } else {
                    let mine = Array(ids.shuffled())
                    let heights = try layout.articleHeights(mine)
                    for (id, height) in zip(mine, heights) where height != expected[ids.firstIndex(of: id)!] {
                        problems.withLock { $0.append("article \(id): \(height)") }
                    }
                    _ = try rows.visible(offset: Double(t) * 100, height: 600)
                    _ = try rows.totalHeight()
                }
            } catch {
                problems.withLock { $0.append("thread \(t): \(error)") }
            }
        }
        #expect(problems.withLock { $0 } == [])
        #expect(try rows.totalHeight() == expected.reduce(0, +))
        #expect(try (0..<ids.count).allSatisfy { try rows.isMeasured($0) })
    }

    @Test("a selection read on two threads hands over every row once, in order, both ways round")
    func twoThreadSelection() throws {
        let folder = try temporaryFolder()
        let store = try Store.open(path: folder + "/select.db", durability: .fast)
        defer { store.close() }
        let chat = try store.conversations.create(title: "many")
        let n = Selection.parallelRows + 5_000
        _ = try store.messages.insertMany((0..<n).map {
            NewMessage(content: "m\($0)", fromMe: $0 % 2 == 0, sentAt: Timestamp(milliseconds: 1_000_000 + Int64($0 / 3)))
        }, in: chat.id)
        func ids(_ selection: Selection) throws -> [Int64] {
            let reader = try selection.reader(threads: 2)
            var out: [Int64] = []
            while let batch = try reader.next() {
                let column = batch.columns[0]
                guard let base = column.values.base else { continue }
                let values = base.assumingMemoryBound(to: Int64.self)
                out += (0..<batch.count).map { values[$0] }
            }
            return out
        }
        let all = (1...Int64(n)).map { $0 }
        #expect(try ids(store.messages.select()) == all)                        // rowid order, two halves
        #expect(try ids(store.messages.select(ascending: false)) == all.reversed())
        let windowed = try ids(store.messages.select(since: Timestamp(milliseconds: 1_000_000)))  // by the index, split by position
        #expect(windowed == all)
        #expect(try ids(store.messages.select(conversation: chat.id, ascending: false)) == all.reversed())
    }
}
