// What people who analyse their notes and chats ask for: counts, per-conversation figures,
// lookups by title, and bulk reads and edits by id, each one read or one transaction.

/// What a bulk read does about ids that name no record.
public enum MissingPolicy: Sendable {
    /// `.notFound` naming the missing ids; nothing is returned.
    case error
    /// Leaves them out.
    case skip
}

/// One row of ``ArticleStore/updateMany(_:)``: the article `id`, its new title and/or content,
/// and optionally the revision it was read at.
public struct ArticleUpdate: Sendable, Equatable {
    public var id: Int64
    public var title: String?
    public var content: String?
    public var expectedRevision: Int64?

    public init(id: Int64, title: String? = nil, content: String? = nil, expectedRevision: Int64? = nil) {
        self.id = id
        self.title = title
        self.content = content
        self.expectedRevision = expectedRevision
    }
}

extension NotesError {
    /// This error as the failure of record `index` of a bulk call of `count` records: the
    /// record's index in `line` and in the message (a single record is left as it is).
    func inRecord(_ index: Int, of count: Int) -> NotesError {
        guard count > 1 else { return self }
        var error = self
        error.line = index
        error.message = "record \(index): " + error.message
        return error
    }

    /// `.notFound` naming the ids of `entity` (plural `entities`) that do not exist (the first 20).
    static func notFound(_ entity: String, _ entities: String, ids missing: [Int64]) -> NotesError {
        let shown = missing.prefix(20).map(String.init).joined(separator: ", ")
        let more = missing.count > 20 ? " and \(missing.count - 20) more" : ""
        let message = missing.count == 1 ? "\(entity) \(missing[0]) does not exist"
            : "\(missing.count) \(entities) do not exist: \(shown)\(more)"
        return NotesError(.notFound, message, field: "ids", code: "\(entity)_not_found")
    }
}

/// Steps `sql` (one `?`, the id) once per id in the order given, handing each row found to `body`;
/// the ids with no row are gathered and, unless `missing` is `.skip`, thrown as `.notFound`.
/// O(k log n) for k ids.
private func eachRow(_ db: Connection, _ sql: String, ids: [Int64], missing: MissingPolicy, entity: String, entities: String,
                     _ body: (Statement) throws -> Void) throws {
    let stmt = try db.prepare(sql)
    var absent: [Int64] = []
    for id in ids {
        stmt.reset()
        stmt.bind(1, id)
        if try stmt.step() { try body(stmt) } else { absent.append(id) }
    }
    stmt.reset()
    if !absent.isEmpty && missing == .error { throw NotesError.notFound(entity, entities, ids: absent) }
}

extension Store {
    /// The rows of `table` (`articles`, `messages`) with `ids`, read by the statement `byID`
    /// (binds an id), in the order given, in one read; missing ids as `missing` says. O(k log n).
    private func readMany(_ table: String, _ byID: KeyPath<StoreSQL, String>, ids: [Int64], missing: MissingPolicy,
                          _ body: (Statement) throws -> Void) throws {
        try read { db in
            try eachRow(db, db.sql[keyPath: byID], ids: ids, missing: missing, entity: String(table.dropLast()), entities: table, body)
        }
    }

    /// ``readMany(_:_:ids:missing:_:)`` as records, each decoded by `record`: a store's `getMany`.
    func readMany<Record>(_ table: String, _ byID: KeyPath<StoreSQL, String>, ids: [Int64], missing: MissingPolicy,
                          _ record: (Statement) -> Record) throws -> [Record] {
        var out: [Record] = []
        out.reserveCapacity(ids.count)
        try readMany(table, byID, ids: ids, missing: missing) { out.append(record($0)) }
        return out
    }

    /// ``readMany(_:_:ids:missing:_:)`` as rows appended to `batch` by `appender` (made for
    /// `batch`): a store's `getManyBatch`.
    func readMany(_ table: String, _ byID: KeyPath<StoreSQL, String>, ids: [Int64], missing: MissingPolicy,
                  into batch: ColumnBatch, _ appender: some RowAppender) throws -> ColumnBatch {
        try readMany(table, byID, ids: ids, missing: missing) { appender.append($0); batch.endRow() }
        return batch
    }
}

// MARK: - Articles

extension ArticleStore {
    /// The articles with `ids`, in the order given (an id given twice comes twice), read at one
    /// moment. An id with no article is `.notFound` naming the missing ids, or left out with
    /// `.skip`. O(k log n).
    public func getMany(_ ids: [Int64], missing: MissingPolicy = .error) throws -> [Article] {
        try store.readMany("articles", \.articles.byID, ids: ids, missing: missing, Self.article(from:))
    }

    /// ``getMany(_:missing:)`` as a batch of article columns.
    public func getManyBatch(_ ids: [Int64], missing: MissingPolicy = .error) throws -> ColumnBatch {
        let batch = Self.batch()
        return try store.readMany("articles", \.articles.byID, ids: ids, missing: missing, into: batch, Appender(batch))
    }

    /// Updates many articles in one transaction: all of them, or none. Each row is as
    /// ``update(_:title:content:expectedRevision:)``: a stale `expectedRevision` is `.conflict`
    /// naming the article and the record (`line`), an unknown id `.notFound`, an empty title
    /// `.validation`; an id given twice is `.validation` (`duplicate_id`) before anything is
    /// read. Returns the articles as saved, in the order given. O(k log n).
    public func updateMany(_ rows: [ArticleUpdate]) throws -> [Article] {
        var seen = Set<Int64>()
        seen.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() where !seen.insert(row.id).inserted {
            let first = rows.firstIndex { $0.id == row.id } ?? 0
            throw NotesError(.validation, "article \(row.id) is given twice (records \(first) and \(index)); give each article once",
                             field: "id", line: index, code: "duplicate_id")
        }
        for (index, row) in rows.enumerated() {
            if let revision = row.expectedRevision, revision < 1 {
                throw NotesError(.validation, "expected_revision must be a positive revision, got \(revision)", field: "expected_revision")
                    .inRecord(index, of: rows.count)
            }
        }
        return try store.write { tx in
            var out: [Article] = []
            out.reserveCapacity(rows.count)
            for (index, row) in rows.enumerated() {
                do {
                    out.append(try Self.update(tx, row.id, title: row.title, content: row.content, expectedRevision: row.expectedRevision))
                } catch let error as NotesError {
                    throw error.inRecord(index, of: rows.count)
                }
            }
            return out
        }
    }

    /// Deletes the articles with `ids` and everything derived from them, in one transaction: all
    /// of them, or (when one does not exist) none, `.notFound` naming the missing ids. An id given
    /// twice is deleted once. They go in id order (the change feed lists them so), which walks the
    /// tables and indexes forward instead of jumping about. Returns how many were deleted. O(k log n).
    @discardableResult
    public func deleteMany(_ ids: [Int64]) throws -> Int {
        try store.write { tx in
            var articles: [Article] = []
            try eachRow(tx.connection, tx.connection.sql.articles.byID, ids: Set(ids).sorted(),
                        missing: .error, entity: "article", entities: "articles") { articles.append(Self.article(from: $0)) }
            try tx.prepare(tx.connection.sql.articles.delete).run(eachBinding: articles.lazy.map(\.id))
            for article in articles { try tx.announce(.articleDeleted(article)) }
            return articles.count
        }
    }
}

// MARK: - Messages

extension MessageStore {
    /// How many messages (of `conversation`, or of all) were sent within `range` by `fromMe` (or
    /// anyone). `.notFound` for an unknown conversation. O(log n + count) over an index; O(log n)
    /// for a whole conversation (its count is kept in its row by every write of its messages), and
    /// O(conversations) for all messages (the sum of those).
    public func count(conversation: Int64? = nil, range: TimeRange = .all, fromMe: Bool? = nil) throws -> Int {
        try select(conversation: conversation, since: range.since, until: range.until, fromMe: fromMe).count()
    }

    /// The messages with `ids`, in the order given, read at one moment; missing ids as for
    /// ``ArticleStore/getMany(_:missing:)``. O(k log n).
    public func getMany(_ ids: [Int64], missing: MissingPolicy = .error) throws -> [Message] {
        try store.readMany("messages", \.messages.byID, ids: ids, missing: missing, Self.message(from:))
    }

    /// ``getMany(_:missing:)`` as a batch of message columns.
    public func getManyBatch(_ ids: [Int64], missing: MissingPolicy = .error) throws -> ColumnBatch {
        let batch = Self.batch()
        return try store.readMany("messages", \.messages.byID, ids: ids, missing: missing, into: batch, Appender(batch))
    }

    /// Deletes the messages with `ids` in one transaction: all of them, or (when one does not
    /// exist) none, `.notFound` naming the missing ids. An id given twice is deleted once. They go
    /// in id order, as for articles. The conversations' last activity stays. Returns how many were
    /// deleted. O(k log n).
    @discardableResult
    public func deleteMany(_ ids: [Int64]) throws -> Int {
        try store.write { tx in
            // Each row goes with one statement (DELETE … RETURNING); a missing id rolls them all back.
            var rows: [DeletedMessage] = []
            try eachRow(tx.connection, tx.connection.sql.messages.deleteReturning, ids: Set(ids).sorted(),
                        missing: .error, entity: "message", entities: "messages") { stmt in
                rows.append((stmt.int64(0), stmt.int64(3), stmt.uid(1), stmt.text(2)))
            }
            try tx.announce(.messagesDeleted(rows))
            return rows.count
        }
    }

    /// Deletes the messages of conversation `conversationId` sent within `range`, in one
    /// transaction, and returns how many. `.notFound` for an unknown conversation; an empty range
    /// deletes nothing. O(log n + k log n) for k messages, by the index `(conversation_id, sent_at, id)`.
    @discardableResult
    public func deleteRange(in conversationId: Int64, range: TimeRange) throws -> Int {
        try store.write { tx in
            _ = try ConversationStore.require(tx.connection, conversationId)
            let walk = Self.historyWalk(conversationId, "SELECT id, uid, content FROM messages", range: range).ordered(ascending: true)
            var rows: [DeletedMessage] = []
            for stmt in try walk.statements(tx.connection, after: nil) {
                defer { stmt.reset() }
                while try stmt.step() { rows.append((stmt.int64(0), conversationId, stmt.uid(1), stmt.text(2))) }
            }
            try Self.delete(tx, rows)
            return rows.count
        }
    }

    /// Deletes the messages `rows` (all existing), their search entries and records each deletion.
    static func delete(_ tx: WriteContext, _ rows: [DeletedMessage]) throws {
        try tx.prepare(tx.connection.sql.messages.delete).run(eachBinding: rows.lazy.map(\.id))
        try tx.announce(.messagesDeleted(rows))
    }
}

// MARK: - Conversations

extension ConversationStore {
    /// How many conversations the store holds. O(n) over the smallest index.
    public func count() throws -> Int {
        try select().count()
    }

    /// The conversations titled exactly `title` (byte for byte: no case folding or normalisation),
    /// most recent activity first. O(conversations): titles are not indexed.
    public func find(title: String) throws -> [Conversation] {
        try store.read { db in
            let stmt = try db.prepare(db.sql.conversations.allTitled)
            stmt.bind(1, title)
            defer { stmt.reset() }
            var out: [Conversation] = []
            while try stmt.step() { out.append(Self.conversation(from: stmt)) }
            return out
        }
    }

    /// Per-conversation figures, most recent activity first: id, title, messages, sent (by the
    /// user), received, first_at and last_at (null for a conversation without messages). One pass
    /// over the messages, grouped by conversation. (Columns: ``statsBatch()``.)
    public func stats() -> Selection {
        Selection(store: store, table: "conversations LEFT JOIN (SELECT conversation_id AS stats_id, count(*) AS stats_n, "
                    + "sum(from_me) AS stats_sent, min(sent_at) AS stats_first, max(sent_at) AS stats_last FROM messages "
                    + "GROUP BY conversation_id) AS stats ON stats_id = conversations.id",
                  columns: "conversations.id, title, coalesce(stats_n, 0), coalesce(stats_sent, 0), stats_first, stats_last",
                  key: "last_activity_at", tie: "activity_seq", conditions: [], binds: [], ascending: false,
                  parallelWorthTrying: false, makeBatch: Self.statsBatch, appender: { RowByRow($0, Self.appendStatsRow) })
    }

    /// The columns of ``stats()``.
    public static func statsBatch() -> ColumnBatch {
        ColumnBatch([Column("id", .int64), Column("title", .string), Column("messages", .int64), Column("sent", .int64),
                     Column("received", .int64), Column("first_at", .timestamp, nullable: true),
                     Column("last_at", .timestamp, nullable: true)])
    }

    static func appendStatsRow(_ stmt: Statement, _ batch: ColumnBatch) {
        let c = batch.columns
        c[0].append(stmt.int64(0))
        stmt.withUTF8(1) { c[1].append(utf8: UnsafeRawBufferPointer($0)) }
        let n = stmt.int64(2), sent = stmt.int64(3)
        c[2].append(n)
        c[3].append(sent)
        c[4].append(n - sent)
        if stmt.isNull(4) { c[5].appendNull() } else { c[5].append(stmt.int64(4)) }
        if stmt.isNull(5) { c[6].appendNull() } else { c[6].append(stmt.int64(5)) }
    }
}
