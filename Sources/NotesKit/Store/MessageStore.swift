/// The chat messages of a store: send, receive, bulk import, read, delete, and history paged
/// backward from the newest.
///
/// Obtained as `store.messages`. Every method is one transaction (or one read) under the store's
/// lock; writes record their changes in the change feed in the same transaction.
public struct MessageStore: Sendable {
    let store: Store

    static let columns = "id, uid, conversation_id, content, from_me, sent_at, sender"

    /// The cursor kind of one conversation's history, so that its cursors are refused for another.
    static func historyKind(_ conversationId: Int64) -> String { "history:\(conversationId)" }

    // MARK: - Reading

    /// The message with `id`, or `.notFound`. O(log n).
    public func get(_ id: Int64) throws -> Message {
        try store.read { db in
            guard let message = try Self.fetch(db, id) else { throw NotesError.notFound("message", id) }
            return message
        }
    }

    /// The message with `id`, or nil, inside a read.
    static func fetch(_ db: Connection, _ id: Int64) throws -> Message? {
        try db.prepare(db.sql.messages.byID).bind(1, id).first(message(from:))
    }

    /// One page of the history of conversation `conversationId`, paged backward from the newest
    /// message ("load earlier").
    ///
    /// Without `before`, the newest `limit` messages; with the `nextCursor` of a page, the
    /// `limit` messages just earlier than that page. Within a page the items are oldest first, as
    /// a chat shows them; `nextCursor` is nil once nothing earlier exists. Ordered by `sentAt`,
    /// then `id`: messages added while a reader pages back are never seen twice nor make it skip
    /// one. A page at any depth costs O(log n + limit). `limit` is 1...1000; `.notFound` for an
    /// unknown conversation; a cursor of another conversation's history, or of another `range`, is
    /// `.validation` on `cursor`. With `range`, only the messages sent within it.
    public func history(of conversationId: Int64, limit: Int = 50, before cursor: String? = nil, range: TimeRange = .all) throws -> Page<Message> {
        try PageLimit.check(limit)
        let walk = Self.historyWalk(conversationId, range: range)
        let kind = walk.cursorKind(Self.historyKind(conversationId))
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        return try store.read { db in
            _ = try ConversationStore.require(db, conversationId)
            var page = store.page(try walk.rows(db, after: position, limit: limit + 1, row: Self.message(from:)), limit: limit, kind: kind) {
                .init(key: $0.sentAt.milliseconds, id: $0.id)
            }
            page.items.reverse()
            return page
        }
    }

    /// Every conversation's messages sent within `range`, newest first unless `ascending`, by the index `(sent_at, id)`.
    static func walk(_ select: String = "SELECT \(columns) FROM messages", range: TimeRange = .all, ascending: Bool = false) -> Keyset {
        Keyset(select: select, key: "sent_at", ascending: ascending, range: range)
    }

    /// One conversation's messages sent within `range`, newest first, by the index `(conversation_id, sent_at, id)`.
    static func historyWalk(_ conversationId: Int64, _ select: String = "SELECT \(columns) FROM messages", range: TimeRange = .all) -> Keyset {
        Keyset(select: select, key: "sent_at", filters: ["conversation_id = ?"], binds: [conversationId], range: range)
    }

    // MARK: - Writing

    /// Adds a message the user sent (`fromMe` true) to conversation `conversationId`, sent now.
    ///
    /// Empty or whitespace-only text is `.validation` on `content` and writes nothing; the text is
    /// stored exactly as given. `.notFound` for an unknown conversation.
    public func send(_ content: String, in conversationId: Int64) throws -> Message {
        try insertMany([NewMessage(content: content, fromMe: true)], in: conversationId)[0]
    }

    /// Adds a message the user received (`fromMe` false), at `sentAt` (imported history) or now.
    /// Same rules as ``send(_:in:)``.
    public func receive(_ content: String, in conversationId: Int64, sentAt: Timestamp? = nil) throws -> Message {
        try insertMany([NewMessage(content: content, fromMe: false, sentAt: sentAt)], in: conversationId)[0]
    }

    /// Adds many messages to conversation `conversationId` in one transaction: all of them, or
    /// (on any invalid record) none.
    ///
    /// A `.validation` error names the field and, when there are several records, the record's
    /// index (`line`, 0-based). A `uid` already in the store is a `.conflict`; an unknown
    /// conversation is `.notFound`. Records without `sentAt` get the time of the write. The
    /// conversation's `lastActivityAt` moves to the newest `sentAt` unless that is earlier (an
    /// import of old history leaves its place in the list). O(k log n).
    public func insertMany(_ records: [NewMessage], in conversationId: Int64) throws -> [Message] {
        var prepared: [Message] = []
        prepared.reserveCapacity(records.count)
        // Time-ordered uids: a send appends to the uid index, a bulk import walks it forward.
        let fresh = UID.timeOrdered(count: records.count { $0.uid == nil })
        var freshUsed = 0
        for (index, record) in records.enumerated() {
            do {
                try Message.validate(content: record.content)
                try Message.validate(sentAt: record.sentAt)
                try Message.validate(sender: record.sender)
                let uid: String
                if let given = record.uid {
                    uid = try UID.normalized(given)
                } else {
                    uid = fresh[freshUsed]
                    freshUsed += 1
                }
                prepared.append(Message(id: 0, uid: uid, conversationId: conversationId, content: record.content,
                                        fromMe: record.fromMe, sentAt: record.sentAt ?? Timestamp(milliseconds: 0), sender: record.sender))
            } catch let error as NotesError {
                throw error.inRecord(index, of: records.count)
            }
        }
        guard !records.isEmpty else {
            _ = try store.read { db in try ConversationStore.require(db, conversationId) }
            return []
        }
        return try store.write(bulk: records.count >= Store.bulkRows, sends: records.allSatisfy { $0.sentAt == nil }) { tx in
            var newest = Int64.min
            for index in prepared.indices {
                if records[index].sentAt == nil { prepared[index].sentAt = tx.now }
                newest = max(newest, prepared[index].sentAt.milliseconds)
            }
            // The conversation counts them and moves first (an unknown one is `.notFound` before
            // any row is tried), ordered by the change the last message's creation gets: every
            // record is written, or the call throws.
            try ConversationStore.addMessages(tx, conversationId, count: prepared.count, newest: Timestamp(milliseconds: newest),
                                              seq: try tx.feed.upcomingSeq(prepared.count, tx))
            let ids = try Self.insertRows(tx, prepared)
            for index in prepared.indices {
                guard let id = ids[index] else {
                    throw NotesError(.conflict, "a message with uid \(prepared[index].uid) already exists", field: "uid",
                                     line: records.count > 1 ? index : nil)
                }
                prepared[index].id = id
            }
            return prepared
        }
    }

    /// Deletes message `id`; `.notFound` if there is none. Its conversation's last activity stays.
    public func delete(_ id: Int64) throws {
        try store.write { tx in
            let select = try tx.prepare(tx.connection.sql.messages.uidAndContent)
            select.bind(1, id)
            guard try select.step() else { throw NotesError.notFound("message", id) }
            let uid = select.uid(0), content = select.text(1), conversationId = select.int64(2)
            let delete = try tx.prepare(tx.connection.sql.messages.delete)
            delete.bind(1, id)
            try delete.run()
            try tx.announce(.messagesDeleted([(id, conversationId, uid, content)]))
        }
    }

    // MARK: - Rows written

    /// Inserts `messages` (each with its `conversationId`) with their uids and times as given,
    /// records their creation and hands them to the search index (see ``WriteContext/insertRows``);
    /// the caller moves the conversations' last activity. Returns each new id, or nil (writing
    /// nothing for it) when a message already has that uid. O(k log n).
    static func insertRows(_ tx: WriteContext, _ messages: [Message]) throws -> [Int64?] {
        try tx.insertRecords(messages, tx.connection.sql.messages.inserts, announce: RecordChange.messagesCreated) { stmt, p, m in
            stmt.bind(p, uid: m.uid).bind(p + 1, m.conversationId).bind(p + 2, m.content).bind(p + 3, m.fromMe ? 1 : 0)
                .bind(p + 4, m.sentAt.milliseconds).bind(p + 5, m.sender)
        }
    }

    /// The message with `uid` (lower-case), or nil. O(log n).
    static func fetch(_ db: Connection, uid: String) throws -> Message? {
        try db.prepare(db.sql.messages.byUID).bind(1, uid: uid).first(message(from:))
    }

    /// How many messages of conversation `conversationId` sent within `[from, to)` (ms) by
    /// `fromMe` have exactly `content`: how a transcript, which has no uids, recognises messages
    /// already stored. O(log n + messages in that interval).
    static func countSame(_ db: Connection, conversationId: Int64, from: Int64, to: Int64, fromMe: Bool, content: String) throws -> Int {
        let stmt = try db.prepare(db.sql.messages.countSame)
        stmt.bind(1, conversationId).bind(2, from).bind(3, to).bind(4, fromMe ? 1 : 0).bind(5, content)
        defer { stmt.reset() }
        return try stmt.step() ? Int(stmt.int64(0)) : 0
    }

    /// The lowest id of a conversation holding a message sent within `[from, to)` (ms) by
    /// `fromMe` with exactly `content`, or nil: the conversation a transcript was exported from.
    /// O(log n + messages in that interval).
    static func conversationHolding(_ db: Connection, from: Int64, to: Int64, fromMe: Bool, content: String) throws -> Int64? {
        let stmt = try db.prepare(db.sql.messages.conversationHolding)
        stmt.bind(1, from).bind(2, to).bind(3, fromMe ? 1 : 0).bind(4, content)
        defer { stmt.reset() }
        return try stmt.step() ? stmt.optionalInt64(0) : nil
    }

    // MARK: - Rows

    static func message(from stmt: Statement) -> Message {
        Message(id: stmt.int64(0), uid: stmt.uid(1), conversationId: stmt.int64(2), content: stmt.text(3),
                fromMe: stmt.int64(4) != 0, sentAt: Timestamp(milliseconds: stmt.int64(5)), sender: stmt.optionalText(6))
    }
}

extension Store {
    /// The store's chat messages, in every conversation.
    public var messages: MessageStore { MessageStore(store: self) }
}
