#if canImport(Glibc)
import Glibc
#endif

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

    /// Reads `path` into `importer`. The lines are read and parsed a chunk ahead on a second
    /// thread (see ``ReadAhead``) while this one writes the records of the chunk before: the
    /// importer sees the same records, errors and places in the same order as when one thread did
    /// both.
    static func read(_ path: String, into importer: Importer) throws {
        let file = try importer.open(path)
        let ahead = ReadAhead(file: file, path: path, times: importer.times)
        defer { ahead.stop() }
        while true {
            let chunk = ahead.next()
            for line in chunk.lines {
                try importer.add(try line.record.get(), at: line.location)
                importer.advance(to: line.consumed)
            }
            if let fatal = chunk.fatal { throw fatal }
            if chunk.atEnd { return }
        }
    }

    /// Reads and parses a JSON Lines file one chunk of lines at a time, the next chunk on a thread
    /// of its own while the importer writes the one before (2 cores: parsing costs the import
    /// nothing of its own thread). One chunk is parsed at a time, in file order, and at most two
    /// are in memory (the one being written, the one being parsed), so memory stays bounded.
    ///
    /// `@unchecked Sendable`: the file, the header flag and the chunk are touched by one thread at a
    /// time; the parsing thread is joined (``next()``, ``stop()``) before the caller reads them.
    final class ReadAhead: @unchecked Sendable {
        /// One non-blank line that is not the header: its place, the file offset after it (for
        /// progress) and its record, or the record's error for the importer's error policy.
        struct Line {
            var location: SourceLocation
            var consumed: Int64
            var record: Result<ExchangeRecord, any Error>
        }

        /// The lines of one chunk, then, at the end of the file or at an error that stops the
        /// import whatever the policy (a bad header, a line too long, a failed read), `atEnd` or `fatal`.
        struct Chunk {
            var lines: [Line] = []
            var fatal: (any Error)?
            var atEnd = false
        }

        /// A chunk ends after this many lines, or this many bytes of them.
        static let chunkLines = 1_024
        static let chunkBytes = 1 << 20

        private let file: InputFile
        private let path: String
        private let times: TimeReader
        /// True until the first non-blank line, which may be the header.
        private var first = true
        private let parsed = WorkAhead<Chunk>()

        init(file: InputFile, path: String, times: TimeReader) {
            self.file = file
            self.path = path
            self.times = times
            startParsing()
        }

        /// The next chunk of the file (waiting for its thread), the one after it started meanwhile.
        func next() -> Chunk {
            let chunk = parsed.take() ?? Chunk(atEnd: true)
            if !chunk.atEnd && chunk.fatal == nil { startParsing() }
            return chunk
        }

        private func startParsing() { parsed.start { self.parse() } }

        /// Waits for the chunk being parsed, if any (an import that stops early calls it).
        func stop() { _ = parsed.take() }

        /// Parses the next chunk.
        private func parse() -> Chunk {
            var chunk = Chunk()
            chunk.lines.reserveCapacity(Self.chunkLines)
            var bytes = 0
            do {
                while chunk.lines.count < Self.chunkLines && bytes < Self.chunkBytes {
                    guard let line = try file.nextLine() else {
                        chunk.atEnd = true
                        break
                    }
                    let location = SourceLocation(file: path, line: file.lineNumber)
                    if JSONLines.isBlank(line) { continue }
                    bytes += line.count
                    if first {
                        first = false
                        if try JSONLines.header(line, at: location) { continue }
                    }
                    chunk.lines.append(Line(location: location, consumed: file.consumed,
                                            record: Result { try JSONLines.record(line, times: times) }))
                }
            } catch {
                chunk.fatal = error
            }
            return chunk
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
        if let article = try article(line, times: times) { return article }
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

    /// The keys of an article line, in the order of ``article(_:times:)``'s fields.
    private static let articleKeys: [[UInt8]] = ["type", "uid", "title", "content", "created_at", "updated_at", "revision"].map { Array($0.utf8) }

    /// An article line (the lines of a big import), read without building its JSON value: its
    /// members in one pass, each key matched as bytes, each value read as the general way reads
    /// it. Nil for any line that is not a plain article (another type, a key with an escape, an
    /// unknown or repeated key, a required field missing or null, a value of the wrong type, a
    /// syntax error): such a line goes the general way, which gives it its error. The record's own
    /// rules (``Fields/article(_:)``) are checked here, as the general way checks them.
    private static func article(_ line: UnsafeBufferPointer<UInt8>, times: TimeReader) throws -> ExchangeRecord? {
        var uid: String?, title: String?, content: String?
        var created: Timestamp?, updated: Timestamp?, revision: Int64?
        var seen = 0
        do {
            var p = JSONParser(line)
            p.skipSpace()
            guard p.i < line.count, line[p.i] == 123 else { return nil }
            p.i += 1
            members: while true {
                p.skipSpace()
                guard p.i < line.count, line[p.i] == 34 else { return nil }
                let start = p.i + 1
                var end = start
                while end < line.count, line[end] != 34, line[end] != 92 { end += 1 }
                guard end < line.count, line[end] == 34,
                      let field = articleKeys.firstIndex(where: { $0.elementsEqual(UnsafeBufferPointer(rebasing: line[start..<end])) }),
                      seen & (1 << field) == 0 else { return nil }
                seen |= 1 << field
                p.i = end + 1
                p.skipSpace()
                guard p.i < line.count, line[p.i] == 58 else { return nil }
                p.i += 1
                let value = try p.parseValue()
                switch (field, value) {
                case (0, .string("article")): break
                case (1, .string(let s)): uid = s
                case (2, .string(let s)): title = s
                case (3, .string(let s)): content = s
                case (1, .null), (6, .null): break
                case (4, _): created = try times.timestamp(value, field: "created_at")
                case (5, _): updated = try times.timestamp(value, field: "updated_at")
                case (6, .int(let v)): revision = v
                default: return nil
                }
                p.skipSpace()
                guard p.i < line.count else { return nil }
                switch line[p.i] {
                case 44: p.i += 1
                case 125: p.i += 1; break members
                default: return nil
                }
            }
            p.skipSpace()
            guard p.i == line.count else { return nil }
        } catch {
            return nil
        }
        guard seen & 1 != 0, let title, let content else { return nil }
        return .article(try Fields.article(ArticleRecord(uid: uid, title: title, content: content, createdAt: created,
                                                         updatedAt: updated, revision: revision)))
    }

    static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 }
    }
}
