/// Where a record was read: the file (as the caller named it, or the file inside a folder) and
/// its 1-based line.
struct SourceLocation {
    var file: String
    var line: Int
}

/// One import run, shared by every format: it takes records as a format reads them, refuses
/// duplicates within the file, derives missing uids, applies the conflict and error policies,
/// counts what happened and reports progress. The formats only parse.
/// A chat message a line-by-line reader is gathering (its text may go on over the next lines).
protocol PendingMessage {
    /// The line it starts on.
    var line: Int { get }
    /// Whether its text grew past the content limit.
    var tooLong: Bool { get }
}

final class Importer {
    let writer: ImportWriter
    let options: ImportOptions
    @exclusivity(unchecked) private(set) var report = ImportReport()

    /// The uids met in this file, one set per entity (``UIDSet``): 16 bytes a record in a table at
    /// most half full, the only memory an import keeps per record (1 000 000 records: 32 MB).
    @exclusivity(unchecked) private var seen = (0..<Entity.allCases.count).map { _ in UIDSet() }
    /// How often each derived identity occurred so far, so identical uid-less records differ.
    @exclusivity(unchecked) private var occurrences: [UInt128: Int] = [:]

    private var total: Int64 = 0
    private var done: Int64 = 0
    @exclusivity(unchecked) private var sinceProgress = 0
    /// Records between two progress calls.
    static let progressEvery = 512

    /// How the file's times without a zone are read (`tz=`).
    let times: TimeReader

    init(writer: ImportWriter, options: ImportOptions) throws {
        self.writer = writer
        self.options = options
        times = TimeReader(zone: try options.timeZone.map { try ImportZone.named($0) } ?? .utc)
    }

    // MARK: - Records

    /// Imports one record read at `location`, or handles its error by the error policy.
    func add(_ read: @autoclosure () throws -> ExchangeRecord, at location: SourceLocation) throws {
        do {
            let record = try read()
            if let outcome = try put(record, at: location) { count(outcome, at: location) }
        } catch let error as NotesError where error.kind == .format || error.kind == .validation {
            // A format that knows the line better (a Markdown file's front matter) sets it.
            var location = location
            if let line = error.line { location.line = line }
            try fail(error, at: location)
        }
        try tick()
    }

    /// Notes a symbolic link left unread because it leads outside the folder imported (or nowhere).
    func skippedLink(_ relative: String) {
        report.skippedLinks.append(relative)
    }

    /// Counts one record's outcome (also a conversation a transcript or CSV row brings along); a
    /// skipped record is listed with its place and reason.
    func count(_ outcome: ImportOutcome, at location: SourceLocation) {
        switch outcome {
        case .created: report.created += 1
        case .updated: report.updated += 1
        case let .skipped(reason): skip(reason, at: location)
        }
    }

    /// A record the file holds but the import leaves out on purpose (an empty note, a service
    /// message, a record already stored): counted as skipped and listed with its place and reason.
    func skip(_ reason: SkipReason, at location: SourceLocation) {
        report.skipped += 1
        if report.skips.count < ImportReport.maxListedSkips {
            report.skips.append(SkippedRecord(file: location.file, line: location.line, reason: reason))
        }
    }

    /// Skips a record read at `location` (see ``skip(_:at:)``) and counts it towards progress.
    func leaveOut(_ reason: SkipReason, at location: SourceLocation) throws {
        try flush()
        skip(reason, at: location)
        try tick()
    }

    // MARK: - Batches

    /// New articles and messages wait here, in file order, and go into the store together through
    /// the one bulk insert path (``ImportWriter/put(articles:policy:)``, ``ImportWriter/put(messages:)``);
    /// their outcomes are counted then, at their places. Only one kind waits at a time: any other
    /// record, a skip, a look-up of stored messages and the end of the import write them first, so
    /// the store and the report see the file's order.
    ///
    /// (The run-time exclusivity checks of the per-record properties here and in ``ImportWriter``
    /// are off: an import runs on one thread, inside its write; each record paid some 1 400
    /// instructions of `swift_beginAccess`/`swift_endAccess` on the writer's thread, the import's
    /// busiest.)
    @exclusivity(unchecked) private var articleBatch: [(article: Article, given: Given, modifiedAt: Timestamp?)] = []
    @exclusivity(unchecked) private var articleLocations: [SourceLocation] = []
    @exclusivity(unchecked) private var messageBatch: [Message] = []
    @exclusivity(unchecked) private var messageLocations: [SourceLocation] = []
    /// Records per batch.
    static let batchSize = 512

    /// Writes the records waiting, and counts their outcomes.
    func flush() throws {
        if !articleBatch.isEmpty {
            let outcomes = try writer.put(articles: articleBatch, policy: options.onConflict)
            for (outcome, location) in zip(outcomes, articleLocations) { count(outcome, at: location) }
            articleBatch.removeAll(keepingCapacity: true)
            articleLocations.removeAll(keepingCapacity: true)
        }
        if !messageBatch.isEmpty {
            let outcomes = try writer.put(messages: messageBatch)
            for (outcome, location) in zip(outcomes, messageLocations) { count(outcome, at: location) }
            messageBatch.removeAll(keepingCapacity: true)
            messageLocations.removeAll(keepingCapacity: true)
        }
    }

    /// Imports `record`: its outcome, or nil when it waits in a batch (counted when written).
    private func put(_ record: ExchangeRecord, at location: SourceLocation) throws -> ImportOutcome? {
        switch record {
        case .article:
            if !messageBatch.isEmpty { try flush() }
        case .message:
            if !articleBatch.isEmpty { try flush() }
        case .draft, .conversation:
            try flush()
        }
        let policy = options.onConflict
        switch record {
        case let .article(r):
            let uid = try claim(.article, r.uid, identity: [r.title, r.content, r.createdAt?.iso8601 ?? ""])
            // A missing creation time is the update time, or the file's, or now: never after the update.
            let created = r.createdAt ?? min(r.updatedAt ?? .init(milliseconds: .max), r.modifiedAt ?? writer.now)
            let article = Article(id: 0, uid: uid, title: r.title, content: r.content, createdAt: created,
                                  updatedAt: r.updatedAt ?? created, revision: r.revision ?? 1)
            articleBatch.append((article, Given(createdAt: r.createdAt != nil, updatedAt: r.updatedAt != nil, revision: r.revision != nil),
                                 r.modifiedAt))
            articleLocations.append(location)
            if articleBatch.count >= Self.batchSize { try flush() }
            return nil
        case let .draft(r):
            let uid = try claim(.draft, r.uid, identity: [r.articleUid ?? "", r.title, r.content, r.createdAt?.iso8601 ?? ""])
            let created = r.createdAt ?? min(r.updatedAt ?? .init(milliseconds: .max), writer.now)
            let draft = Draft(id: 0, uid: uid, articleId: nil, baseRevision: r.articleUid == nil ? nil : r.baseRevision,
                              title: r.title, content: r.content, createdAt: created, updatedAt: r.updatedAt ?? created)
            return try writer.put(draft: draft, articleUid: r.articleUid,
                                  given: Given(createdAt: r.createdAt != nil, updatedAt: r.updatedAt != nil, revision: false), policy: policy)
        case let .conversation(r):
            let uid = try claim(.conversation, r.uid, identity: [r.title, r.createdAt?.iso8601 ?? ""])
            let created = r.createdAt ?? r.lastActivityAt ?? writer.now
            let conversation = Conversation(id: 0, uid: uid, title: r.title, createdAt: created,
                                            lastActivityAt: max(r.lastActivityAt ?? created, created))
            return try writer.put(conversation: conversation, given: Given(createdAt: r.createdAt != nil, updatedAt: r.lastActivityAt != nil,
                                                                           revision: false), policy: policy).0
        case let .message(r):
            let conversationId = try conversation(of: r)
            var occurrence = 0
            let uid = try claim(.message, r.uid, identity: Self.identity(of: r), occurrence: &occurrence)
            if r.matchByContent, let sentAt = r.sentAt, try { try flush(); return true }(),
               try writer.countSame(conversationId: conversationId, second: sentAt, fromMe: r.fromMe, content: r.content) > occurrence {
                return .skipped(.transcriptMessageStored)
            }
            let message = Message(id: 0, uid: uid, conversationId: conversationId, content: r.content, fromMe: r.fromMe,
                                  sentAt: r.sentAt ?? writer.now, sender: r.sender)
            messageBatch.append(message)
            messageLocations.append(location)
            if messageBatch.count >= Self.batchSize { try flush() }
            return nil
        }
    }

    /// What a message without a uid is told by (its uid is derived from it): only made for such a
    /// message (`claim` takes it as an autoclosure), not for every row of a file with uids.
    private static func identity(of r: MessageRecord) -> [String] {
        if let identity = r.identity { return identity }
        var identity = [r.conversationUid ?? r.conversationTitle ?? "", r.content, r.fromMe ? "me" : "them", r.sentAt?.iso8601 ?? ""]
        if let sender = r.sender { identity.append(sender) }
        return identity
    }

    /// The id of a message's conversation: by uid, stored or imported earlier; a CSV row may bring
    /// the conversation with it (uid and title, or a title alone), which is then created.
    private func conversation(of r: MessageRecord) throws -> Int64 {
        let uid = r.conversationUid ?? DerivedUID.make(["conversation", r.conversationTitle ?? ""])
        if let id = try writer.conversationId(uid: uid) { return id }
        guard let title = r.conversationTitle else {
            throw formatError("conversation_uid", "conversation_uid \(uid) is neither in the store nor earlier in the file")
        }
        return try conversation(uid: uid, title: title, firstSentAt: r.sentAt).1
    }

    /// The conversation with `uid`, stored or created (titled `title`) for the chat a file brings
    /// (a CSV row, a transcript, a Telegram or WhatsApp chat). A conversation created here is dated
    /// by its earliest imported message, and counted as created (at `location`'s line).
    func conversation(uid: String, title: String, firstSentAt: Timestamp?,
                      at location: SourceLocation? = nil) throws -> (String, Int64) {
        if let id = try writer.conversationId(uid: uid) { return (uid, id) }
        try flush()
        let created = firstSentAt ?? writer.now
        let (outcome, id) = try writer.put(conversation: Conversation(id: 0, uid: uid, title: title, createdAt: created, lastActivityAt: created),
                                           given: Given(createdAt: false, updatedAt: false, revision: false), policy: .skip)
        if outcome == .created { report.created += 1 }
        return (uid, id)
    }

    /// The record's uid (given, or derived from `identity`), refused when the file had it already.
    /// `occurrence` tells how many identical uid-less records came before this one in the file.
    func claim(_ entity: Entity, _ given: String?, identity: @autoclosure () -> [String]) throws -> String {
        var occurrence = 0
        return try claim(entity, given, identity: identity(), occurrence: &occurrence)
    }

    func claim(_ entity: Entity, _ given: String?, identity: @autoclosure () -> [String], occurrence: inout Int) throws -> String {
        let uid: String
        if let given {
            uid = given
        } else {
            let base = DerivedUID.make([entity.name] + identity())
            let key = UID.bits(base)
            let n = occurrences[key, default: 0]
            occurrences[key] = n + 1
            occurrence = n
            uid = n == 0 ? base : DerivedUID.make([base, String(n)])
        }
        guard seen[entity.rawValue].insert(UID.bits(uid)) else {
            throw formatError("uid", "the file has two \(entity.name)s with uid \(uid)")
        }
        return uid
    }

    // MARK: - Errors

    /// A record-level error: with `onError = .raise` it stops the import (which then writes
    /// nothing); with `.skip` it is listed in the report and the import goes on.
    /// Opens the import file `path`: its size is the progress total, its byte order mark skipped.
    func open(_ path: String) throws -> InputFile {
        let file = try InputFile(path: path)
        try begin(total: file.size)
        try file.skipByteOrderMark()
        return file
    }

    /// The message a line-by-line chat reader was gathering, taken for writing with where it
    /// starts: nil when there is none, or when it grew past the content limit (refused there).
    func take<Message: PendingMessage>(_ pending: inout Message?, in path: String) throws -> (Message, SourceLocation)? {
        guard let message = pending else { return nil }
        pending = nil
        let location = SourceLocation(file: path, line: message.line)
        guard !message.tooLong else {
            try fail(formatError("content", "the message is longer than \(TextRules.maxContentLength) characters"), at: location)
            return nil
        }
        return (message, location)
    }

    func fail(_ error: NotesError, at location: SourceLocation) throws {
        let located = Importer.locate(error, at: location)
        guard options.onError == .skip else { throw located }
        guard report.errors.count < Self.maxErrors else {
            throw NotesError(.format, "\(location.file): more than \(Self.maxErrors) malformed records; is it the right file and format? Nothing was written (the last: \(located.message))",
                             field: error.field, line: location.line, file: location.file)
        }
        report.errors.append(located)
    }

    /// With `onError = .skip`, an import stops (writing nothing) past this many malformed records:
    /// the report holds every error, and a file that is all errors is not worth holding them for.
    static let maxErrors = 100_000

    /// `error` as a `.format` error naming the file and line in its message and fields.
    static func locate(_ error: NotesError, at location: SourceLocation) -> NotesError {
        var located = error
        located.kind = .format
        located.file = location.file
        located.line = location.line
        var prefix = "\(location.file), line \(location.line)"
        if let field = error.field { prefix += ", field \(field)" }
        located.message = prefix + ": " + error.message
        return located
    }

    // MARK: - Progress

    /// Starts counting progress towards `total` (bytes, or files) and reports (0, total).
    func begin(total: Int64) throws {
        self.total = max(total, 0)
        try callProgress(0)
    }

    /// Moves progress to `done` (reported every ``progressEvery`` records).
    func advance(to done: Int64) {
        self.done = min(done, total)
    }

    private func tick() throws {
        sinceProgress += 1
        if sinceProgress >= Self.progressEvery {
            sinceProgress = 0
            try callProgress(done)
        }
    }

    private func callProgress(_ value: Int64) throws {
        guard let progress = options.progress else { return }
        if !progress(value, total) {
            throw NotesError(.cancelled, "the import was cancelled by its progress callback; nothing was written")
        }
    }

    /// Finishes the writes (conversations' last activity) and reports the end (total, total); a
    /// cancel here still rolls everything back.
    func finish() throws {
        try flush()
        try writer.finish()
        try callProgress(total)
    }
}
