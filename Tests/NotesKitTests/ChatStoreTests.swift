import Testing
@testable import NotesKit

@Suite("Conversations and messages in the core")
struct ChatStoreTests {
    @Test("a sent message appears last in the history, from me")
    func sendAppearsLast() throws {
        let store = try Store.memory()
        let conv = try store.conversations.create(title: "Alice")
        _ = try store.messages.receive("hi", in: conv.id)
        let sent = try store.messages.send("hello", in: conv.id)
        let page = try store.messages.history(of: conv.id)
        #expect(page.items.last == sent && sent.fromMe)
        #expect(page.items.map(\.content) == ["hi", "hello"] && page.nextCursor == nil)
    }

    @Test("an empty or whitespace-only message is refused and writes nothing")
    func emptyMessage() throws {
        let store = try Store.memory()
        let conv = try store.conversations.create(title: "Alice")
        let seq = try store.lastChangeSeq()
        for blank in ["", " ", "\n\t", "\u{3000}"] {
            let error = try #require(throws: NotesError.self) { try store.messages.send(blank, in: conv.id) }
            #expect(error.kind == .validation && error.field == "content")
        }
        #expect(try store.messages.history(of: conv.id).items.isEmpty)
        #expect(try store.lastChangeSeq() == seq)
    }

    @Test("history pages backward, oldest first within a page, through runs of equal sent_at")
    func historyPaging() throws {
        let store = try Store.memory()
        let conv = try store.conversations.create(title: "Alice")
        let at = Timestamp(milliseconds: 1_700_000_000_000)
        // Three runs sharing one instant each, so that page boundaries fall inside runs.
        let made = try store.messages.insertMany((0..<95).map {
            NewMessage(content: "m\($0)", fromMe: $0 % 2 == 0, sentAt: Timestamp(milliseconds: at.milliseconds + Int64($0 / 40)))
        }, in: conv.id)
        var pages: [[Message]] = []
        var cursor: String? = nil
        repeat {
            let page = try store.messages.history(of: conv.id, limit: 7, before: cursor)
            #expect(page.items.map(\.id) == page.items.map(\.id).sorted())
            pages.append(page.items)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(pages.reversed().flatMap { $0 } == made)
    }

    @Test("a history cursor is refused for another conversation")
    func foreignCursor() throws {
        let store = try Store.memory()
        let a = try store.conversations.create(title: "A"), b = try store.conversations.create(title: "B")
        for _ in 0..<3 { _ = try store.messages.send("x", in: a.id) }
        let cursor = try #require(try store.messages.history(of: a.id, limit: 1).nextCursor)
        let error = try #require(throws: NotesError.self) { try store.messages.history(of: b.id, before: cursor) }
        #expect(error.kind == .validation && error.field == "cursor")
    }

    @Test("deleting a conversation deletes its messages and records a change for each")
    func deleteCascades() throws {
        let store = try Store.memory()
        let a = try store.conversations.create(title: "A"), b = try store.conversations.create(title: "B")
        let gone = try store.messages.insertMany([NewMessage(content: "1", fromMe: true), NewMessage(content: "2", fromMe: false)], in: a.id)
        let kept = try store.messages.send("stay", in: b.id)
        let seq = try store.lastChangeSeq()
        try store.conversations.delete(a.id)
        #expect(try store.changes(since: seq).map { "\($0.entity) \($0.operation.rawValue) \($0.entityId)" }
                == gone.map { "message delete \($0.id)" } + ["conversation delete \(a.id)"])
        for m in gone { #expect(throws: NotesError.self) { try store.messages.get(m.id) } }
        #expect(try store.messages.history(of: b.id).items == [kept])
    }

    @Test("a bulk insert with one bad record writes nothing and names the record")
    func bulkAllOrNothing() throws {
        let store = try Store.memory()
        let conv = try store.conversations.create(title: "Import")
        let error = try #require(throws: NotesError.self) {
            try store.messages.insertMany([NewMessage(content: "ok", fromMe: true), NewMessage(content: "  ", fromMe: false)], in: conv.id)
        }
        #expect(error.kind == .validation && error.field == "content" && error.line == 1)
        #expect(try store.messages.history(of: conv.id).items.isEmpty)
    }

    @Test("an unknown conversation is not found")
    func unknownConversation() throws {
        let store = try Store.memory()
        for call in [{ _ = try store.messages.send("x", in: 42) }, { _ = try store.messages.history(of: 42) },
                     { _ = try store.messages.insertMany([], in: 42) }, { _ = try store.conversations.rename(42, title: "t") }] {
            let error = try #require(throws: NotesError.self) { try call() }
            #expect(error.kind == .notFound)
        }
        #expect(try store.lastChangeSeq() == 0)
    }

    @Test("the list puts the conversation with the latest activity first, even within a millisecond")
    func listOrder() throws {
        let store = try Store.memory()
        let a = try store.conversations.create(title: "A"), b = try store.conversations.create(title: "B")
        #expect(try store.conversations.list().items.map(\.title) == ["B", "A"])
        _ = try store.messages.send("hi", in: a.id)
        #expect(try store.conversations.list().items.map(\.title) == ["A", "B"])
        _ = try store.messages.receive("old", in: b.id, sentAt: Timestamp(milliseconds: 0))
        #expect(try store.conversations.list().items.map(\.title) == ["A", "B"])
        let first = try store.conversations.list(limit: 1)
        #expect(try store.conversations.list(limit: 1, after: first.nextCursor).items.map(\.id) == [b.id])
    }

    @Test("time-ordered uids are version 7 and count up within a batch")
    func timeOrderedUIDs() throws {
        let uids = UID.timeOrdered(count: 1000, at: Timestamp(milliseconds: 1_700_000_000_123))
        #expect(uids == uids.sorted() && Set(uids).count == 1000)
        for uid in uids {
            #expect(try UID.normalized(uid) == uid)
            let chars = Array(uid)
            #expect(chars[14] == "7" && "89ab".contains(chars[19]))
            #expect(uid.hasPrefix("018b"))  // 1_700_000_000_123 ms = 0x018bcfe5687b
        }
        #expect(UID.timeOrdered(count: 0).isEmpty)
    }
}
