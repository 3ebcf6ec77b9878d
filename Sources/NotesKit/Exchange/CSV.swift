/// CSV (RFC 4180): UTF-8, a header row, CRLF line ends, fields quoted when they hold a comma, a
/// quote or a line break.
///
/// - `articles.csv`: `uid,title,content,created_at,updated_at,revision`
/// - `conversations.csv`: `uid,title,created_at,last_activity_at`
/// - `messages.csv`: `uid,conversation_uid,conversation_title,from_me,sent_at,sender,content`
///
/// A folder holds all three; a single `.csv` file holds one table (`ExportOptions.table`, articles
/// by default). Reading maps columns by their header names (any order; `ImportOptions.columns`
/// renames headers first); a UTF-8 byte order mark and Excel's `sep=;` first line are read; the
/// delimiter is sniffed from the header (`,` `;` or tab) unless given; another encoding is decoded
/// when `ImportOptions.encoding` names it. `title` and `content` (articles) are required, the
/// others optional: an empty or missing uid is derived from the row, an empty time is the time of
/// the import. An unknown column is refused (a misspelt one would otherwise be lost) unless
/// `unknownColumns` is `.ignore`. Read one record at a time.
enum CSVFormat {
    static let articleColumns = ["uid", "title", "content", "created_at", "updated_at", "revision"]
    static let conversationColumns = ["uid", "title", "created_at", "last_activity_at"]
    static let messageColumns = ["uid", "conversation_uid", "conversation_title", "from_me", "sent_at", "sender", "content"]
    static let articlesFile = "articles.csv"
    static let conversationsFile = "conversations.csv"
    static let messagesFile = "messages.csv"
    /// What `ExportOptions.excel` puts first: UTF-8's byte order mark, U+FEFF.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The tables a CSV file can hold.
    enum Table: String {
        case articles, conversations, messages

        var columns: [String] {
            switch self {
            case .articles: CSVFormat.articleColumns
            case .conversations: CSVFormat.conversationColumns
            case .messages: CSVFormat.messageColumns
            }
        }

        var required: [String] {
            switch self {
            case .articles: ["title", "content"]
            case .conversations: ["title"]
            case .messages: ["content", "from_me"]
            }
        }
    }

    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let isFile = ExchangeFormat.fromExtension(path) == .csv && !(fileKind(path)?.isDirectory ?? false)
        if isFile {
            let file = try OutputFile.replacing(path, mode: options.fileMode)
            if options.excel { try file.write(byteOrderMark) }
            var report = ExportReport()
            try store.exportSnapshot(range: options.range) { reader in
                switch options.table {
                case "messages": try writeMessages(reader, to: file, &report)
                case "conversations": try writeConversations(reader, to: file, &report)
                default: try writeArticles(reader, to: file, &report)
                }
            }
            try file.commit()
            report.files = 1
            return report
        }
        let folder = try OutputFolder(path, mode: options.fileMode)
        var report = ExportReport()
        try store.exportSnapshot(range: options.range) { reader in
            for (name, write) in [(articlesFile, writeArticles), (conversationsFile, writeConversations), (messagesFile, writeMessages)] {
                guard let file = try folder.create(name) else { throw NotesError(.internalError, "\(name) exists in a new folder") }
                if options.excel { try file.write(byteOrderMark) }
                try write(reader, file, &report)
                try file.commit()
                report.files += 1
            }
        }
        try folder.commit()
        return report
    }

    static func writeArticles(_ reader: ExportReader, to file: OutputFile, _ report: inout ExportReport) throws {
        try writeTable(articleColumns, capacity: 1 << 19, to: file, count: &report.articles, reader.forEachArticle) { a, w in
            field(a.uid, &w); w.raw(",")
            field(a.title, &w); w.raw(",")
            field(a.content, &w); w.raw(",")
            a.createdAt.writeISO8601(into: &w.bytes); w.raw(",")
            a.updatedAt.writeISO8601(into: &w.bytes); w.raw(",")
            w.int(a.revision)
        }
    }

    static func writeConversations(_ reader: ExportReader, to file: OutputFile, _ report: inout ExportReport) throws {
        try writeTable(conversationColumns, capacity: 1 << 16, to: file, count: &report.conversations, reader.forEachConversation) { c, w in
            field(c.uid, &w); w.raw(",")
            field(c.title, &w); w.raw(",")
            c.createdAt.writeISO8601(into: &w.bytes); w.raw(",")
            c.lastActivityAt.writeISO8601(into: &w.bytes)
        }
    }

    static func writeMessages(_ reader: ExportReader, to file: OutputFile, _ report: inout ExportReport) throws {
        let forEach = { (body: ((Message, String, String)) throws -> Void) in try reader.forEachMessage { try body(($0, $1, $2)) } }
        try writeTable(messageColumns, capacity: 1 << 19, to: file, count: &report.messages, forEach) { row, w in
            let (m, conversationUid, conversationTitle) = row
            field(m.uid, &w); w.raw(",")
            field(conversationUid, &w); w.raw(",")
            field(conversationTitle, &w); w.raw(",")
            w.raw(m.fromMe ? "true," : "false,")
            m.sentAt.writeISO8601(into: &w.bytes); w.raw(",")
            if let sender = m.sender { field(sender, &w) }
            w.raw(",")
            field(m.content, &w)
        }
    }

    /// Writes one table to `file`: the header of `columns`, then a line per record `forEach` hands
    /// over (its fields written by `row`), each counted in `count`; the buffer (`capacity` bytes to
    /// start) goes to the file whenever it fills.
    static func writeTable<Record>(_ columns: [String], capacity: Int, to file: OutputFile, count: inout Int,
                                   _ forEach: ((Record) throws -> Void) throws -> Void,
                                   _ row: @escaping (Record, inout JSONWriter) -> Void) throws {
        var w = JSONWriter(capacity: capacity)
        header(columns, &w)
        try forEach { record in
            row(record, &w); w.raw("\r\n")
            count += 1
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
            let file = try open(path, importer)
            try importer.begin(total: file.size)
            try readTable(file, table: nil, displayName: path, into: importer, progressBase: 0)
            return
        }
        let names: [(String, Table)] = [(articlesFile, Table.articles), (conversationsFile, Table.conversations), (messagesFile, Table.messages)]
        let tables = names.map { (joinPath(path, $0.0), $0.1) }.filter { fileKind($0.0).map { !$0.isDirectory } ?? false }
        guard !tables.isEmpty else {
            throw NotesError(.format, "\(path) holds none of \(articlesFile), \(conversationsFile), \(messagesFile)", field: "path", file: path)
        }
        let files = try tables.map { (try open($0.0, importer), $0.1) }
        try importer.begin(total: files.reduce(0) { $0 + $1.0.size })
        var base: Int64 = 0
        for (file, table) in files {
            try readTable(file, table: table, displayName: file.path, into: importer, progressBase: base)
            base += file.size
        }
    }

    /// The file, decoded from `ImportOptions.encoding` when one is given.
    private static func open(_ path: String, _ importer: Importer) throws -> InputFile {
        guard let encoding = importer.options.encoding, !["utf-8", "utf8"].contains(encoding.lowercased()) else {
            let file = try InputFile(path: path)
            try file.skipByteOrderMark()
            return file
        }
        let file = try InputFile(path: path, encoding: encoding)
        try file.skipByteOrderMark()  // a mark the decoder kept (UTF-16LE given for a file that has one)
        return file
    }

    /// Which table a header describes, and where each known column is.
    struct Columns {
        var index: [String: Int] = [:]
        var count = 0
        var table = Table.articles
        /// The header as the file has it, for errors.
        var names: [String] = []

        func cell(_ row: [String], _ name: String) -> String? {
            guard let i = index[name], i < row.count, !row[i].isEmpty else { return nil }
            return row[i]
        }
    }

    static func columns(_ header: [String], table: Table?, options: ImportOptions) throws -> Columns {
        let names = header.map { $0.trimmingSpaces() }
        let every = Set(articleColumns + conversationColumns + messageColumns)
        for (from, to) in options.columns ?? [] where !every.contains(to) {
            throw NotesError(.validation, "columns maps \"\(from.prefix(40))\" to \"\(to.prefix(40))\", which is not a NotesKit column (\(every.sorted().joined(separator: ", ")))", field: "columns")
        }
        let mapped = names.map { name in options.columns?.first { $0.0 == name }?.1 ?? name }
        var columns = Columns(count: header.count, names: names)
        if let table {
            columns.table = table
        } else if mapped.contains("conversation_uid") || mapped.contains("conversation_title") || mapped.contains("from_me") {
            columns.table = .messages
        } else if mapped.contains("last_activity_at") {
            columns.table = .conversations
        }
        let known = columns.table.columns
        for (i, name) in mapped.enumerated() {
            guard known.contains(name) else {
                if options.unknownColumns == .ignore { continue }
                throw formatError(name, "unknown column \"\(name.prefix(40))\" (expected \(known.joined(separator: ", ")); map it to a field with \(option: "columns"), or drop it with \(option: "unknownColumns", choice: "ignore"))")
            }
            guard columns.index[name] == nil else { throw formatError(name, "column \"\(name)\" appears twice") }
            columns.index[name] = i
        }
        if columns.table == .messages && columns.index["conversation_uid"] == nil && columns.index["conversation_title"] == nil {
            throw formatError("conversation_uid", "a messages table needs a conversation_uid or a conversation_title column")
        }
        let required = columns.table.required
        for name in required where columns.index[name] == nil {
            throw formatError(name, "the header has no \"\(name)\" column (a \(columns.table.rawValue) table needs \(required.joined(separator: " and ")))")
        }
        return columns
    }

    private static func readTable(_ file: InputFile, table: Table?, displayName: String, into importer: Importer, progressBase: Int64) throws {
        var reader = CSVReader(file: file, delimiter: importer.options.delimiter.flatMap { $0.utf8.first })
        guard let header = try reader.next(path: displayName) else { return }
        let columns: Columns
        do {
            columns = try Self.columns(try header.strings(), table: table, options: importer.options)
        } catch let error as NotesError where error.kind != .validation {
            throw Importer.locate(error, at: SourceLocation(file: displayName, line: header.line))
        }
        while let row = try reader.next(path: displayName) {
            if row.isBlank { continue }
            try importer.add(try record(row, columns, times: importer.times), at: SourceLocation(file: displayName, line: row.line))
            importer.advance(to: progressBase + file.consumed)
        }
    }

    private static func record(_ row: CSVReader.Row, _ columns: Columns, times: TimeReader) throws -> ExchangeRecord {
        if let error = row.error { throw formatError(nil, error) }
        let cells = try row.strings(names: columns.names)
        guard cells.count == columns.count else {
            throw formatError(nil, "the row has \(cells.count) fields, the header \(columns.count)")
        }
        func required(_ name: String) throws -> String {
            guard let i = columns.index[name] else { throw formatError(name, "\(name) is missing") }
            return cells[i]
        }
        func time(_ name: String) throws -> Timestamp? {
            try columns.cell(cells, name).map { try times.timestamp($0, field: name) }
        }
        switch columns.table {
        case .messages:
            return .message(try Fields.message(MessageRecord(
                uid: columns.cell(cells, "uid"), conversationUid: columns.cell(cells, "conversation_uid"),
                conversationTitle: columns.cell(cells, "conversation_title"), content: try required("content"),
                fromMe: try Fields.bool(try required("from_me"), field: "from_me"), sentAt: try time("sent_at"),
                sender: columns.cell(cells, "sender"))))
        case .conversations:
            return .conversation(try Fields.conversation(ConversationRecord(
                uid: columns.cell(cells, "uid"), title: try required("title"), createdAt: try time("created_at"),
                lastActivityAt: try time("last_activity_at"))))
        case .articles:
            let revision = try columns.cell(cells, "revision").map { try Fields.integer($0, field: "revision") }
            return .article(try Fields.article(ArticleRecord(
                uid: columns.cell(cells, "uid"), title: try required("title"), content: try required("content"),
                createdAt: try time("created_at"), updatedAt: try time("updated_at"), revision: revision)))
        }
    }

    /// The encoding a field that is not UTF-8 was likely written in, as advice for the error.
    static func likelyEncoding(_ bytes: [UInt8]) -> String {
        if Transcoder.decodes(bytes, from: "GB18030") && bytes.contains(where: { $0 >= 0x81 }) {
            return "gb18030 (what Excel writes on a Chinese Windows)"
        }
        return "cp1252 (what Excel writes on a Western Windows)"
    }
}

/// Reads RFC 4180 records from a file, one at a time: fields may be quoted (`""` is a quote) and
/// quoted fields may span lines. A line end is LF or CRLF outside quotes; inside quotes every byte
/// is kept. The end of the file inside a quoted field is a fatal `.format` error (truncated).
struct CSVReader {
    let file: InputFile
    private var firstLine = true
    /// The field delimiter: given, or sniffed from the first line.
    private(set) var delimiter: UInt8

    init(file: InputFile, delimiter: UInt8? = nil) {
        self.file = file
        self.delimiter = delimiter ?? 0
    }

    /// The delimiter of a header line: the most frequent of `,` `;` and tab outside quotes (`,`
    /// when none occurs or they tie).
    static func sniff(_ line: UnsafeBufferPointer<UInt8>) -> UInt8 {
        var counts: [UInt8: Int] = [44: 0, 59: 0, 9: 0]
        var quoted = false
        for c in line {
            if c == 34 { quoted.toggle() } else if !quoted, counts[c] != nil { counts[c, default: 0] += 1 }
        }
        let best = [44, 59, 9].max { counts[$0, default: 0] < counts[$1, default: 0] } ?? 44
        return counts[best, default: 0] > counts[44, default: 0] ? best : 44
    }

    struct Row {
        var fields: [[UInt8]]
        /// The 1-based line the record starts on.
        var line: Int
        /// What is wrong with the row's quoting, if anything.
        var error: String?

        var isBlank: Bool { fields.count == 1 && fields[0].isEmpty && error == nil }

        /// The fields as text; invalid UTF-8 is a `.format` error naming the column (by its name
        /// in `names`, the header) and the encoding the file was likely written in.
        func strings(names: [String] = []) throws -> [String] {
            try fields.enumerated().map { i, bytes in
                guard let s = bytes.withUnsafeBufferPointer({ String.validatingUTF8($0) }) else {
                    let column = i < names.count ? "column \"\(names[i].prefix(40))\" (field \(i + 1))" : "field \(i + 1)"
                    let likely = CSVFormat.likelyEncoding(bytes)
                    let name = likely.prefix { $0 != " " }
                    throw formatError(i < names.count ? String(names[i].prefix(40)) : nil,
                                      "\(column) is not valid UTF-8: the file looks like \(likely); pass \(option: "encoding", string: String(name))")
                }
                return s
            }
        }
    }

    mutating func next(path: String) throws -> Row? {
        guard var line = try file.nextLine() else { return nil }
        if firstLine {
            firstLine = false
            // Excel's "sep=;" line names the delimiter.
            var text = line
            if text.last == 13 { text = UnsafeBufferPointer(rebasing: text[..<(text.count - 1)]) }
            if text.count == 5, Array(text[0..<4]) == Array("sep=".utf8), text[4] != 34 {
                if delimiter == 0 { delimiter = text[4] }
                guard let next = try file.nextLine() else { return nil }
                line = next
            }
            if delimiter == 0 { delimiter = Self.sniff(line) }
        }
        let start = file.lineNumber
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
                } else if c == delimiter {
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
