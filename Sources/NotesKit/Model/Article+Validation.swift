#if canImport(Glibc)
import Glibc
#endif

/// The rules every saved article (and every chat message) obeys.
public enum TextRules {
    /// The longest title accepted, in Unicode code points.
    public static let maxTitleLength = 1_000
    /// The longest article content or message text accepted, in Unicode code points.
    public static let maxContentLength = 1_000_000

    /// True when `text` has nothing but white space (or nothing at all).
    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    }

    /// Refuses text with a NUL character (no C string or export format can carry it) or longer
    /// than `limit` code points, naming `field`.
    /// `code` names the value in the error's code (`<code>_contains_nul`, `<code>_too_long`).
    static func checkText(_ text: String, field: String, limit: Int, code: String? = nil) throws {
        let code = code ?? field
        var text = text
        let hasNul = text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
        if hasNul {
            throw NotesError.validation(field, "\(field) contains a NUL character", code: "\(code)_contains_nul")
        }
        // UTF-8 length bounds the scalar count from above: most texts pass without counting.
        guard text.utf8.count > limit else { return }
        let length = text.unicodeScalars.count
        if length > limit {
            throw NotesError.validation(field, "\(field) is too long: \(length) characters, the limit is \(limit)", code: "\(code)_too_long")
        }
    }

    /// Refuses an empty, whitespace-only or over-long value for a field that must have text.
    /// The error's code is `<code>_empty` (`title_empty`, `content_empty`, `message_empty`).
    static func checkRequired(_ text: String, field: String, limit: Int, code: String? = nil) throws {
        if isBlank(text) {
            throw NotesError.validation(field, "\(field) must not be empty or only white space", code: "\(code ?? field)_empty")
        }
        try checkText(text, field: field, limit: limit, code: code)
    }
}

extension Article {
    /// Checks a title and content before they are saved: both non-blank and within the limits.
    ///
    /// Throws a `.validation` error naming the first field at fault (title before content).
    public static func validate(title: String, content: String) throws {
        try TextRules.checkRequired(title, field: "title", limit: TextRules.maxTitleLength)
        try TextRules.checkRequired(content, field: "content", limit: TextRules.maxContentLength)
    }
}
