/// The YAML front matter of a Markdown file: the subset NotesKit writes, and what it needs to read
/// files from Joplin and similar apps.
///
/// Written:
/// ```
/// ---
/// title: "A title, as a YAML double-quoted string"
/// uid: 0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e
/// updated: 2026-11-29T15:28:06.123Z
/// created: 2026-11-29T15:28:06.123Z
/// revision: 2
/// ---
///
/// The body, exactly the article's content.
/// ```
/// (Joplin's "Markdown + Front Matter" keys `title`, `created`, `updated`, plus `uid` and
/// `revision`; Joplin leaves one empty line between the closing `---` and the body.)
///
/// Read: `key: value` lines between a first line `---` and a closing `---` (or `...`); keys
/// are matched without regard to case. Values are plain, `'single'` or `"double"`-quoted
/// scalars (YAML escapes). Keys NotesKit does not know (tags, author, source, …) are ignored,
/// with any indented or `- item` lines under them. One empty line after the closing fence is
/// dropped, as Joplin does.
enum FrontMatter {
    /// The keys NotesKit reads.
    static let keys = ["title", "uid", "created", "updated", "revision"]

    struct Parsed {
        /// Known keys (lower-case) and their values; a key given with no value is absent.
        var values: [String: String] = [:]
        /// Where the body starts in the file's bytes, and on which 1-based line.
        var bodyOffset = 0
        var bodyLine = 1
        var hasFrontMatter = false
        /// The 1-based line of each known key, for errors.
        var lines: [String: Int] = [:]
    }

    // MARK: - Writing

    static func write(_ a: Article, into w: inout JSONWriter) {
        w.raw("---\ntitle: "); w.string(a.title)
        w.raw("\nuid: "); w.bytes.append(contentsOf: a.uid.utf8)
        w.raw("\nupdated: "); a.updatedAt.writeISO8601(into: &w.bytes)
        w.raw("\ncreated: "); a.createdAt.writeISO8601(into: &w.bytes)
        w.raw("\nrevision: "); w.int(a.revision)
        w.raw("\n---\n\n")
    }

    // MARK: - Reading

    /// Splits `bytes` (valid UTF-8) into front matter and body. A file without a first `---` line
    /// has no front matter: it is all body.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Parsed {
        var parsed = Parsed()
        var lines = LineCursor(bytes)
        guard let first = lines.next(), trimmed(first.text) == "---" else { return parsed }
        parsed.hasFrontMatter = true
        var currentKeyIsOurs = false
        while true {
            guard let line = lines.next() else {
                throw lineError(nil, "the front matter that starts on line 1 is never closed with ---", 1)
            }
            let text = line.text
            let t = trimmed(text)
            if t == "---" || t == "..." {
                parsed.bodyOffset = lines.offset
                parsed.bodyLine = line.number + 1
                // Joplin writes one empty line between the fence and the body; drop it.
                var peek = lines
                if let blank = peek.next(), trimmed(blank.text).isEmpty, blank.endedWithNewline {
                    parsed.bodyOffset = peek.offset
                    parsed.bodyLine = blank.number + 1
                }
                return parsed
            }
            // Bytes, not Characters: a combining mark would join the character before it.
            if t.isEmpty || t.utf8.first == 35 { continue }
            if text.utf8.first == 32 || text.utf8.first == 9 || t.utf8.starts(with: "- ".utf8) || t == "-" {
                // A nested value under the key before: fine for keys we ignore.
                if currentKeyIsOurs {
                    throw lineError(nil, "a front matter value NotesKit reads must be on one line", line.number)
                }
                continue
            }
            guard let colon = keyEnd(text) else {
                throw lineError(nil, "front matter line is not \"key: value\": \"\(t.prefix(40))\"", line.number)
            }
            let key = String(text[..<colon]).trimmingSpaces().lowercased()
            let rawValue = String(text[text.index(after: colon)...]).trimmingSpaces()
            currentKeyIsOurs = keys.contains(key)
            guard currentKeyIsOurs else { continue }
            guard parsed.lines[key] == nil else { throw lineError(key, "\(key) is given twice in the front matter", line.number) }
            parsed.lines[key] = line.number
            do {
                if let value = try scalar(rawValue) { parsed.values[key] = value }
            } catch let error as NotesError {
                throw lineError(key, error.message, line.number)
            }
        }
    }

    /// The colon ending a key: followed by a space, a tab or the end of the line.
    static func keyEnd(_ text: Substring) -> Substring.Index? {
        let u = text.utf8
        var i = u.startIndex
        while i < u.endIndex {
            if u[i] == 58 {
                let next = u.index(after: i)
                if next == u.endIndex || u[next] == 32 || u[next] == 9 { return i }
            }
            i = u.index(after: i)
        }
        return nil
    }

    /// A scalar value: nil for an empty one (or `~`, `null`).
    static func scalar(_ raw: String) throws -> String? {
        if raw.isEmpty || raw == "~" || raw == "null" { return nil }
        let first = raw.unicodeScalars.first
        if first == "\"" { return try doubleQuoted(raw) }
        if first == "'" { return try singleQuoted(raw) }
        if first == "|" || first == ">" {
            throw formatError(nil, "block scalars (| and >) are not supported for this key; write the value on one line")
        }
        // A plain scalar ends before a comment (" #").
        let scalars = Array(raw.unicodeScalars)
        for i in scalars.indices.dropFirst() where scalars[i] == "#" && (scalars[i - 1] == " " || scalars[i - 1] == "\t") {
            return String(String.UnicodeScalarView(scalars[..<i])).trimmingSpaces()
        }
        return raw
    }

    static func singleQuoted(_ raw: String) throws -> String {
        var out = ""
        var chars = raw.unicodeScalars.dropFirst()
        while let c = chars.first {
            chars = chars.dropFirst()
            if c == "'" {
                if chars.first == "'" { out.unicodeScalars.append("'"); chars = chars.dropFirst(); continue }
                try rest(chars)
                return out
            }
            out.unicodeScalars.append(c)
        }
        throw formatError(nil, "the single-quoted value is not closed")
    }

    static func doubleQuoted(_ raw: String) throws -> String {
        var out = ""
        var chars = raw.unicodeScalars.dropFirst()
        func code(_ count: Int) throws -> UInt32 {
            let digits = String(String.UnicodeScalarView(chars.prefix(count)))
            chars = chars.dropFirst(count)
            guard digits.unicodeScalars.count == count, let v = UInt32(digits, radix: 16) else {
                throw formatError(nil, "invalid \\x, \\u or \\U escape in a double-quoted value")
            }
            return v
        }
        func scalar(_ v: UInt32) throws -> Unicode.Scalar {
            guard let s = Unicode.Scalar(v) else { throw formatError(nil, "invalid \\u escape in a double-quoted value") }
            return s
        }
        while let c = chars.first {
            chars = chars.dropFirst()
            if c == "\"" {
                try rest(chars)
                return out
            }
            guard c == "\\" else { out.unicodeScalars.append(c); continue }
            guard let e = chars.first else { break }
            chars = chars.dropFirst()
            if let single = FrontMatter.escapes[e] {
                out.unicodeScalars.append(single)
                continue
            }
            switch e {
            case "x": out.unicodeScalars.append(try scalar(try code(2)))
            case "u":
                var v = try code(4)
                // A JSON-style surrogate pair (\uD83D\uDE00) is one character.
                if (0xD800...0xDBFF).contains(v), chars.starts(with: "\\u".unicodeScalars) {
                    chars = chars.dropFirst(2)
                    let low = try code(4)
                    guard (0xDC00...0xDFFF).contains(low) else { throw formatError(nil, "unpaired surrogate in a double-quoted value") }
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                out.unicodeScalars.append(try scalar(v))
            case "U": out.unicodeScalars.append(try scalar(try code(8)))
            default: throw formatError(nil, "unknown escape \\\(e) in a double-quoted value")
            }
        }
        throw formatError(nil, "the double-quoted value is not closed")
    }

    /// YAML's one-character escapes in a double-quoted value, and what each stands for.
    static let escapes: [Unicode.Scalar: Unicode.Scalar] = [
        "\"": "\"", "\\": "\\", "/": "/", "n": "\n", "t": "\t", "\t": "\t", "r": "\r", "b": "\u{08}", "f": "\u{0C}",
        "v": "\u{0B}", "a": "\u{07}", "e": "\u{1B}", "0": "\u{00}", " ": " ", "N": "\u{85}", "_": "\u{A0}",
        "L": "\u{2028}", "P": "\u{2029}",
    ]

    /// After a closing quote only a comment may follow.
    private static func rest(_ chars: Substring.UnicodeScalarView) throws {
        let tail = String(String.UnicodeScalarView(chars)).trimmingSpaces()
        guard tail.isEmpty || tail.hasPrefix("#") else {
            throw formatError(nil, "text after the closing quote: \"\(tail.prefix(20))\"")
        }
    }

    static func trimmed(_ s: Substring) -> String { String(s).trimmingSpaces() }

    static func lineError(_ field: String?, _ message: String, _ line: Int) -> NotesError {
        NotesError(.format, message, field: field, line: line)
    }
}

/// Lines of a UTF-8 buffer, with their 1-based numbers and the offset after each.
struct LineCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var offset = 0
    private(set) var number = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    struct Line {
        /// The text without its line end (LF or CRLF).
        var text: Substring
        var number: Int
        var endedWithNewline: Bool
    }

    mutating func next() -> Line? {
        guard offset < bytes.count else { return nil }
        var end = offset
        while end < bytes.count, bytes[end] != 10 { end += 1 }
        let newline = end < bytes.count
        var textEnd = end
        if textEnd > offset, bytes[textEnd - 1] == 13 { textEnd -= 1 }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<textEnd]), as: UTF8.self)
        offset = newline ? end + 1 : end
        number += 1
        return Line(text: Substring(text), number: number, endedWithNewline: newline)
    }
}
