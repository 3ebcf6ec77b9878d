/// The server's share of a search on PostgreSQL (``StoreSQL/SearchFilter``): a row crosses the
/// wire only when its text may hold the query, so a frequent query's page costs the rows it shows,
/// not the rows the walk reads.
///
/// Exact for *plain* text — text whose code points are all in ``plain``: each is assigned, starts
/// a normalization segment and is NFC as it is (so the text is its own NFC), and each folds to
/// itself except ASCII `A`–`Z` (see ``SearchText``). A plain text's search key is then the text
/// with ASCII letters lowered, which is what `lower(text COLLATE "C")` gives (the C collation lowers
/// ASCII only, in any database locale): the query's key is a substring of it exactly when the
/// search matches. Any other text (a combining mark, a letter with a case folding, a compatibility
/// ideograph, …) is sent as it is, and the search engine's own check decides, as it does for every
/// row it gets. The plain set covers ASCII, general punctuation and symbols, CJK punctuation, kana,
/// the CJK Unified Ideographs, fullwidth punctuation and emoji: chat text in those scripts is
/// filtered entirely on the server.
///
/// Whether a text is plain is a stored generated column beside it (`<column>_plain`, migration
/// `0003_plain_text`): the server computes it once per write, not once per search. Unicode's
/// stability policies keep an assigned code point's normalization and case folding as they are,
/// so a column computed by an older library stays true for a newer one.
enum PostgresSearchFilter {
    static let filter = StoreSQL.SearchFilter { columns, caseSensitive in
        columns.map { column in
            caseSensitive ? "strpos(\(column), ?) > 0" : "strpos(lower(\(column) COLLATE \"C\"), ?) > 0"
        }.joined(separator: " OR ") + " OR " + columns.map { "NOT \($0)_plain" }.joined(separator: " OR ")
    }

    /// The expression of column `<column>_plain`: whether the text holds plain code points only.
    static func isPlain(_ column: String) -> String { "\(column) COLLATE \"C\" !~ '\(notPlainPattern)'" }

    /// The blocks searched for plain code points (ASCII is plain whole).
    static let blocks: [ClosedRange<UInt32>] = [
        0x2000...0x2BFF,    // general punctuation, symbols, arrows, dingbats
        0x3000...0x30FF,    // CJK symbols and punctuation, hiragana, katakana
        0x4E00...0x9FFF,    // CJK Unified Ideographs
        0xFE00...0xFE0F,    // variation selectors (emoji presentation)
        0xFF00...0xFFEF,    // halfwidth and fullwidth forms
        0x1F000...0x1FAFF,  // emoji and pictographs
    ]

    /// The plain code points above ASCII, as ranges: in ``blocks``, assigned, starting a
    /// normalization segment, NFC and folding to themselves.
    static let plain: [ClosedRange<UInt32>] = {
        var runs: [ClosedRange<UInt32>] = []
        for block in blocks {
            for v in block {
                let info = SearchText.computeInfo(v)
                guard let scalar = Unicode.Scalar(v), scalar.properties.generalCategory != .unassigned,
                      info & SearchText.boundaryBit != 0, info & SearchText.scalarMask == v else { continue }
                if let last = runs.last, last.upperBound + 1 == v {
                    runs[runs.count - 1] = last.lowerBound...v
                } else {
                    runs.append(v...v)
                }
            }
        }
        return runs
    }()

    /// A regular expression (PostgreSQL's, its `\u`/`\U` escapes) that finds a code point that is
    /// not plain.
    static let notPlainPattern: String = {
        func escape(_ v: UInt32) -> String {
            let hex = String(v, radix: 16)
            return v > 0xFFFF ? "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
                : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        let ranges = ([0x01...0x7F] + plain).map { $0.count == 1 ? escape($0.lowerBound) : escape($0.lowerBound) + "-" + escape($0.upperBound) }
        return "[^" + ranges.joined() + "]"
    }()
}
