/// JSON Lines: one record per line, each an object with a `type`, for streams and huge stores.
///
/// ```
/// {"type":"noteskit","version":1,"exported_at":"2026-11-29T15:28:06.123Z"}
/// {"type":"article","uid":"…","title":"…","content":"…","created_at":"…","updated_at":"…","revision":1}
/// {"type":"draft","uid":"…","article_uid":null,"base_revision":null,"title":"…","content":"…","created_at":"…","updated_at":"…"}
/// {"type":"conversation",…}
/// {"type":"message",…}
/// ```
///
/// The first line is a header naming the format version; a file without one is read as version 1.
/// Fields are those of NotesKit JSON. Blank lines are ignored; a record may refer only to records
/// on earlier lines (or already stored ones). Read and written one line at a time.
enum JSONLines {
    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let file = try OutputFile.replacing(path, mode: options.fileMode)
        var report = ExportReport()
        try store.exportSnapshot(range: options.range) { reader in
            var w = JSONWriter(capacity: 1 << 19)
            w.raw("{"); w.key("type"); w.string(NotesKitJSON.formatName)
            w.raw(","); w.key("version"); w.int(NotesKitJSON.version)
            w.raw(","); w.key("exported_at"); w.timestamp(.now())
            w.raw("}\n")
            try reader.forEachArticle { a in
                w.exchangeArticle(a, type: true)
                w.raw("\n")
                report.articles += 1
                try file.drain(&w)
            }
            try reader.forEachDraft { d, articleUid in
                w.exchangeDraft(d, articleUid: articleUid, type: true)
                w.raw("\n")
                report.drafts += 1
                try file.drain(&w)
            }
            try exportChat(reader, &w, file, &report)
            try file.drain(&w, force: true)
        }
        try file.commit()
        report.files = 1
        return report
    }

    /// The chat records: conversations, then messages.
    static func exportChat(_ reader: ExportReader, _ w: inout JSONWriter, _ file: OutputFile, _ report: inout ExportReport) throws {
        try reader.forEachConversation { c in
            w.exchangeConversation(c, type: true)
            w.raw("\n")
            report.conversations += 1
            try file.drain(&w)
        }
        try reader.forEachMessage { m, conversationUid, _ in
            w.exchangeMessage(m, conversationUid: conversationUid, type: true)
            w.raw("\n")
            report.messages += 1
            try file.drain(&w)
        }
    }

    // MARK: - Import

    static let types: [String: Entity] = ["article": .article, "draft": .draft, "conversation": .conversation, "message": .message]

    static func read(_ path: String, into importer: Importer) throws {
        let file = try importer.open(path)
        var first = true
        while let line = try file.nextLine() {
            let location = SourceLocation(file: path, line: file.lineNumber)
            if isBlank(line) { continue }
            if first {
                first = false
                if try header(line, at: location) { continue }
            }
            try importer.add(try record(line, times: importer.times), at: location)
            importer.advance(to: file.consumed)
        }
    }

    /// Checks the header when `line` is one (true); an unknown version stops the import whatever
    /// the error policy, since the records after it cannot be read.
    private static func header(_ line: UnsafeBufferPointer<UInt8>, at location: SourceLocation) throws -> Bool {
        var parser = JSONParser(line)
        guard let value = try? parser.parseDocument(), case .string(NotesKitJSON.formatName)? = value["type"],
              case let .object(members) = value else { return false }
        do {
            let record = JSONObject(members: members, kind: .format)
            try record.only(["type", "version", "exported_at"])
            guard let version = try record.optionalInt("version") else { throw formatError("version", "version is missing") }
            guard version == NotesKitJSON.version else {
                throw formatError("version", "unknown NotesKit JSON Lines version \(version): this NotesKit reads version \(NotesKitJSON.version); upgrade noteskit to read it")
            }
        } catch let error as NotesError {
            throw Importer.locate(error, at: location)
        }
        return true
    }

    /// The record on one line.
    private static func record(_ line: UnsafeBufferPointer<UInt8>, times: TimeReader) throws -> ExchangeRecord {
        let value: JSONValue
        do {
            var parser = JSONParser(line)
            value = try parser.parseDocument()
        } catch {
            throw formatError(nil, "invalid JSON: \(error.message) (column \(error.column))")
        }
        let record = try JSONObject(record: value, what: "line")
        let type = try record.string("type")
        if type == NotesKitJSON.formatName {
            throw formatError("type", "the \"noteskit\" header must be the first line")
        }
        guard let entity = types[type] else {
            throw formatError("type", "unknown type \"\(type.prefix(40))\" (expected \(types.keys.sorted().joined(separator: ", ")))")
        }
        return try record.record(entity, extra: ["type"], times: times)
    }

    static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 }
    }
}
