/// The store's side of import and export: every row in a stable order for an export, and writes
/// that keep the uid, times and revision an import file gives. The formats (NotesKit/Exchange)
/// speak to the store only through these two types; no SQL lives there.

/// What an import does with a record whose uid the store already has. Messages are immutable: a
/// stored message is kept whatever the policy.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// Keep the stored record.
    case skip
    /// Overwrite the stored record with the file's.
    case replace
    /// Overwrite the stored record only when the file's `updated_at` is later (records without an
    /// update time, conversations, are kept as stored).
    case newer
}

/// What happened to one imported record.
public enum ImportOutcome: Sendable, Equatable {
    case created, updated
    case skipped(SkipReason)
}

/// Which of a record's optional fields its file gave: a field left out takes the stored record's
/// value, so storing what is already there writes nothing whatever the file leaves out.
struct Given {
    var createdAt: Bool
    /// The update time (an article's or draft's), or a conversation's last activity.
    var updatedAt: Bool
    var revision: Bool
}

/// Reads every row for an export, inside one read transaction: the export is a consistent
/// snapshot even while other connections write. Rows come oldest first (by id), one at a time.
final class ExportReader {
    let db: Connection
    /// Only articles created and messages sent within it (see ``ExportOptions/range``).
    let range: TimeRange

    init(_ db: Connection, range: TimeRange = .all) {
        self.db = db
        self.range = range
    }

    /// `all` without a range; with one, `within` with the range bound from parameter `first`
    /// (since, inclusive, then until, exclusive; an open end binds Int64.min / Int64.max).
    private func statement(_ all: String, _ within: String, rangeFrom first: Int32 = 1) throws -> Statement {
        guard range != .all else { return try db.prepare(all) }
        let stmt = try db.prepare(within)
        stmt.bind(first, range.since?.milliseconds ?? Int64.min)
        stmt.bind(first + 1, range.until?.milliseconds ?? Int64.max)
        return stmt
    }

    /// How many conversations the store holds. O(n).
    func conversationCount() throws -> Int {
        Int(try Store.scalar(db, db.sql.exchange.countConversations))
    }

    /// Every article, by id. O(n), one row in memory at a time.
    func forEachArticle(_ body: (Article) throws -> Void) throws {
        let stmt = try statement(db.sql.exchange.articles, db.sql.exchange.articlesWithin)
        defer { stmt.reset() }
        while try stmt.step() { try body(ArticleStore.article(from: stmt)) }
    }

    /// Every draft with unsaved changes (as ``ArticleStore/drafts()`` lists them), by id, with the
    /// uid of the article it edits (nil for a new article's draft, or when that article was
    /// deleted since). O(n).
    func forEachDraft(_ body: (Draft, String?) throws -> Void) throws {
        guard range == .all else { return }  // a draft is an editing session, not a record of a time
        let stmt = try db.prepare(db.sql.exchange.drafts)
        defer { stmt.reset() }
        while try stmt.step() { try body(ArticleStore.draft(from: stmt), stmt.optionalUID(8)) }
    }
}

extension ExportReader {
    /// Every conversation, by id. O(n).
    func forEachConversation(_ body: (Conversation) throws -> Void) throws {
        let stmt = try statement(db.sql.exchange.conversations, db.sql.exchange.conversationsWithin)
        defer { stmt.reset() }
        while try stmt.step() { try body(ConversationStore.conversation(from: stmt)) }
    }

    /// Every message, by id, with its conversation's uid and title. O(n).
    func forEachMessage(_ body: (Message, _ conversationUid: String, _ conversationTitle: String) throws -> Void) throws {
        let stmt = try statement(db.sql.exchange.messages, db.sql.exchange.messagesWithin)
        defer { stmt.reset() }
        while try stmt.step() { try body(MessageStore.message(from: stmt), stmt.uid(7), stmt.text(8)) }
    }

    /// The messages of conversation `id` in the order a chat shows them (`sentAt`, then id). O(m).
    func forEachMessage(inConversation id: Int64, _ body: (Message) throws -> Void) throws {
        let stmt = try statement(db.sql.exchange.messagesOf, db.sql.exchange.messagesOfWithin, rangeFrom: 2)
        stmt.bind(1, id)
        defer { stmt.reset() }
        while try stmt.step() { try body(MessageStore.message(from: stmt)) }
    }

    /// The conversation with `id`, or `.notFound`.
    func conversation(_ id: Int64) throws -> Conversation {
        try ConversationStore.require(db, id)
    }

    /// The only conversation of the store; nil when there are none or several (with their number).
    func onlyConversation() throws -> (Conversation?, count: Int) {
        let count = try conversationCount()
        guard count == 1 else { return (nil, count) }
        var only: Conversation?
        try forEachConversation { only = $0 }
        return (only, 1)
    }
}

/// Writes imported records inside the import's one transaction, through the same row helpers as
/// every other write (so the change feed sees each one).
final class ImportWriter {
    let tx: WriteContext

    init(_ tx: WriteContext) { self.tx = tx }

    /// The time of the import, for records without one.
    var now: Timestamp { tx.now }

    /// Creates each article (uid, times and revision as given) through the one bulk insert path,
    /// or applies `policy` to the stored one; returns each one's outcome.
    /// Storing what is already there changes nothing and counts as skipped; fields the file left
    /// out (`given`) are the stored record's (an update time left out of a changed text is now).
    ///
    /// `newer` takes the file's record when its `updatedAt` is later, or when its text differs and
    /// the file was modified (`modifiedAt`, a Markdown file edited in an editor) after the stored
    /// update; it is then updated at that modification time.
    ///
    /// A revision never moves back: a revision number names one text of an article (a draft's
    /// base revision and cached row heights rely on it). A replaced article takes the file's
    /// revision when it is higher than the stored one, else the stored one plus one. O(log n).
    func put(articles batch: [(article: Article, given: Given, modifiedAt: Timestamp?)], policy: ConflictPolicy) throws -> [ImportOutcome] {
        let ids = try ArticleStore.insertRows(tx, batch.map(\.article))
        return try batch.indices.map { k in
            ids[k] != nil ? .created : try resolve(article: batch[k].article, given: batch[k].given, modifiedAt: batch[k].modifiedAt, policy: policy)
        }
    }

    /// A record whose uid the store holds but this connection cannot see: on a shared store
    /// (PostgreSQL), another user's record (uids are unique in the whole store; row-level security
    /// hides the row). A SQLite store never gets here.
    static func uidTakenElsewhere(_ kind: String, _ uid: String) -> NotesError {
        NotesError(.conflict, "the store holds \(kind) \(uid) already, as another user's record (a uid is unique in the whole store); nothing of this import was written: import a copy with new uids", code: "uid_taken")
    }

    /// What `policy` does with `article`, whose uid is stored already (see ``put(articles:policy:)``).
    private func resolve(article: Article, given: Given, modifiedAt: Timestamp?, policy: ConflictPolicy) throws -> ImportOutcome {
        guard let stored = try ArticleStore.fetch(tx.connection, uid: article.uid) else {
            throw Self.uidTakenElsewhere("article", article.uid)
        }
        var incoming = article
        incoming.id = stored.id
        let sameText = incoming.title == stored.title && incoming.content == stored.content
        if !given.createdAt { incoming.createdAt = stored.createdAt }
        if !given.updatedAt { incoming.updatedAt = sameText ? stored.updatedAt : max(now, incoming.createdAt) }
        if !given.revision { incoming.revision = stored.revision }
        if sameText && incoming.createdAt == stored.createdAt && incoming.updatedAt == stored.updatedAt
            && incoming.revision <= stored.revision { return .skipped(.unchanged) }
        let edited = !sameText && (modifiedAt.map { $0 > stored.updatedAt } ?? false)
        switch policy {
        case .skip: return .skipped(.keptBySkip)
        case .replace: break
        case .newer:
            guard (given.updatedAt && incoming.updatedAt > stored.updatedAt) || edited else { return .skipped(.notNewer) }
            if edited, let modifiedAt { incoming.updatedAt = max(incoming.updatedAt, modifiedAt) }
        }
        incoming.revision = max(incoming.revision, stored.revision + 1)
        try ArticleStore.overwrite(tx, incoming, was: stored)
        return .updated
    }

    /// Creates `draft` or applies `policy` to the stored one (fields the file left out are the
    /// stored draft's). `articleUid` names the article the draft edits: it must be in the store
    /// (imported earlier in the same file counts); nil for a new article's draft. O(log n).
    func put(draft: Draft, articleUid: String?, given: Given, policy: ConflictPolicy) throws -> ImportOutcome {
        var incoming = draft
        if let articleUid {
            guard let article = try ArticleStore.fetch(tx.connection, uid: articleUid) else {
                throw NotesError(.validation, "article_uid \(articleUid) is neither in the store nor earlier in the file", field: "article_uid")
            }
            incoming.articleId = article.id
        } else {
            incoming.articleId = nil
        }
        if try ArticleStore.insertDraft(tx, incoming) != nil { return .created }
        guard let stored = try ArticleStore.fetchDraft(tx.connection, uid: draft.uid) else {
            throw Self.uidTakenElsewhere("draft", draft.uid)
        }
        incoming.id = stored.id
        let sameText = incoming.title == stored.title && incoming.content == stored.content
        if !given.createdAt { incoming.createdAt = stored.createdAt }
        if !given.updatedAt { incoming.updatedAt = sameText ? stored.updatedAt : max(now, incoming.createdAt) }
        guard incoming != stored else { return .skipped(.unchanged) }
        guard Self.replaces(policy, given.updatedAt ? incoming.updatedAt : nil, stored.updatedAt) else {
            return .skipped(policy == .skip ? .keptBySkip : .notNewer)
        }
        try ArticleStore.overwriteDraft(tx, incoming)
        return .updated
    }

    // MARK: - Chat

    /// Conversation ids by uid, for the messages that follow their conversation (bounded).
    @exclusivity(unchecked) private var conversationIds: [String: Int64] = [:]
    /// How many messages were imported into each conversation, and the newest `sentAt`: its
    /// count and last activity move once, at the end.
    @exclusivity(unchecked) private var newestMessage: [Int64: (count: Int, newest: Int64)] = [:]
    /// Conversations this import created without a creation time, with their earliest imported
    /// message so far (Int64.max: none yet): they are dated by it at the end.
    @exclusivity(unchecked) private var undated: [Int64: Int64] = [:]

    /// Creates `conversation` (uid, title and times as given) or applies `policy` to the stored
    /// one, whose last activity never moves back. Returns the outcome and the conversation's id.
    /// Conversations have no update time: `newer` keeps the stored one. O(log n).
    func put(conversation: Conversation, given: Given, policy: ConflictPolicy) throws -> (ImportOutcome, Int64) {
        if let id = try ConversationStore.insert(tx, conversation) {
            remember(conversation.uid, id)
            if !given.createdAt { undated[id] = .max }
            return (.created, id)
        }
        guard let stored = try ConversationStore.fetch(tx.connection, uid: conversation.uid) else {
            throw Self.uidTakenElsewhere("conversation", conversation.uid)
        }
        remember(stored.uid, stored.id)
        var incoming = conversation
        incoming.id = stored.id
        if !given.createdAt { incoming.createdAt = stored.createdAt }
        incoming.lastActivityAt = max(given.updatedAt ? incoming.lastActivityAt : stored.lastActivityAt, stored.lastActivityAt)
        guard incoming != stored else { return (.skipped(.unchanged), stored.id) }
        guard Self.replaces(policy, nil, nil) else { return (.skipped(policy == .skip ? .keptBySkip : .notNewer), stored.id) }
        try ConversationStore.overwrite(tx, incoming)
        return (.updated, stored.id)
    }

    /// The id of the conversation with `uid` (stored, or imported earlier), or nil.
    func conversationId(uid: String) throws -> Int64? {
        if let id = conversationIds[uid] { return id }
        guard let stored = try ConversationStore.fetch(tx.connection, uid: uid) else { return nil }
        remember(uid, stored.id)
        return stored.id
    }

    /// The oldest stored conversation titled `title`, or nil.
    func conversation(titled title: String) throws -> Conversation? {
        try ConversationStore.fetch(tx.connection, title: title)
    }

    /// The stored conversation with `id`, or `.notFound`.
    func conversation(_ id: Int64) throws -> Conversation {
        try ConversationStore.require(tx.connection, id)
    }

    private func remember(_ uid: String, _ id: Int64) {
        if conversationIds.count >= 4_096 { conversationIds.removeAll(keepingCapacity: true) }
        conversationIds[uid] = id
    }

    /// Creates each message (its `conversationId` set) through the one bulk insert path, or keeps
    /// the stored message with its uid whatever the policy: messages are immutable (nothing edits
    /// one; cached bubbles rely on it). Returns each one's outcome. O(k log n).
    func put(messages: [Message]) throws -> [ImportOutcome] {
        let ids = try MessageStore.insertRows(tx, messages)
        return try messages.indices.map { k in
            let message = messages[k]
            guard ids[k] != nil else {
                var stored = try MessageStore.fetch(tx.connection, uid: message.uid)
                stored?.id = 0
                return .skipped(stored == message ? .unchanged : .messageStored)
            }
            let sentAt = message.sentAt.milliseconds
            Self.add(sentAt, to: &newestMessage[message.conversationId, default: (0, .min)])  // one look-up, in place
            if let earliest = undated[message.conversationId], sentAt < earliest { undated[message.conversationId] = sentAt }
            return .created
        }
    }

    /// Counts one more message sent at `sentAt` (ms) into a conversation's `entry`.
    private static func add(_ sentAt: Int64, to entry: inout (count: Int, newest: Int64)) {
        entry.count += 1
        entry.newest = max(entry.newest, sentAt)
    }

    /// The conversation holding a message of `second`, sender and text like a transcript's, if
    /// any (the lowest id).
    func conversationHolding(second: Timestamp, fromMe: Bool, content: String) throws -> Int64? {
        try MessageStore.conversationHolding(tx.connection, from: second.milliseconds, to: second.milliseconds + 1_000,
                                             fromMe: fromMe, content: content)
    }

    /// How many stored messages of a conversation match a transcript line (same second, sender
    /// and text).
    func countSame(conversationId: Int64, second: Timestamp, fromMe: Bool, content: String) throws -> Int {
        try MessageStore.countSame(tx.connection, conversationId: conversationId, from: second.milliseconds,
                                   to: second.milliseconds + 1_000, fromMe: fromMe, content: content)
    }

    /// Counts each conversation's new messages and moves it to its newest one, unless its last
    /// activity is later already (as a send would).
    func finish() throws {
        for (id, earliest) in undated.sorted(by: { $0.key < $1.key }) where earliest != .max {
            try ConversationStore.redate(tx, id, createdAt: Timestamp(milliseconds: earliest))
        }
        undated.removeAll()
        for (id, added) in newestMessage.sorted(by: { $0.key < $1.key }) {
            try ConversationStore.addMessages(tx, id, count: added.count, newest: Timestamp(milliseconds: added.newest), seq: tx.lastSeq)
        }
        newestMessage.removeAll()
    }

    static func replaces(_ policy: ConflictPolicy, _ incoming: Timestamp?, _ stored: Timestamp?) -> Bool {
        switch policy {
        case .skip: return false
        case .replace: return true
        case .newer:
            guard let incoming, let stored else { return false }
            return incoming > stored
        }
    }
}

extension Store {
    /// Runs `body` with a reader over one consistent snapshot of the store (one read transaction,
    /// under the store's lock for its whole length).
    func exportSnapshot<T>(range: TimeRange = .all, _ body: (ExportReader) throws -> T) throws -> T {
        try readSnapshot { db in try body(ExportReader(db, range: range)) }
    }

    /// Runs `body` in one write transaction with an ``ImportWriter``: everything it writes commits
    /// together, or (on any error thrown, a cancel included) nothing does.
    ///
    /// The backend is tuned for a large write meanwhile (SQLite: a larger page cache, see
    /// `SQLiteConnection.withBulkWriteSettings`).
    func importing<T>(_ body: (ImportWriter) throws -> T) throws -> T {
        try write(bulk: true) { tx in try body(ImportWriter(tx)) }
    }
}
