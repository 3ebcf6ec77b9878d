import Testing
@testable import NotesKit

@Suite("Search in the core")
struct SearchTests {
    /// Every gram of an index with its postings, read through the index's own reading code.
    func dump(_ store: Store) throws -> [UInt64: [Int64]] {
        try store.read { db in
            var out: [UInt64: [Int64]] = [:]
            for (gram, df) in try SearchIndex.articles.grams(db, in: 0..<Int64.max) {
                let ids = try SearchIndex.articles.postings(db, gram)
                #expect(Int64(ids.count) == df, "df of gram \(gram)")
                #expect(ids == ids.sorted() && Set(ids).count == ids.count, "postings of gram \(gram) are ascending")
                out[gram] = ids
            }
            return out
        }
    }

    @Test("after random creates, updates and deletes, the index with its pending set folded in equals a fresh rebuild")
    func indexMatchesRebuild() throws {
        let store = try Store.memory()
        var rng = SplitMix(seed: 7)
        let alphabet = Array("天气aB e\u{301}é")
        func text(_ most: Int) -> String { "x" + String((0..<rng.next(most)).map { _ in alphabet[rng.next(alphabet.count - 1)] }) }
        var made = try store.articles.createMany((0..<2500).map { _ in NewArticle(title: text(5), content: text(90)) })
        made += try (0..<30).map { _ in try store.articles.create(title: text(5), content: text(90)) }
        for _ in 0..<150 {
            let a = made[rng.next(made.count - 1)]
            _ = try? store.articles.update(a.id, content: text(90))
        }
        for _ in 0..<150 {
            let a = made[rng.next(made.count - 1)]
            try? store.articles.delete(a.id)
        }
        try store.foldSearchIndex()
        #expect(try store.read { try SearchIndex.articles.pendingState($0).count } == 0)
        let maintained = try dump(store)
        try store.reindex()
        let rebuilt = try dump(store)
        #expect(maintained == rebuilt)
        let blocks = try store.read { try Store.scalar($0, "SELECT count(*) FROM article_blocks") }
        #expect(blocks > 0, "the test is big enough for posting lists to span blocks")
    }

    @Test("a query's key is NFC, then simple case folding")
    func keys() {
        #expect(SearchText.key(of: "Straße", caseSensitive: false) == "straße".unicodeScalars.map(\.value))
        #expect(SearchText.key(of: "ẞ", caseSensitive: false) == [0xDF])
        #expect(SearchText.key(of: "e\u{301}", caseSensitive: true) == [0xE9])
        #expect(SearchText.key(of: "\u{212A}", caseSensitive: false) == [0x6B])
        #expect(SearchText.key(of: "İ", caseSensitive: false) == [0x130])
        #expect(SearchText.key(of: "\u{1100}\u{1161}", caseSensitive: false) == [0xAC00])
    }

    @Test("no code point beyond the tabulated planes changes when case folded")
    func foldingTableCoversEveryCasedLetter() {
        for v in UInt32(SearchText.tableSize)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue }
            if scalar.properties.changesWhenCaseFolded { Issue.record("U+\(String(v, radix: 16)) folds"); return }
        }
    }

    @Test("the shortcuts for ASCII and CJK agree with the Unicode data")
    func infoShortcuts() {
        SearchText.table.withUnsafeBufferPointer { table in
            for v in Array(0..<0x80) + Array(0x4E00...0x9FFF) as [UInt32] {
                #expect(SearchText.info(v, table) == SearchText.computeInfo(v), "U+\(String(v, radix: 16))")
            }
        }
    }

    @Test("a decomposed é matched as é spans both its code points in the stored text")
    func spansMapBack() throws {
        let store = try Store.memory()
        _ = try store.articles.create(title: "t", content: "xe\u{301}e\u{301}y")
        let hit = try #require(try store.articles.search("é").items.first)
        #expect(hit.spans.content == [1..<3, 3..<5])
        #expect(hit.spans.title == [])
    }

    @Test("next to code points NFC replaces, a span covers just what matched", arguments: [
        ("10 \u{2126} ab\u{F900}cd", " ", [2..<3, 4..<5]),
        ("10 \u{2126} ab\u{F900}cd", "b", [6..<7]),
        ("a\u{301}\u{301}\u{301}b", "\u{301}", [2..<3, 3..<4]),
    ])
    func exactSpans(text: String, query: String, expected: [Range<Int>]) throws {
        let store = try Store.memory()
        _ = try store.articles.create(title: "t", content: text)
        let hit = try #require(try store.articles.search(query, field: .content).items.first)
        #expect(hit.spans.content == expected)
    }

    @Test("a search cursor only continues the search it came from")
    func cursorsNameTheirSearch() throws {
        let store = try Store.memory()
        _ = try store.articles.createMany((0..<4).map { _ in NewArticle(title: "apple banana", content: "c") })
        let cursor = try #require(try store.articles.search("banana", limit: 1).nextCursor)
        #expect(try store.articles.search("Banana", limit: 1, after: cursor).items.count == 1)
        for refused in [{ try store.articles.search("apple", after: cursor) },
                        { try store.articles.search("banana", field: .title, after: cursor) },
                        { try store.articles.search("banana", caseSensitive: true, after: cursor) }] {
            let error = try #require(throws: NotesError.self) { _ = try refused() }
            #expect(error.code == "cursor_other_search" && error.field == "cursor")
        }
    }

    @Test("matching finds non-overlapping matches, leftmost first, in linear time")
    func patternMatching() {
        let text = Array(repeating: UInt32(97), count: 100_000)
        var out: [Range<Int>] = []
        let hostile = Pattern(Array(repeating: 97, count: 5_000) + [98])
        #expect(text.withUnsafeBufferPointer { hostile.matches(in: $0, into: &out) } == false)
        let aa = Pattern([97, 97])
        #expect(Array("aaaaa".unicodeScalars.map(\.value)).withUnsafeBufferPointer { aa.matches(in: $0, into: &out) })
        #expect(out == [0..<2, 2..<4])
    }

    @Test("a key matched as its UTF-8 (its literal form) finds what the code-point matcher finds")
    func literalMatching() {
        let texts = ["", "苇", "芦苇苇苇 the 苇", "ab苇c", "，。苇！😀苇", "x" + String(repeating: "今天天气真好", count: 9) + "好",
                     "Zyxel量子 12345 量子纠缠", "e\u{301}苇", "苇\u{FA10}苇", "苇苇\u{0301}", "👨‍👩‍👧苇👍🏽", "abcdefgh苇ijklmnop苇",
                     // Hostile to the ASCII letters matched in either case:
                     "The THE tHe the thE", "TheThehe", "Thé e\u{301} E\u{301} é É", "ＴＨＥ ｔｈｅ Ｅ ｅ", "ſ S s ß ẞ SS",
                     "İ ı I i i\u{307}", "K \u{212A} k", "е Е e", "ǅ ǆ Ǆ", "eeeeeeeeeeeeeeeeeEEEEEEEEEEEEE", "@[`{ `@ {[",
                     "ZYXEL量子 zyxel量子 ZyXeL量子", "今天天气真好 \u{F9E3}天天气真好", "0123456789abcdefghijklmnoTHE"]
        let queries = ["苇", "苇苇", "今天天气真好", "天气", "量子", "12", "，", "😀", "e", "The", "the", "hE", "s", "ss", "ß", "k", "i",
                       "İ", "ı", "é", "Zyxel量子", "@", "[", "`", "{", "ǅ", "ｅ"]
        var checked = 0
        for query in queries {
            for fold in [false, true] {
                let scalars = SearchText.key(of: query, caseSensitive: !fold)
                let literal = Pattern(scalars, fold: fold), general = Pattern(scalars)
                for text in texts {
                    var bytes = Array(text.utf8)
                    bytes.withUnsafeMutableBufferPointer { buffer in
                        let utf8 = UnsafeBufferPointer(buffer)
                        var a: [Range<Int>] = [], b: [Range<Int>] = []
                        let x = literal.matches(utf8: utf8, fold: fold, into: &a)
                        let y = general.matches(utf8: utf8, fold: fold, into: &b)
                        #expect(x == y && a == b, "\(query) (fold \(fold)) in \(text.debugDescription): \(a) against \(b)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked == queries.count * 2 * texts.count)
        func literal(_ query: String, fold: Bool) -> Bool {
            Pattern.literalForm(SearchText.key(of: query, caseSensitive: !fold), fold: fold) != nil
        }
        // Case-sensitive, every key is; folding, the ASCII letters are but `s` (U+017F LONG S folds
        // to it), and `ß` is not (U+1E9E folds to it); the code points only NFC makes (U+212A
        // KELVIN SIGN, U+F9E3 for 泥...) are never in the text the literal form is used on.
        #expect(["The", "s", "ß", "é", "İ", "今天天气真好"].allSatisfy { literal($0, fold: false) })
        #expect(["the", "e", "k", "i", "zyxel量子", "今天天气真好", "苇", "@"].allSatisfy { literal($0, fold: true) })
        #expect(!["s", "ss", "ß", "é", "ǆ", "ｅ"].contains { literal($0, fold: true) })
    }

    @Test("the prefilter never rules out a text whose key contains the query's key")
    func prefilterKeepsMatches() {
        let texts = ["The THE tHe the thE", "TheThehe", "T\u{301}he th\u{308}e tHE\u{301}", "ＴＨＥ ｔｈｅ", "\u{212A}EY key KEY", "ſt ST St",
                     "ASK aſk a\u{212A}s", "Zyxel量子 ZYXEL量子", "今天天气真好 \u{F9E3}天天气真好", "e\u{301} É é", "苇 芦苇", "qUx QUX"]
        let queries = ["The", "the", "HE", "key", "ey", "st", "ask", "zyxel量子", "Zyxel量", "天气", "今天天气真好", "é", "qUx", "e"]
        var kept = 0
        for query in queries {
            for fold in [false, true] {
                let key = SearchText.key(of: query, caseSensitive: !fold)
                let pattern = Pattern(key)
                guard let prefilter = Prefilter.make(for: key, fold: fold) else { continue }
                for text in texts {
                    var out: [Range<Int>] = []
                    let matches = SearchText.key(of: text, caseSensitive: !fold).withUnsafeBufferPointer { pattern.matches(in: $0, into: &out) }
                    let may = Array(text.utf8).withUnsafeBufferPointer { prefilter.mayMatch($0) }
                    #expect(may || !matches, "\(query) (fold \(fold)) in \(text.debugDescription)")
                    if matches { kept += 1 }
                }
            }
        }
        #expect(kept > 20)
        // Folding, a run of ASCII letters is one needle matched in either case, but for `k` and
        // `s` (U+212A KELVIN SIGN and U+017F LONG S fold to them): "The" needs t, h and e together.
        let the = Prefilter.make(for: SearchText.key(of: "The", caseSensitive: false), fold: true)
        #expect(the?.needles == [Array("the".utf8)] && the?.caseless == [0x20, 0x20, 0x20])
        #expect(Array("Tea with Ed".utf8).withUnsafeBufferPointer { the?.mayMatch($0) } == false)
        #expect(Array("ON THE DOT".utf8).withUnsafeBufferPointer { the?.mayMatch($0) } == true)
        let key = Prefilter.make(for: SearchText.key(of: "key", caseSensitive: false), fold: true)
        #expect(key?.needles == [Array("ey".utf8)])
    }

    @Test("a query with a NUL or over 10 000 characters is refused")
    func queryValidation() throws {
        let store = try Store.memory()
        for bad in ["a\u{0}", String(repeating: "字", count: 10_001)] {
            let error = try #require(throws: NotesError.self) { try store.articles.search(bad) }
            #expect(error.kind == .validation && error.field == "query")
        }
    }

    @Test("JSON integers are written digit by digit for every Int64")
    func jsonIntegers() {
        for v: Int64 in [0, 7, -1, 10, 1_000_000, .max, .min] {
            var w = JSONWriter()
            w.int(v)
            #expect(String(decoding: w.bytes, as: UTF8.self) == String(v))
        }
    }

    @Test("blocks cut from ids one at a time are Postings.chunks' blocks, byte for byte")
    func blockCutterMatchesChunks() throws {
        var rng = SplitMix(seed: 11)
        for round in 0..<40 {
            var id = Int64(rng.next(1 << 20))
            var ids: [Int64] = []
            // Dense and sparse runs, and now and then a gap of several varint bytes.
            for _ in 0..<rng.next(round % 4 == 0 ? 30 : 6_000) {
                id += Int64(rng.next(3) == 0 ? 1 + rng.next(1 << (7 * (1 + rng.next(4)))) : 1 + rng.next(2))
                ids.append(id)
            }
            var cutter = BlockCutter()
            for id in ids { cutter.add(id) }
            let cut = cutter.finish()
            var fromBytes = BlockCutter()
            Postings.encode(ids).withUnsafeBytes { fromBytes.add(stored: $0) }
            let chunks = Postings.chunks(ids)
            #expect(cut.map(\.first) == chunks.map { $0.first! }, "round \(round): the blocks' first ids")
            #expect(cut.map(\.bytes) == chunks.map { Postings.encode($0) }, "round \(round): the blocks' bytes")
            #expect(fromBytes.finish().map(\.bytes) == cut.map(\.bytes), "round \(round): cut from the stored bytes")
            // Ids one at a time, then the rest as stored bytes (a tail, then new postings).
            let half = rng.next(ids.count)
            var mixed = BlockCutter()
            for id in ids[..<half] { mixed.add(id) }
            Postings.encode(Array(ids[half...])).withUnsafeBytes { mixed.add(stored: $0) }
            let mixedCut = mixed.finish()
            #expect(mixedCut.map(\.bytes) == cut.map(\.bytes) && mixedCut.map(\.first) == cut.map(\.first),
                    "round \(round): \(half) ids one at a time, then stored bytes")
            #expect(cut.allSatisfy { $0.bytes.count <= Postings.blockBytes })
        }
    }
}

/// A small deterministic generator for the tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ most: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(most + 1))
    }
}
