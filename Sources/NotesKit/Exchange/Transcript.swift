/// Chat transcripts: one conversation as `[YYYY-MM-DD HH:MM:SS] Me: text` / `Them: text` lines,
/// times in UTC to the second, multi-line messages continued on the following lines (see
/// ``TranscriptLines``).
///
/// Export writes one conversation (`ExportOptions.conversation`, or the store's only one), oldest
/// message first. Import reads the same shape, one message in memory at a time, into the
/// conversation `ImportOptions.conversation` names, or else the one titled `ImportOptions.title`
/// (default: the file's name without extension), found or created. A transcript has no uids: a
/// message counts as already stored when its conversation holds one of the same second, sender and
/// text (as many as the file has come up with so far), so importing a transcript twice, or into
/// the store it came from, adds nothing. Lines before the first message must be blank. A file
/// whose first line ends with CRLF is read as CRLF throughout.
enum Transcript {
    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let file = try OutputFile.replacing(path, mode: options.fileMode)
        var report = ExportReport()
        try store.exportSnapshot(range: options.range) { reader in
            let conversation: Conversation
            if let id = options.conversation {
                conversation = try reader.conversation(id)
            } else {
                let (only, count) = try reader.onlyConversation()
                guard let only else {
                    throw NotesError(.validation, count == 0 ? "the store has no conversation to write as a transcript"
                                     : "the store has \(count) conversations: pass conversation=<id> to choose one", field: "conversation")
                }
                conversation = only
            }
            var w = JSONWriter(capacity: 1 << 19)
            try reader.forEachMessage(inConversation: conversation.id) { m in
                TranscriptLines.write(sentAt: m.sentAt, fromMe: m.fromMe, sender: m.sender, content: m.content, into: &w.bytes)
                report.messages += 1
                try file.drain(&w)
            }
            try file.drain(&w, force: true)
            report.conversations = 1
        }
        try file.commit()
        report.files = 1
        return report
    }

    // MARK: - Import

    /// A message being read: its first line and what follows.
    private struct Pending: PendingMessage {
        var header: TranscriptLines.Header
        var content: String
        var line: Int
        var tooLong = false
    }

    static func read(_ path: String, into importer: Importer) throws {
        let file = try importer.open(path)
        var target = try ChatTarget(path: path, importer: importer, kind: "transcript", defaultTitle: ChatTarget.stem(path))
        var crlf: Bool?
        var pending: Pending?

        func flush() throws {
            guard case let (message, location)? = try importer.take(&pending, in: path) else { return }
            let header = message.header
            let uid = try target.uid(first: (header.sentAt, header.fromMe, message.content), at: location)
            try importer.add(.message(try Fields.message(MessageRecord(
                uid: nil, conversationUid: uid, conversationTitle: nil, content: message.content,
                fromMe: header.fromMe, sentAt: header.sentAt, sender: header.sender, matchByContent: true))), at: location)
        }

        while let raw = try file.nextLine() {
            let number = file.lineNumber
            guard let text = String.validatingUTF8(raw) else {
                // The message this line belongs to is lost with it.
                pending = nil
                try importer.fail(formatError(nil, "the line is not valid UTF-8"), at: SourceLocation(file: path, line: number))
                continue
            }
            if crlf == nil { crlf = text.utf8.last == 13 }
            var line = Substring(text)
            if crlf == true, line.utf8.last == 13 { line = Substring(line.utf8.dropLast()) }
            if let header = TranscriptLines.header(line) {
                try flush()
                pending = Pending(header: header, content: String(header.text), line: number)
            } else if var message = pending {
                pending = nil  // one owner of the text while it grows
                if message.content.utf8.count > 4 * TextRules.maxContentLength {
                    message.tooLong = true
                } else {
                    message.content += "\n"
                    message.content += TranscriptLines.unescape(line)
                }
                pending = message
            } else if !line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                try importer.fail(formatError(nil, "expected a message line like [2026-11-29 15:28:06] Me: text (or Them: text)"),
                                  at: SourceLocation(file: path, line: number))
            }
            importer.advance(to: file.consumed)
        }
        try flush()
    }

}

/// The conversation a chat file (a transcript, a WhatsApp chat) goes into, found or created when
/// its first message needs it: the conversation `ImportOptions.conversation` names; else, without
/// a `title`, the one that already holds the file's first message (the file was exported from
/// it); else the oldest one titled `title` (default: from the file's name); else a new one, dated
/// by its earliest message.
struct ChatTarget {
    let importer: Importer
    let title: String
    let kind: String
    let searchByMessage: Bool
    var resolved: String?

    init(path: String, importer: Importer, kind: String, defaultTitle: String) throws {
        self.importer = importer
        self.kind = kind
        searchByMessage = importer.options.title == nil
        if let id = importer.options.conversation {
            resolved = try importer.writer.conversation(id).uid
            title = ""
            return
        }
        if let given = importer.options.title {
            try Conversation.validate(title: given)
            title = given
        } else {
            title = TextRules.isBlank(defaultTitle) ? kind : String(defaultTitle.prefix(TextRules.maxTitleLength))
        }
    }

    /// The file's name without its extension.
    static func stem(_ path: String) -> String {
        var stem = baseName(path)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        return stem
    }

    /// The conversation's uid, given the file's first message (time, whether mine, text).
    mutating func uid(first: (sentAt: Timestamp, fromMe: Bool, content: String), at location: SourceLocation) throws -> String {
        if let resolved { return resolved }
        try importer.flush()  // the messages read so far are in the store
        let writer = importer.writer
        if searchByMessage, let id = try writer.conversationHolding(second: first.sentAt, fromMe: first.fromMe, content: first.content) {
            resolved = try writer.conversation(id).uid
        } else if let found = try writer.conversation(titled: title) {
            resolved = found.uid
        } else {
            resolved = try importer.conversation(uid: DerivedUID.make([kind, title]), title: title, firstSentAt: first.sentAt).0
        }
        return resolved ?? ""
    }
}
