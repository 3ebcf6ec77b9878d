/// Which field of an article a search looks in.
public enum SearchField: String, Sendable, CaseIterable {
    /// The title or the content (a hit has a match in at least one of them).
    case any
    case title
    case content
}

/// Where a query matched in one record: for each field searched, the code-point ranges of every
/// non-overlapping match, leftmost first, as offsets into the text as stored. A field that was
/// not searched is nil; a field that was searched without a match is empty.
public struct MatchSpans: Equatable, Sendable {
    public var title: [Range<Int>]?
    public var content: [Range<Int>]?

    public init(title: [Range<Int>]? = nil, content: [Range<Int>]? = nil) {
        self.title = title
        self.content = content
    }
}

/// One search result: the record (an ``Article`` or a ``Message``) and where the query matched.
public struct SearchHit<Record: Sendable>: Sendable {
    public var record: Record
    public var spans: MatchSpans

    public init(record: Record, spans: MatchSpans) {
        self.record = record
        self.spans = spans
    }
}

extension SearchHit: Equatable where Record: Equatable {}

/// A search query, checked and turned into search keys (see ``SearchText``).
struct SearchQuery {
    /// The longest query accepted, in code points.
    static let maxLength = 10_000

    /// The key text is matched with: NFC, case-folded unless the search is case-sensitive.
    let key: [UInt32]
    /// The case-folded key, whose grams are looked up in the index.
    let foldedKey: [UInt32]
    let caseSensitive: Bool

    init(_ text: String, caseSensitive: Bool) throws {
        if text.utf8.contains(0) {
            throw NotesError.validation("query", "the query contains a NUL character", code: "query_contains_nul")
        }
        if text.utf8.count > Self.maxLength, text.unicodeScalars.count > Self.maxLength {
            throw NotesError.validation("query", "the query is too long: \(text.unicodeScalars.count) characters, the limit is \(Self.maxLength)", code: "query_too_long")
        }
        self.caseSensitive = caseSensitive
        foldedKey = SearchText.key(of: text, caseSensitive: false)
        key = caseSensitive ? SearchText.key(of: text, caseSensitive: true) : foldedKey
        grams = Self.grams(of: foldedKey)
    }

    var isEmpty: Bool { key.isEmpty }

    /// The cursor kind of this search's pages: `list`, then the search's other settings and a
    /// digest of the query's key (FNV-1a), so a cursor is refused by any other query, field, case
    /// mode or order (queries with the same key, like `Apple` and `apple` without case, share it).
    func cursorKind(_ list: String, _ settings: String...) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for v in key {
            for shift in stride(from: 0, to: 32, by: 8) {
                h ^= UInt64((v >> UInt32(shift)) & 0xFF)
                h = h &* 0x100_0000_01b3
            }
        }
        return ([list] + settings + [caseSensitive ? "cs" : "ci", String(h, radix: 36)]).joined(separator: "~")
    }

    /// The most grams a query looks up: any subset of a query's grams still narrows to a superset
    /// of the matches, and a long query is rare enough with a few dozen of them.
    static let maxGrams = 64

    /// The distinct grams of the folded key (two or more code points), at most `maxGrams` of
    /// them, spread over the query.
    let grams: [UInt64]

    static func grams(of key: [UInt32]) -> [UInt64] {
        guard key.count >= 2 else { return [] }
        var seen = Set<UInt64>()
        var out: [UInt64] = []
        let count = key.count - 1
        let step = max(1, count / maxGrams)
        for j in stride(from: 0, to: count, by: step) where out.count < maxGrams {
            let gram = Gram.make(key[j], UInt64(key[j + 1]), field: 0)
            if seen.insert(gram).inserted { out.append(gram) }
        }
        return out
    }
}
