/// The formats a store exports to and imports from.
///
/// | format | what | path |
/// |---|---|---|
/// | `json` | one versioned NotesKit document: articles, drafts, conversations, messages, every field | a `.json` file |
/// | `jsonl` | the same records, one per line with a `type` | a `.jsonl` file |
/// | `csv` | RFC 4180 tables: `articles.csv` and `messages.csv` | a folder, or one `.csv` file |
/// | `markdown` | one `.md` file per article with YAML front matter (Joplin's keys) | a folder (or one `.md` file to import) |
/// | `transcript` | one conversation as `[YYYY-MM-DD HH:MM:SS] Me: text` lines | a `.txt` file |
/// | `telegram` | Telegram Desktop's JSON export (`result.json`): one chat, or every chat | import only |
/// | `whatsapp` | WhatsApp's chat export (`.txt`), Android or iOS | import only |
public enum ExchangeFormat: String, Sendable, CaseIterable {
    case json, jsonl, csv, markdown, transcript, telegram, whatsapp

    /// The format named by `path`'s extension, or nil.
    static func fromExtension(_ path: String) -> ExchangeFormat? {
        let name = baseName(path).lowercased()
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...] {
        case "json": return .json
        case "jsonl", "ndjson": return .jsonl
        case "csv": return .csv
        case "txt": return .transcript
        case "md", "markdown": return .markdown
        default: return nil
        }
    }

    /// `given`, or the format of `path`'s extension; a folder, or a path without a known
    /// extension, needs `given` (a `.validation` error on `format` otherwise).
    static func resolve(_ given: ExchangeFormat?, path: String, isFolder: Bool, reading: Bool = false) throws -> ExchangeFormat {
        if let given { return given }
        if isFolder {
            throw NotesError(.validation, "\(path) is a folder: pass \(option: "format", choice: "markdown") or \(option: "format", choice: "csv")", field: "format",
                             code: "folder_needs_format")
        }
        guard let format = fromExtension(path) else {
            throw NotesError(.validation, "cannot tell the format of \(path) from its extension (.json, .jsonl, .csv, .txt, .md); pass \(option: "format") one of \(allCases.map(\.rawValue).joined(separator: ", "))", field: "format")
        }
        // Other apps' exports share the extensions: told apart by their first bytes.
        if reading, format == .json, try ForeignChat.looksLikeTelegram(path) { return .telegram }
        if reading, format == .transcript, try ForeignChat.looksLikeWhatsApp(path) { return .whatsapp }
        return format
    }

    /// Formats only read (other apps' exports).
    var importOnly: Bool { self == .telegram || self == .whatsapp }
}

/// What happens to a malformed record.
public enum ImportErrorPolicy: String, Sendable, CaseIterable {
    /// The first malformed record stops the import, which writes nothing.
    case raise
    /// Malformed records are left out and listed in ``ImportReport/errors``; the others are imported.
    case skip
}

/// How an import treats records and reports progress.
public struct ImportOptions {
    /// What a record whose uid the store already has does.
    public var onConflict: ConflictPolicy = .skip
    /// Whether a malformed record stops the import or is listed and left out.
    public var onError: ImportErrorPolicy = .raise
    /// Called regularly with (done, total), in bytes of the file (files, for a Markdown folder);
    /// returning false cancels the import, which then writes nothing (`.cancelled`). It runs
    /// inside the import's transaction: it must not call the store.
    public var progress: ((Int64, Int64) -> Bool)?
    /// Transcripts: the id of the conversation to import into.
    public var conversation: Int64?
    /// Transcripts: the title of the conversation to import into (found, or created); defaults to
    /// the file's name without its extension.
    public var title: String?
    /// Telegram and WhatsApp: the exporting user (a name as the chat shows it, or a Telegram id
    /// like `user123456789`), whose messages are `fromMe`.
    public var me: String?
    /// The time zone of times without one (a date alone, a naive time, a chat's local times): an
    /// IANA name (`Europe/Berlin`), `UTC` (the default) or an offset (`+08:00`).
    public var timeZone: String?
    /// CSV: the file's text encoding (`gb18030`, `cp1252`, `utf-16`, ... anything iconv knows);
    /// UTF-8 by default.
    public var encoding: String?
    /// CSV: the field delimiter (one character); sniffed from the header (`,` `;` or tab) by default.
    public var delimiter: String?
    /// CSV: header names mapped to NotesKit's column names (`"Title": "title"`).
    public var columns: [(String, String)]?
    /// CSV: what a column NotesKit does not know does: refused (the default), or ignored.
    public var unknownColumns: UnknownColumns = .refuse
    /// WhatsApp: the order of day and month in dates, when the file cannot tell (no day above 12).
    public var dateOrder: DateOrder?

    public init(onConflict: ConflictPolicy = .skip, onError: ImportErrorPolicy = .raise,
                progress: ((Int64, Int64) -> Bool)? = nil, conversation: Int64? = nil, title: String? = nil) {
        self.onConflict = onConflict
        self.onError = onError
        self.progress = progress
        self.conversation = conversation
        self.title = title
    }

    /// Refuses an option the format does not read (a `.validation` error on the option).
    func check(for format: ExchangeFormat) throws {
        func only(_ name: String, _ given: Bool, _ formats: [ExchangeFormat]) throws {
            guard given, !formats.contains(format) else { return }
            throw NotesError(.validation, "\(name) applies to \(formats.map(\.rawValue).joined(separator: " and ")), not to \(format.rawValue)", field: name)
        }
        try only("conversation", conversation != nil, [.transcript, .whatsapp])
        try only("title", title != nil, [.transcript, .whatsapp])
        try only("me", me != nil, [.telegram, .whatsapp])
        try only("encoding", encoding != nil, [.csv])
        try only("delimiter", delimiter != nil, [.csv])
        try only("columns", columns != nil, [.csv])
        try only("unknown_columns", unknownColumns != .refuse, [.csv])
        try only("date_order", dateOrder != nil, [.whatsapp])
        if let delimiter, delimiter.utf8.count != 1 || delimiter == "\"" || delimiter == "\n" || delimiter == "\r" {
            throw NotesError(.validation, "delimiter must be one ASCII character other than a quote or a line break, got \"\(delimiter.prefix(10))\"", field: "delimiter")
        }
        if let me { try TextRules.checkRequired(me, field: "me", limit: TextRules.maxTitleLength) }
    }
}

/// What a CSV column NotesKit does not know does.
public enum UnknownColumns: String, Sendable, CaseIterable {
    /// Refused: a misspelt column would otherwise be lost.
    case refuse
    /// Ignored: its cells are dropped.
    case ignore
}

/// The order of day and month in a chat export's dates.
public enum DateOrder: String, Sendable, CaseIterable {
    case dmy, mdy
}

/// What an import did: records created, updated (on_conflict replace/newer) and skipped (their uid
/// was there already and the policy, or identical content, kept the stored one), and the
/// malformed records left out (with `onError = .skip`; each a `.format` error naming the file,
/// line and field).
public struct ImportReport: Sendable {
    public var created = 0
    public var updated = 0
    public var skipped = 0
    public var errors: [NotesError] = []
    /// Markdown folders: the symbolic links (paths relative to the folder) that were not read
    /// because they lead outside the folder, or nowhere. Links leading inside it are skipped
    /// silently: what they point to is imported under its own name.
    public var skippedLinks: [String] = []
    /// Per skipped record: the file, the line and why (the first ``maxListedSkips``).
    public var skips: [SkippedRecord] = []

    /// Skipped records listed, at most (a re-import of a million records skips a million).
    public static let maxListedSkips = 10_000

    public init() {}
}

/// Which records an export writes, and who may read them.
public struct ExportOptions: Sendable {
    /// Transcripts: the conversation to write (needed when the store has more than one).
    public var conversation: Int64?
    /// A single `.csv` file holds one table: `"articles"` (the default) or `"messages"`.
    public var table: String?
    /// The permissions of the files written (nil: ``FileModes/privateFile``, owner-only), exactly,
    /// whatever the umask; an exported folder gets ``FileModes/folderMode(forFiles:)`` of it.
    /// Read and write bits only, with read and write for the owner (see ``FileModes/fileMode(_:field:)``).
    public var mode: UInt32?
    /// CSV for Excel: a UTF-8 byte order mark first (Excel reads UTF-8 only after one) and CRLF
    /// line ends (CSV has them anyway). CSV only.
    public var excel = false

    /// Only the articles created, and the messages sent, within this range (their conversations:
    /// those with a message in it); drafts only without a range.
    public var range: TimeRange

    public init(conversation: Int64? = nil, table: String? = nil, mode: UInt32? = nil, range: TimeRange = .all,
                excel: Bool = false) {
        self.conversation = conversation
        self.table = table
        self.mode = mode
        self.range = range
        self.excel = excel
    }

    /// ``mode``, or owner-only.
    var fileMode: UInt32 { mode ?? FileModes.privateFile }
}

/// What an export wrote: how many records of each kind, and how many files.
public struct ExportReport: Sendable, Equatable {
    public var articles = 0
    public var drafts = 0
    public var conversations = 0
    public var messages = 0
    public var files = 0

    public init() {}
}

extension Store {
    /// Writes the store to `path` in `format` (from the extension when nil; see ``ExchangeFormat``).
    ///
    /// The export reads one consistent snapshot (other calls on this store wait until it is done;
    /// other processes may go on writing) and runs in bounded memory, one row at a time. A
    /// file is written beside `path` and renamed over it at the end, a folder is made beside it and
    /// renamed into place (it must be new or empty): a failed export leaves nothing behind, and the
    /// leftovers of a killed one are removed by the next export into (or open of) that folder (see
    /// ``TempEntries``). A symbolic link at `path` is replaced, never followed. What is written is
    /// readable by its owner only unless `options.mode` says otherwise.
    /// O(n) in the rows written.
    public func export(to path: String, format: ExchangeFormat? = nil, options: ExportOptions = ExportOptions()) throws -> ExportReport {
        try checkPath(path)
        _ = try FileModes.fileMode(options.mode)
        let isFolder = fileKind(path, followingLinks: false)?.isDirectory ?? false  // a link is replaced, not followed
        let format = try ExchangeFormat.resolve(format, path: path, isFolder: isFolder)
        if let table = options.table {
            guard format == .csv else { throw NotesError(.validation, "table applies to a single .csv file, not to \(format.rawValue)", field: "table") }
            guard ["articles", "conversations", "messages"].contains(table) else {
                throw NotesError(.validation, "table must be \"articles\", \"conversations\" or \"messages\", got \"\(table.prefix(40))\"", field: "table")
            }
        }
        if options.excel && format != .csv {
            throw NotesError(.validation, "excel applies to CSV, not to \(format.rawValue)", field: "excel")
        }
        if options.conversation != nil && format != .transcript {
            throw NotesError(.validation, "conversation applies to transcripts, not to \(format.rawValue)", field: "conversation")
        }
        if format.importOnly {
            throw NotesError(.validation, "\(format.rawValue) is read, not written: export to json, jsonl, csv, markdown or transcript", field: "format")
        }
        switch format {
        case .json: return try NotesKitJSON.export(self, to: path, options: options)
        case .jsonl: return try JSONLines.export(self, to: path, options: options)
        case .csv: return try CSVFormat.export(self, to: path, options: options)
        case .markdown: return try MarkdownFolder.export(self, to: path, options: options)
        case .transcript: return try Transcript.export(self, to: path, options: options)
        case .telegram, .whatsapp: throw NotesError(.internalError, "no export for \(format.rawValue)")
        }
    }

    /// Imports `path` (a file, or a folder for `markdown` and `csv`) in `format` (from the
    /// extension when nil).
    ///
    /// One transaction: on a malformed record (with `onError = .raise`), a cancel from `progress`
    /// or any other failure, nothing is written. Records are matched by uid: importing the same
    /// file twice changes nothing the second time. JSON Lines, CSV and Markdown (and NotesKit JSON)
    /// are read as a stream, in bounded memory. O(n log N) for n records into a store of N.
    public func `import`(from path: String, format: ExchangeFormat? = nil, options: ImportOptions = ImportOptions()) throws -> ImportReport {
        try checkPath(path)
        guard let kind = fileKind(path) else { throw fileError("read", path) }
        let format = try ExchangeFormat.resolve(format, path: path, isFolder: kind.isDirectory, reading: true)
        if kind.isDirectory && format != .markdown && format != .csv {
            throw NotesError(.validation, "\(path) is a folder; format \(format.rawValue) reads one file", field: "path")
        }
        try options.check(for: format)
        _ = try options.timeZone.map { try ImportZone.named($0) }
        return try importing { writer in
            let importer = try Importer(writer: writer, options: options)
            switch format {
            case .json: try NotesKitJSON.read(path, into: importer)
            case .jsonl: try JSONLines.read(path, into: importer)
            case .csv: try CSVFormat.read(path, isFolder: kind.isDirectory, into: importer)
            case .markdown: try MarkdownFolder.read(path, isFolder: kind.isDirectory, into: importer)
            case .transcript: try Transcript.read(path, into: importer)
            case .telegram: try TelegramExport.read(path, into: importer)
            case .whatsapp: try WhatsAppChat.read(path, into: importer)
            }
            try importer.finish()
            return importer.report
        }
    }

    private func checkPath(_ path: String) throws {
        guard !path.isEmpty else { throw NotesError(.invalidArgument, "the path is empty", field: "path") }
        guard !path.utf8.contains(0) else { throw NotesError(.invalidArgument, "the path contains a NUL character", field: "path") }
    }
}
