import Testing
@testable import NotesKit

@Suite("Ranges, order and bulk edits in the core")
struct AnalysisTests {
    static let t0: Int64 = 1_772_323_200_000  // 2026-03-01
    static let hour: Int64 = 3_600_000

    func notes(_ store: Store, _ n: Int = 30) throws -> [Article] {
        try store.articles.createMany((0..<n).map {
            NewArticle(title: "t\($0)", content: "c\($0)", createdAt: Timestamp(milliseconds: Self.t0 + Int64($0) * Self.hour))
        })
    }

    func range(_ from: Int64, _ to: Int64) -> TimeRange {
        TimeRange(since: Timestamp(milliseconds: Self.t0 + from * Self.hour), until: Timestamp(milliseconds: Self.t0 + to * Self.hour))
    }

    @Test("one keyset walk pages a range in either order without gaps, and its cursors keep order and range")
    func rangeAndOrder() throws {
        let store = try Store.memory()
        let made = try notes(store)
        for ascending in [false, true] {
            var seen: [Int64] = [], cursor: String? = nil
            repeat {
                let page = try store.articles.list(limit: 4, after: cursor, range: range(5, 17), ascending: ascending)
                seen += page.items.map(\.id)
                cursor = page.nextCursor
            } while cursor != nil
            let expected = made[5..<17].map(\.id)
            #expect(seen == (ascending ? expected : expected.reversed()))
        }
        let cursor = try #require(try store.articles.list(limit: 2, range: range(5, 17)).nextCursor)
        let error = try #require(throws: NotesError.self) { try store.articles.list(after: cursor, range: range(5, 18)) }
        #expect(error.code == "cursor_other_range")
        #expect(try store.articles.list(range: range(17, 5)).items.isEmpty)
        #expect(try store.articles.count(range: range(0, 10)) == 10)
    }

    @Test("a search in a range finds what a filter of every hit finds, whatever the plan")
    func searchRange() throws {
        let store = try Store.memory()
        _ = try notes(store)
        let all = try store.articles.search("c1", limit: 1_000).items.map(\.record)
        let inRange = all.filter { range(3, 15).contains($0.createdAt) }.map(\.id)
        #expect(try store.articles.search("c1", limit: 1_000, range: range(3, 15)).items.map(\.record.id) == inRange)
        #expect(try store.articles.search("c1", limit: 1_000, range: range(3, 15), ascending: true).items.map(\.record.id) == inRange.reversed())
    }

    @Test("bulk edits are all or nothing")
    func bulk() throws {
        let store = try Store.memory()
        let made = try notes(store, 5)
        let duplicate = try #require(throws: NotesError.self) {
            try store.articles.updateMany([ArticleUpdate(id: made[0].id, title: "a"), ArticleUpdate(id: made[0].id, title: "b")])
        }
        #expect(duplicate.code == "duplicate_id" && duplicate.line == 1)
        _ = try store.articles.update(made[2].id, content: "changed")
        let stale = try #require(throws: NotesError.self) {
            try store.articles.updateMany([ArticleUpdate(id: made[1].id, title: "new"), ArticleUpdate(id: made[2].id, title: "x", expectedRevision: 1)])
        }
        #expect(stale.kind == .conflict && stale.line == 1)
        #expect(try store.articles.get(made[1].id).title == "t1")
        let missing = try #require(throws: NotesError.self) { try store.articles.deleteMany([made[3].id, 999]) }
        #expect(missing.kind == .notFound && missing.message.contains("999"))
        #expect(try store.articles.count() == 5)
        #expect(try store.articles.deleteMany([made[3].id, made[3].id, made[4].id]) == 2)
        #expect(try store.articles.getMany([made[4].id, made[0].id], missing: .skip).map(\.id) == [made[0].id])
    }
}
