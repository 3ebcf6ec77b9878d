/// CSV (RFC 4180): UTF-8, a header row, CRLF line ends, fields quoted when they hold a comma, a
/// quote or a line break.
///
/// - `articles.csv`: `uid,title,content,created_at,updated_at,revision`
/// - `messages.csv`: `uid,conversation_uid,conversation_title,from_me,sent_at,content`
///
/// A folder holds both; a single `.csv` file holds one table (`ExportOptions.table`, articles by
/// default). Reading maps columns by their header names (any order; a UTF-8 byte order mark is
/// skipped); `title` and `content` (articles) are required, the others optional: an empty or
/// missing uid is derived from the row, an empty time is the time of the import. An unknown column
/// is refused (a misspelt one would otherwise be lost). Read one record at a time.
enum CSVFormat {
    static let articleColumns = ["uid", "title", "content", "created_at", "updated_at", "revision"]
    static let messageColumns = ["uid", "conversation_uid", "conversation_title", "from_me", "sent_at", "content"]
    static let articlesFile = "articles.csv"
    static let messagesFile = "messages.csv"

    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let isFile = ExchangeFormat.fromExtension(path) == .csv && !(fileKind(path)?.isDirectory ?? false)
        if isFile {
            let file = try OutputFile.replacing(path, mode: options.fileMode)
            var report = ExportReport()
            try store.exportSnapshot { reader in
                if options.table == "messages" {
                    try writeMessages(reader, to: file, &report)
                } else {
                    try writeArticles(reader, to: file, &report)
                }
            }
            try file.commit()
            report.files = 1
            return report
        }
        let folder = try OutputFolder(path, mode: options.fileMode)
        var report = ExportReport()
        try store.exportSnapshot { reader in
            for (name, write) in [(articlesFile, writeArticles), (messagesFile, writeMessages)] {
                guard let file = try folder.create(name) else { throw NotesError(.internalError, "\(name) exists in a new folder") }
                try write(reader, file, &report)
                try file.commit()
                report.files += 1
            }
        }
        try folder.commit()
        return report
    }

    static func writeArticles(_ reader: ExportReader, to file: OutputFile, _ report: inout ExportReport) throws {
        var w = JSONWriter(capacity: 1 << 19)
        header(articleColumns, &w)
        try reader.forEachArticle { a in
            field(a.uid, &w); w.raw(",")
            field(a.title, &w); w.raw(",")
            field(a.content, &w); w.raw(",")
            a.createdAt.writeISO8601(into: &w.bytes); w.raw(",")
            a.updatedAt.writeISO8601(into: &w.bytes); w.raw(",")
            w.int(a.revision); w.raw("\r\n")
            report.articles += 1
            try file.drain(&w)
        }
        try file.drain(&w, force: true)
    }

    static func writeMessages(_ reader: ExportReader, to file: OutputFile, _ report: inout ExportReport) throws {
        var w = JSONWriter(capacity: 1 << 19)
        header(messageColumns, &w)
        try reader.forEachMessage { m, conversationUid, conversationTitle in
            field(m.uid, &w); w.raw(",")
            field(conversationUid, &w); w.raw(",")
            field(conversationTitle, &w); w.raw(",")
            w.raw(m.fromMe ? "true," : "false,")
            m.sentAt.writeISO8601(into: &w.bytes); w.raw(",")
            field(m.content, &w); w.raw("\r\n")
            report.messages += 1
            try file.drain(&w)
        }
        try file.drain(&w, force: true)
    }

    static func header(_ columns: [String], _ w: inout JSONWriter) {
        w.bytes.append(contentsOf: columns.joined(separator: ",").utf8)
        w.raw("\r\n")
    }

    /// Appends `text` as one field, quoted (with quotes doubled) when it holds `,` `"` CR or LF.
    static func field(_ text: String, _ w: inout JSONWriter) {
        var text = text
        text.withUTF8 { utf8 in
            let needsQuotes = utf8.contains { $0 == 44 || $0 == 34 || $0 == 13 || $0 == 10 }
            guard needsQuotes else { w.bytes.append(contentsOf: utf8); return }
            w.bytes.append(34)
            var run = 0
            for (i, c) in utf8.enumerated() where c == 34 {
                w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...i]))
                w.bytes.append(34)
                run = i + 1
            }
            w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
            w.bytes.append(34)
        }
    }

    // MARK: - Import

    static func read(_ path: String, isFolder: Bool, into importer: Importer) throws {
        guard isFolder else {
            let file = try InputFile(path: path)
            try importer.begin(total: file.size)
            try readTable(file, displayName: path, into: importer, progressBase: 0)
            return
        }
        let tables = [articlesFile, messagesFile].map { joinPath(path, $0) }.filter { fileKind($0).map { !$0.isDirectory } ?? false }
        guard !tables.isEmpty else {
            throw NotesError(.format, "\(path) holds neither \(articlesFile) nor \(messagesFile)", field: "path", file: path)
        }
        let files = try tables.map { try InputFile(path: $0) }
        try importer.begin(total: files.reduce(0) { $0 + $1.size })
        var base: Int64 = 0
        for file in files {
            try readTable(file, displayName: file.path, into: importer, progressBase: base)
            base += file.size
        }
    }

    /// Which table a header describes, and where each known column is.
    struct Columns {
        var index: [String: Int] = [:]
        var count = 0
        var isMessages = false

        func cell(_ row: [String], _ name: String) -> String? {
            guard let i = index[name], i < row.count, !row[i].isEmpty else { return nil }
            return row[i]
        }
    }

    static func columns(_ header: [String]) throws -> Columns {
        let header = header.map { $0.trimmingSpaces() }
        var columns = Columns(count: header.count)
        columns.isMessages = header.contains("conversation_uid") || header.contains("conversation_title") || header.contains("from_me")
        let known = columns.isMessages ? messageColumns : articleColumns
        for (i, name) in header.enumerated() {
            guard known.contains(name) else {
                throw formatError(name, "unknown column \"\(name.prefix(40))\" (expected \(known.joined(separator: ", ")))")
            }
            guard columns.index[name] == nil else { throw formatError(name, "column \"\(name)\" appears twice") }
            columns.index[name] = i
        }
        if columns.isMessages && columns.index["conversation_uid"] == nil && columns.index["conversation_title"] == nil {
            throw formatError("conversation_uid", "a messages table needs a conversation_uid or a conversation_title column")
        }
        let required = columns.isMessages ? ["content", "from_me"] : ["title", "content"]
        for name in required where columns.index[name] == nil {
            throw formatError(name, "the header has no \"\(name)\" column (a \(columns.isMessages ? "messages" : "articles") table needs \(required.joined(separator: " and ")))")
        }
        return columns
    }

    private static func readTable(_ file: InputFile, displayName: String, into importer: Importer, progressBase: Int64) throws {
        var reader = CSVReader(file: file)
        guard let header = try reader.next(path: displayName) else { return }
        let columns: Columns
        do {
            columns = try Self.columns(try header.strings())
        } catch let error as NotesError {
            throw Importer.locate(error, at: SourceLocation(file: displayName, line: header.line))
        }
        while let row = try reader.next(path: displayName) {
            if row.isBlank { continue }
            try importer.add(try record(row, columns), at: SourceLocation(file: displayName, line: row.line))
            importer.advance(to: progressBase + file.consumed)
        }
    }

    private static func record(_ row: CSVReader.Row, _ columns: Columns) throws -> ExchangeRecord {
        if let error = row.error { throw formatError(nil, error) }
        let cells = try row.strings()
        guard cells.count == columns.count else {
            throw formatError(nil, "the row has \(cells.count) fields, the header \(columns.count)")
        }
        func required(_ name: String) throws -> String {
            guard let i = columns.index[name] else { throw formatError(name, "\(name) is missing") }
            return cells[i]
        }
        if columns.isMessages {
            let sent = try columns.cell(cells, "sent_at").map { try Fields.timestamp($0, field: "sent_at") }
            return .message(try Fields.message(MessageRecord(
                uid: columns.cell(cells, "uid"), conversationUid: columns.cell(cells, "conversation_uid"),
                conversationTitle: columns.cell(cells, "conversation_title"), content: try required("content"),
                fromMe: try Fields.bool(try required("from_me"), field: "from_me"), sentAt: sent)))
        }
        let created = try columns.cell(cells, "created_at").map { try Fields.timestamp($0, field: "created_at") }
        let updated = try columns.cell(cells, "updated_at").map { try Fields.timestamp($0, field: "updated_at") }
        let revision = try columns.cell(cells, "revision").map { try Fields.integer($0, field: "revision") }
        return .article(try Fields.article(ArticleRecord(
            uid: columns.cell(cells, "uid"), title: try required("title"), content: try required("content"),
            createdAt: created, updatedAt: updated, revision: revision)))
    }
}

/// Reads RFC 4180 records from a file, one at a time: fields may be quoted (`""` is a quote) and
/// quoted fields may span lines. A line end is LF or CRLF outside quotes; inside quotes every byte
/// is kept. The end of the file inside a quoted field is a fatal `.format` error (truncated).
struct CSVReader {
    let file: InputFile
    private var firstLine = true

    init(file: InputFile) { self.file = file }

    struct Row {
        var fields: [[UInt8]]
        /// The 1-based line the record starts on.
        var line: Int
        /// What is wrong with the row's quoting, if anything.
        var error: String?

        var isBlank: Bool { fields.count == 1 && fields[0].isEmpty && error == nil }

        /// The fields as text; invalid UTF-8 is a `.format` error naming the column number.
        func strings() throws -> [String] {
            try fields.enumerated().map { i, bytes in
                guard let s = bytes.withUnsafeBufferPointer({ String.validatingUTF8($0) }) else {
                    throw formatError(nil, "field \(i + 1) is not valid UTF-8")
                }
                return s
            }
        }
    }

    mutating func next(path: String) throws -> Row? {
        guard var line = try file.nextLine() else { return nil }
        let start = file.lineNumber
        if firstLine {
            firstLine = false
            if line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF { line = UnsafeBufferPointer(rebasing: line[3...]) }
        }
        var row = Row(fields: [], line: start, error: nil)
        var field: [UInt8] = []
        var quoted = false      // the field started with a quote
        var inQuotes = false    // inside the quotes now
        var afterQuote = false  // just after the closing quote
        while true {
            var i = 0
            // A CR ending the line is the line end's (CRLF), or, inside quotes, kept with the LF.
            let endsWithCR = !line.isEmpty && line[line.count - 1] == 13
            let count = endsWithCR ? line.count - 1 : line.count
            while i < count {
                let c = line[i]
                if inQuotes {
                    if c == 34 {
                        if i + 1 < count, line[i + 1] == 34 { field.append(34); i += 2; continue }
                        inQuotes = false
                        afterQuote = true
                    } else {
                        field.append(c)
                    }
                } else if c == 44 {
                    row.fields.append(field)
                    field.removeAll(keepingCapacity: true)
                    quoted = false
                    afterQuote = false
                } else if afterQuote {
                    if row.error == nil { row.error = "text after a closing quote in field \(row.fields.count + 1)" }
                } else if c == 34 {
                    if field.isEmpty && !quoted {
                        quoted = true
                        inQuotes = true
                    } else if row.error == nil {
                        row.error = "a quote inside unquoted field \(row.fields.count + 1) (quote the field and double the quote)"
                    }
                } else {
                    field.append(c)
                }
                i += 1
            }
            guard inQuotes else { break }
            // The quoted field goes on: the line break is part of it.
            if endsWithCR { field.append(13) }
            field.append(10)
            guard let more = try file.nextLine() else {
                throw Importer.locate(formatError(nil, "the file ends inside a quoted field that starts here (truncated?)"),
                                      at: SourceLocation(file: path, line: start))
            }
            line = more
        }
        row.fields.append(field)
        return row
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        // Scalars, not Characters: a space followed by a combining mark is one Character.
        var s = Substring(self).unicodeScalars
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
