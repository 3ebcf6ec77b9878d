import Testing
@testable import NotesKit

@Suite("Articles and drafts in the core")
struct ArticleStoreTests {
    @Test("saving an empty title is refused and writes nothing")
    func emptyTitle() throws {
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.articles.create(title: " ", content: "x") }
        #expect(error.kind == .validation && error.field == "title")
        #expect(try store.articles.count() == 0)
    }

    @Test("the list pages newest first with a keyset cursor")
    func paging() throws {
        let store = try Store.memory()
        let made = try store.articles.createMany((0..<45).map { NewArticle(title: "t\($0)", content: "c") })
        var seen: [Int64] = []
        var cursor: String? = nil
        repeat {
            let page = try store.articles.list(limit: 20, after: cursor)
            seen += page.items.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == made.map(\.id).reversed())
    }

    @Test("a cursor of one list is refused by another")
    func foreignCursor() throws {
        let store = try Store.memory()
        let cursor = store.cursors.encode(kind: "elsewhere", .init(key: 1, id: 1))
        let error = try #require(throws: NotesError.self) { try store.articles.list(after: cursor) }
        #expect(error.kind == .validation && error.field == "cursor")
    }

    @Test("a stale draft conflicts and is kept")
    func staleDraft() throws {
        let store = try Store.memory()
        let a = try store.articles.create(title: "t", content: "c")
        let d = try store.articles.edit(a.id)
        _ = try store.articles.updateDraft(d.id, content: "mine")
        _ = try store.articles.update(a.id, content: "theirs")
        let error = try #require(throws: NotesError.self) { try store.articles.saveDraft(d.id) }
        #expect(error.kind == .conflict)
        #expect(try store.articles.drafts().map(\.id) == [d.id])
    }

    @Test("after its first save a draft stays open on the saved article until discarded")
    func draftAfterFirstSave() throws {
        let store = try Store.memory()
        let d = try store.articles.newDraft(title: "t", content: "v1")
        let a = try store.articles.saveDraft(d.id)
        #expect(try store.articles.draft(d.id).articleId == a.id && (try store.articles.drafts()).isEmpty)
        _ = try store.articles.updateDraft(d.id, content: "v2")
        let b = try store.articles.saveDraft(d.id)
        #expect(try b.id == a.id && b.revision == 2 && store.articles.count() == 1)
        try store.articles.discardDraft(d.id)
        #expect(try store.articles.get(a.id).content == "v2")
    }

    @Test("errors carry a stable code and the app's own wording")
    func errorCodes() throws {
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.articles.create(title: " ", content: "x") }
        #expect(error.code == "title_empty" && error.message(in: "zh-Hans") == "标题不可为空")
        #expect(error.message(in: "zh-CN") == "标题不可为空" && error.message(in: "en") == error.message)
        let a = try store.articles.create(title: "t", content: "c")
        let unknown = try #require(throws: NotesError.self) { try store.articles.update(a.id, content: "x", expectedRevision: 5) }
        #expect(unknown.kind == .validation && unknown.code == "revision_unknown")
        #expect(NotesError(.busy, "locked").code == "busy" && NotesError(.validation, "bad", field: "limit").code == "limit_invalid")
    }

    @Test("every committed write reaches the feed and the subscribers")
    func changeFeed() throws {
        let store = try Store.memory()
        let received = Box()
        let token = try store.subscribe { changes in received.append(changes.map(\.operation)) }
        let a = try store.articles.create(title: "t", content: "c")
        _ = try store.articles.update(a.id, content: "d")
        try store.articles.delete(a.id)
        store.unsubscribe(token)
        #expect(received.value == [.create, .update, .delete])
        #expect(try store.changes().map(\.seq) == [1, 2, 3])
    }

    @Test("a closed store refuses every call")
    func closed() throws {
        let store = try Store.memory()
        store.close()
        store.close()
        let error = try #require(throws: NotesError.self) { try store.articles.count() }
        #expect(error.kind == .closed)
    }
}

final class Box: @unchecked Sendable {
    private(set) var value: [Change.Operation] = []
    func append(_ ops: [Change.Operation]) { value += ops }
}
