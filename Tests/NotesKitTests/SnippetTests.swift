import Testing
@testable import NotesKit

@Suite("Snippets and the search over both kinds")
struct SnippetTests {
    @Test("a snippet keeps emoji sequences, flags and combining marks whole and centres the first match")
    func graphemeClusters() throws {
        let family = "👩\u{200D}👩\u{200D}👧", flag = "🇯🇵", accented = "e\u{301}\u{300}"
        let text = "ab" + family + "cd" + flag + accented + "xyz"
        let scalars = Array(text.unicodeScalars)
        let start = scalars.firstIndex(of: "d")!
        let snippet = try Snippet(of: text, matches: [start..<(start + 1)], width: 3)
        #expect(snippet.text == "…c" + "d" + flag + "…")
        #expect(snippet.spans == [2..<3])
        let wide = try Snippet(of: text, matches: [start..<(start + 1)], width: 5)
        #expect(wide.text == "…" + family + "cd" + flag + accented + "…")
        // A match inside the family's sequence: the sequence is shown whole.
        let inside = try Snippet(of: text, matches: [2..<3], width: 1)
        #expect(inside.text == "…" + family + "…" && inside.spans == [1..<2])
    }

    @Test("width 0 is the empty snippet, a negative width an error, a narrow one shows the match's start")
    func widths() throws {
        #expect(try Snippet(of: "hello world", matches: [6..<11], width: 0) == Snippet(text: "", spans: []))
        #expect(throws: NotesError.self) { try Snippet(of: "x", matches: [], width: -1) }
        #expect(throws: NotesError.self) { try Snippet(of: "x", matches: [0..<5], width: 3) }
        #expect(try Snippet(of: "hello world", matches: [6..<11], width: 2) == Snippet(text: "…wo…", spans: [1..<3]))
        #expect(try Snippet(of: "a\nb\tc", matches: [], width: 10) == Snippet(text: "a b c", spans: []))
    }

    @Test("one search over both kinds pages by time across kinds, articles first within a millisecond")
    func searchAll() throws {
        let store = try Store.memory()
        let at = Timestamp(milliseconds: 1_000_000)
        let articles = try store.articles.createMany((0..<3).map { _ in NewArticle(title: "t", content: "find me", createdAt: at) })
        let conversation = try store.conversations.create(title: "c")
        let messages = try store.messages.insertMany((0..<3).map { _ in NewMessage(content: "find me", fromMe: true, sentAt: at) },
                                                      in: conversation.id)
        var seen: [Int64] = [], cursor: String? = nil
        repeat {
            let page = try store.search("FIND", limit: 2, after: cursor)
            for hit in page.items {
                switch hit {
                case .article(let a): seen.append(a.record.id)
                case .message(let m): seen.append(-m.record.id)
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == articles.map(\.id).reversed() + messages.map { -$0.id }.reversed())
        #expect(try store.search("find", range: TimeRange(until: at)).items.isEmpty)
        #expect(try store.search("find", range: TimeRange(since: at, until: Timestamp(milliseconds: at.milliseconds + 1))).items.count == 6)
    }
}
