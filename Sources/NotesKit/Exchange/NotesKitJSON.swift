/// NotesKit JSON: one versioned document holding the whole store, every field, a lossless backup.
///
/// ```json
/// {"format":"noteskit","version":1,"exported_at":"2026-11-29T15:28:06.123Z",
/// "articles":[
/// {"uid":"…","title":"…","content":"…","created_at":"…","updated_at":"…","revision":2}
/// ],
/// "drafts":[
/// {"uid":"…","article_uid":"…"|null,"base_revision":2|null,"title":"…","content":"…","created_at":"…","updated_at":"…"}
/// ],
/// "conversations":[…],
/// "messages":[…]}
/// ```
///
/// One record per line, so line numbers in errors point at records. Reading streams the document:
/// one record is in memory at a time. `format` and `version` must come before the record sections
/// (as written); a section may refer only to records of earlier sections (or already stored ones):
/// a draft's article, a message's conversation.
enum NotesKitJSON {
    static let formatName = "noteskit"
    static let version: Int64 = 1

    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let file = try OutputFile.replacing(path, mode: options.fileMode)
        var report = ExportReport()
        try store.exportSnapshot(range: options.range) { reader in
            var w = JSONWriter(capacity: 1 << 19)
            w.raw("{"); w.key("format"); w.string(formatName)
            w.raw(","); w.key("version"); w.int(version)
            w.raw(","); w.key("exported_at"); w.timestamp(.now())
            var first = true
            func separator() {
                w.raw(first ? "\n" : ",\n")
                first = false
            }
            w.raw(",\n"); w.key("articles"); w.raw("[")
            try reader.forEachArticle { a in
                separator()
                w.exchangeArticle(a, type: false)
                report.articles += 1
                try file.drain(&w)
            }
            first = true
            w.raw("\n],\n"); w.key("drafts"); w.raw("[")
            try reader.forEachDraft { d, articleUid in
                separator()
                w.exchangeDraft(d, articleUid: articleUid, type: false)
                report.drafts += 1
                try file.drain(&w)
            }
            w.raw("\n]")
            try exportChat(reader, &w, file, &report)
            w.raw("}\n")
            try file.drain(&w, force: true)
        }
        try file.commit()
        report.files = 1
        return report
    }

    /// The chat sections.
    static func exportChat(_ reader: ExportReader, _ w: inout JSONWriter, _ file: OutputFile, _ report: inout ExportReport) throws {
        var first = true
        func separator(_ w: inout JSONWriter) {
            w.raw(first ? "\n" : ",\n")
            first = false
        }
        w.raw(",\n"); w.key("conversations"); w.raw("[")
        try reader.forEachConversation { c in
            separator(&w)
            w.exchangeConversation(c, type: false)
            report.conversations += 1
            try file.drain(&w)
        }
        first = true
        w.raw("\n],\n"); w.key("messages"); w.raw("[")
        try reader.forEachMessage { m, conversationUid, _ in
            separator(&w)
            w.exchangeMessage(m, conversationUid: conversationUid, type: false)
            report.messages += 1
            try file.drain(&w)
        }
        w.raw("\n]")
    }

    // MARK: - Import

    /// The sections, in the order they may refer to each other.
    static let sections: [String: Entity] = ["articles": .article, "drafts": .draft, "conversations": .conversation, "messages": .message]

    static func read(_ path: String, into importer: Importer) throws {
        let file = try InputFile(path: path)
        try importer.begin(total: file.size)
        try file.skipByteOrderMark()
        let scanner = JSONScanner(file: file)
        func fatal(_ message: String, line: Int? = nil) -> NotesError {
            Importer.locate(formatError(nil, message), at: SourceLocation(file: path, line: line ?? scanner.line))
        }
        guard try scanner.skipSpace() == 123 else {
            throw fatal(file.size == 0 ? "the file is empty, not a NotesKit JSON document" : "not a NotesKit JSON document: it does not start with {")
        }
        file.consume(1)
        var sawFormat = false, sawVersion = false
        var value: [UInt8] = []
        var first = true
        while true {
            let next = try scanner.skipSpace()
            if first && next == 125 { file.consume(1); break }
            first = false
            guard next == 34 else { throw fatal(next == nil ? "the file ends inside the document (truncated?)" : "expected a key in the NotesKit document") }
            let keyLine = scanner.line
            try scanner.collectValue(into: &value)
            guard case let .string(key) = try parse(value, line: keyLine, path: path, fatal: true) else { throw fatal("expected a key") }
            guard try scanner.skipSpace() == 58 else { throw fatal("expected ':' after \"\(key.prefix(40))\"") }
            file.consume(1)
            guard try scanner.skipSpace() != nil else { throw fatal("the file ends inside the document (truncated?)") }
            let valueLine = scanner.line
            if let entity = sections[key] {
                guard sawFormat && sawVersion else {
                    throw fatal("\"format\" and \"version\" must come before \"\(key)\" in a NotesKit JSON document")
                }
                try readSection(entity, scanner, &value, path: path, importer: importer, fatal: fatal)
            } else {
                try scanner.collectValue(into: &value)
                let parsed = try parse(value, line: valueLine, path: path, fatal: true)
                switch key {
                case "format":
                    guard parsed == .string(formatName) else {
                        throw fatal("not a NotesKit JSON document: format is \(describe(parsed)), expected \"noteskit\"", line: valueLine)
                    }
                    sawFormat = true
                case "version":
                    guard case let .int(v) = parsed else {
                        throw fatal("version must be a whole number, got \(parsed.typeName)", line: valueLine)
                    }
                    guard v == version else {
                        throw fatal("unknown NotesKit JSON version \(v): this NotesKit reads version \(version); upgrade noteskit to read it", line: valueLine)
                    }
                    sawVersion = true
                case "exported_at":
                    break
                default:
                    throw fatal("unknown key \"\(key.prefix(60))\" in a NotesKit JSON document (expected format, version, exported_at, \(sections.keys.sorted().joined(separator: ", ")))", line: keyLine)
                }
            }
            switch try scanner.skipSpace() {
            case 44: file.consume(1)
            case 125: file.consume(1)
                try finish(scanner, sawFormat: sawFormat && sawVersion, fatal: fatal)
                return
            case nil: throw fatal("the file ends inside the document (truncated?)")
            default: throw fatal("expected ',' or '}' in the NotesKit document")
            }
        }
        try finish(scanner, sawFormat: sawFormat && sawVersion, fatal: fatal)
    }

    private static func finish(_ scanner: JSONScanner, sawFormat: Bool, fatal: (String, Int?) -> NotesError) throws {
        guard sawFormat else { throw fatal("not a NotesKit JSON document: \"format\": \"noteskit\" and \"version\" are missing", nil) }
        guard try scanner.skipSpace() == nil else { throw fatal("unexpected text after the end of the document", nil) }
    }

    private static func readSection(_ entity: Entity, _ scanner: JSONScanner, _ value: inout [UInt8], path: String,
                                    importer: Importer, fatal: (String, Int?) -> NotesError) throws {
        let file = scanner.file
        guard try scanner.skipSpace() == 91 else { throw fatal("\(entity.name)s must be an array", nil) }
        file.consume(1)
        if try scanner.skipSpace() == 93 { file.consume(1); return }
        while true {
            guard try scanner.skipSpace() != nil else { throw fatal("the file ends inside the \(entity.name)s (truncated?)", nil) }
            let line = scanner.line
            try scanner.collectValue(into: &value)
            try importer.add(try JSONObject(record: try parse(value, line: line, path: path, fatal: false), what: entity.name).record(entity, times: importer.times),
                             at: SourceLocation(file: path, line: line))
            importer.advance(to: file.consumed)
            switch try scanner.skipSpace() {
            case 44: file.consume(1)
            case 93: file.consume(1); return
            case nil: throw fatal("the file ends inside the \(entity.name)s (truncated?)", nil)
            default: throw fatal("expected ',' or ']' after a record", nil)
            }
        }
    }

    /// Parses one collected value; a syntax error is a `.format` error at its line in the file
    /// (already located when `fatal`, else for the importer to locate).
    static func parse(_ bytes: [UInt8], line: Int, path: String, fatal: Bool) throws -> JSONValue {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
        } catch {
            let message = "invalid JSON: \(error.message) (column \(error.column))"
            if fatal { throw Importer.locate(formatError(nil, message), at: SourceLocation(file: path, line: line + error.line - 1)) }
            // A record's own syntax error is the record's: the importer's policy decides.
            throw formatError(nil, error.line > 1 ? "\(message) on its line \(error.line)" : message)
        }
    }

    static func describe(_ value: JSONValue) -> String {
        if case let .string(s) = value { return "\"\(s.prefix(40))\"" }
        return value.typeName
    }
}

/// Walks a JSON document in a file without holding it: skips white space, and collects the bytes
/// of one value at a time (for the strict parser to read), counting lines.
final class JSONScanner {
    let file: InputFile
    /// The 1-based line of the next unread byte.
    private(set) var line = 1

    init(file: InputFile) { self.file = file }

    /// The next byte after white space (not consumed), or nil at the end of the file.
    func skipSpace() throws -> UInt8? {
        while true {
            let bytes = file.available
            var i = 0
            while i < bytes.count {
                let c = bytes[i]
                if c == 10 { line += 1 } else if c != 32 && c != 9 && c != 13 { break }
                i += 1
            }
            file.consume(i)
            if i < bytes.count { return bytes[i] }
            if try !file.fill() { return nil }
        }
    }

    /// Collects the bytes of the value that starts at the next byte (after ``skipSpace()``): a
    /// string, an object or array (to its matching bracket), or a number or literal (to the next
    /// delimiter). The end of the file inside a value is a fatal `.format` error (truncated file).
    func collectValue(into out: inout [UInt8]) throws {
        out.removeAll(keepingCapacity: true)
        var depth = 0
        var inString = false, escaped = false
        var started = false
        let startLine = line
        while true {
            let bytes = file.available
            var i = 0
            var finished = false
            scan: while i < bytes.count {
                let c = bytes[i]
                if c == 10 { line += 1 }
                if inString {
                    if escaped { escaped = false }
                    else if c == 92 { escaped = true }
                    else if c == 34 {
                        inString = false
                        if depth == 0 { i += 1; finished = true; break scan }
                    }
                } else if !started || depth > 0 {
                    switch c {
                    case 34: inString = true
                    case 123, 91: depth += 1
                    case 125, 93:
                        depth -= 1
                        if depth <= 0 { i += 1; finished = true; break scan }
                    default: break
                    }
                } else {
                    // A number or literal ends at the first delimiter, which stays unread.
                    switch c {
                    case 44, 93, 125, 32, 9, 13, 10:
                        if c == 10 { line -= 1 }
                        finished = true
                        break scan
                    default: break
                    }
                }
                started = true
                i += 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<i]))
            file.consume(i)
            if finished { return }
            if out.count > InputFile.maxRecordBytes {
                throw Importer.locate(formatError(nil, "a record longer than \(InputFile.maxRecordBytes >> 20) MiB: the file is not a NotesKit document"),
                                      at: SourceLocation(file: file.path, line: startLine))
            }
            if try !file.fill() {
                // A number or literal may end the file; anything else is cut short.
                if started && depth == 0 && !inString && !out.isEmpty { return }
                throw Importer.locate(formatError(nil, "the file ends inside a record that starts here (truncated?)"),
                                      at: SourceLocation(file: file.path, line: startLine))
            }
        }
    }
}
