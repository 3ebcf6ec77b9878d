/// A short excerpt of a text around its first match, for a list of search results.
///
/// Computed here, in the core, because Swift's `Character` *is* the extended grapheme cluster of
/// Unicode's text segmentation (UAX #29, in the standard library, no ICU): emoji ZWJ sequences,
/// flags, a letter with its combining marks, Hangul syllables stay whole. (Python's standard
/// library has no grapheme segmentation.)
///
/// - `width` counts characters (grapheme clusters) of the text shown; the "…" put where the text
///   was cut, at either end, comes on top of it. `width == 0` is the empty snippet (no text, no
///   spans); a negative width is `.validation`.
/// - The first non-empty match is centred: the window holds the match and as much text on each
///   side as `width` leaves, shifted when it meets an end of the text. A match wider than `width`
///   shows its first `width` characters and "…" after them.
/// - Line breaks and tabs in the window become spaces (one for one, so the spans keep their
///   meaning), so a snippet is always one line.
/// - `spans` are every match inside the window, cut to it, as code-point offsets into `text`
///   (the "…" included), like the search's own spans.
public struct Snippet: Equatable, Sendable {
    public var text: String
    public var spans: [Range<Int>]

    public init(text: String, spans: [Range<Int>]) {
        self.text = text
        self.spans = spans
    }

    public static let ellipsis = "…"

    /// The snippet of `text` around the first of `matches` (code-point ranges into `text`, as a
    /// search hit gives them). O(offset of the first match + width), plus O(n) to check the ranges.
    public init(of text: String, matches: [Range<Int>], width: Int) throws {
        guard width >= 0 else {
            throw NotesError(.validation, "width must be 0 or more characters, got \(width)", field: "width")
        }
        let scalars = text.unicodeScalars
        let count = scalars.count
        for range in matches where range.lowerBound < 0 || range.upperBound > count {
            throw NotesError(.invalidArgument, "span \(range.lowerBound)..<\(range.upperBound) is outside the text (\(count) code points)", field: "spans")
        }
        guard width > 0 else {
            self.init(text: "", spans: [])
            return
        }
        let ranges = matches.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        var start = text.startIndex, end = text.startIndex  // the first match, widened to whole characters
        var startOffset = 0                                  // its start, in code points
        if let first = ranges.first {
            let s = scalars.index(scalars.startIndex, offsetBy: first.lowerBound)
            let e = scalars.index(s, offsetBy: first.count)
            start = Self.roundDown(text, s)
            end = Self.roundDown(text, e)
            if end < e { end = text.index(after: end) }
            startOffset = first.lowerBound - scalars.distance(from: start, to: s)
        }
        // The window: the match and what is left of `width` around it, shifted at the ends.
        let matched = text.distance(from: start, to: end)
        var lower = start, upper = end
        if matched >= width {
            upper = text.index(start, offsetBy: width)
        } else {
            var left = (width - matched) / 2, right = width - matched - left
            while left > 0, lower > text.startIndex { lower = text.index(before: lower); left -= 1 }
            right += left
            while right > 0, upper < text.endIndex { upper = text.index(after: upper); right -= 1 }
            while right > 0, lower > text.startIndex { lower = text.index(before: lower); right -= 1 }
        }
        let lowerOffset = startOffset - scalars.distance(from: lower, to: start)
        let windowCount = scalars.distance(from: lower, to: upper)
        let lead = lower > text.startIndex ? 1 : 0
        var out = String.UnicodeScalarView()
        if lead == 1 { out.append(contentsOf: Self.ellipsis.unicodeScalars) }
        for scalar in scalars[lower..<upper] {
            out.append(Self.isLineBreakOrTab(scalar) ? " " : scalar)
        }
        if upper < text.endIndex { out.append(contentsOf: Self.ellipsis.unicodeScalars) }
        var spans: [Range<Int>] = []
        for range in ranges {
            let s = max(range.lowerBound, lowerOffset), e = min(range.upperBound, lowerOffset + windowCount)
            if s < e { spans.append((s - lowerOffset + lead)..<(e - lowerOffset + lead)) }
        }
        self.init(text: String(out), spans: spans)
    }

    /// The start of the character (grapheme cluster) that holds the code point at `i` (`i` itself
    /// when it starts one, or is the end).
    private static func roundDown(_ text: String, _ i: String.Index) -> String.Index {
        guard i < text.endIndex else { return i }
        // Character-view calls round an index down to its character's start (Swift 5.7+): the
        // character after it, then back, is the character holding `i`.
        return text.index(before: text.index(after: i))
    }

    private static func isLineBreakOrTab(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }
}
