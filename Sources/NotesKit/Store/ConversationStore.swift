/// The conversations of a store: create, read, rename, delete, page by most recent activity.
///
/// Obtained as `store.conversations`. Every method is one transaction (or one read) under the
/// store's lock; writes record their changes in the change feed in the same transaction. The
/// messages of a conversation are in ``MessageStore`` (`store.messages`).
public struct ConversationStore: Sendable {
    let store: Store

    static let columns = "id, uid, title, created_at, last_activity_at"
    static let listKind = "conversations"

    // MARK: - Reading

    /// The conversation with `id`, or `.notFound`. O(log n).
    public func get(_ id: Int64) throws -> Conversation {
        try store.read { db in try Self.require(db, id) }
    }

    /// One page of conversations, most recent activity first: by `lastActivityAt`, then by the
    /// order in which that activity happened (so a conversation written to last comes first even
    /// within one millisecond).
    ///
    /// Keyset-paged like the article list: `after` is the `nextCursor` of the previous page, and a
    /// page at any depth costs O(log n + limit) (SQLite: plus a sort of the at most 64 conversations
    /// written to lately, which are not in the index; see `HotConversations`). A conversation never shows up twice while a reader
    /// pages on; one that gets a new message meanwhile moves to the top, above the reader's
    /// position, and shows up on the next first page. `limit` is 1...1000.
    public func list(limit: Int = PageLimit.default, after cursor: String? = nil) throws -> Page<Conversation> {
        try PageLimit.check(limit)
        let position = try cursor.map { try store.cursors.decode($0, kind: Self.listKind) }
        return try store.read { db in
            let page = store.page(try db.sql.conversations.mostRecentFirst.rows(db, after: position, limit: limit + 1) { stmt in
                (Self.conversation(from: stmt), stmt.int64(5))
            }, limit: limit, kind: Self.listKind) { .init(key: $0.0.lastActivityAt.milliseconds, id: $0.1) }
            return Page(items: page.items.map(\.0), nextCursor: page.nextCursor)
        }
    }

    // MARK: - Writing

    /// Starts a new conversation. The title must be non-blank and at most 1 000 characters
    /// (`.validation` naming `title`, nothing written).
    public func create(title: String) throws -> Conversation {
        try Conversation.validate(title: title)
        return try store.write { tx in
            let uid = UID.random()
            let insert = try tx.prepare(tx.connection.sql.conversations.insert)
            insert.bind(1, uid: uid).bind(2, title).bind(3, tx.now.milliseconds).bind(4, tx.now.milliseconds)
            let conversation = Conversation(id: try tx.connection.insertedID(insert), uid: uid, title: title, createdAt: tx.now, lastActivityAt: tx.now)
            try tx.announce(.conversationCreated(id: conversation.id, uid: uid))
            try Self.touch(tx, conversation.id, at: tx.now)
            return conversation
        }
    }

    /// Gives conversation `id` a new title (same rules as ``create(title:)``). Renaming to the
    /// title it already has changes nothing and records no change. Its place in the list (last
    /// activity) stays as it is.
    public func rename(_ id: Int64, title: String) throws -> Conversation {
        try Conversation.validate(title: title)
        return try store.write { tx in
            var conversation = try Self.require(tx.connection, id)
            guard conversation.title != title else { return conversation }
            let stmt = try tx.prepare(tx.connection.sql.conversations.rename)
            stmt.bind(1, title).bind(2, id)
            try stmt.run()
            conversation.title = title
            try tx.announce(.conversationUpdated(id: id, uid: conversation.uid))
            return conversation
        }
    }

    /// Deletes conversation `id` and all its messages in one transaction; `.notFound` if there is
    /// none.
    ///
    /// The change feed gets one `delete` per message (oldest first), then one for the
    /// conversation, so that caches keyed by message id can drop their entries. O(m log n) for m
    /// messages.
    public func delete(_ id: Int64) throws {
        try store.write { tx in
            let conversation = try Self.require(tx.connection, id)
            let select = try tx.prepare(tx.connection.sql.conversations.messagesOf)
            select.bind(1, id)
            var messages: [DeletedMessage] = []
            while try select.step() { messages.append((select.int64(0), id, select.uid(1), select.text(2))) }
            try tx.announce(.messagesDeleted(messages))
            // The messages go by ON DELETE CASCADE.
            let delete = try tx.prepare(tx.connection.sql.conversations.delete)
            delete.bind(1, id)
            try delete.run()
            try tx.announce(.conversationDeleted(id: id, uid: conversation.uid))
        }
    }

    // MARK: - Rows written by imports

    /// Inserts `conversation` with its uid, title and times as given, records the creation and
    /// orders its last activity by that change. Returns the new id, or nil (writing nothing) when a
    /// conversation already has that uid. O(log n).
    static func insert(_ tx: WriteContext, _ conversation: Conversation) throws -> Int64? {
        let stmt = try tx.prepare(tx.connection.sql.conversations.insertIfNew)
        stmt.bind(1, uid: conversation.uid).bind(2, conversation.title).bind(3, conversation.createdAt.milliseconds)
            .bind(4, conversation.lastActivityAt.milliseconds)
        guard let id = try tx.connection.insertedIDIfAny(stmt) else { return nil }
        try tx.announce(.conversationCreated(id: id, uid: conversation.uid))
        try touch(tx, id, at: conversation.lastActivityAt)
        return id
    }

    /// Stores the title and times of `conversation` (found by its `id`) as given, and records the
    /// update. O(log n).
    static func overwrite(_ tx: WriteContext, _ conversation: Conversation) throws {
        let stmt = try tx.prepare(tx.connection.sql.conversations.update)
        stmt.bind(1, conversation.title).bind(2, conversation.createdAt.milliseconds)
            .bind(3, conversation.lastActivityAt.milliseconds).bind(4, conversation.id)
        try stmt.run()
        try tx.announce(.conversationUpdated(id: conversation.id, uid: conversation.uid))
    }

    /// Dates a conversation an import just created (without a creation time) by its earliest
    /// message: its creation and last activity (moved on to the newest message afterwards). Its
    /// creation is recorded already, in the same transaction. O(log n).
    static func redate(_ tx: WriteContext, _ id: Int64, createdAt: Timestamp) throws {
        let stmt = try tx.prepare(tx.connection.sql.conversations.redate)
        stmt.bind(1, createdAt.milliseconds).bind(2, id)
        try stmt.run()
    }

    /// The conversation with `uid` (lower-case), or nil. O(log n).
    static func fetch(_ db: Connection, uid: String) throws -> Conversation? {
        try db.prepare(db.sql.conversations.byUID).bind(1, uid: uid).first(conversation(from:))
    }

    /// The oldest conversation titled exactly `title`, or nil. O(n): titles are not indexed.
    static func fetch(_ db: Connection, title: String) throws -> Conversation? {
        try db.prepare(db.sql.conversations.byTitle).bind(1, title).first(conversation(from:))
    }

    // MARK: - Rows

    /// Makes `at` the conversation's last activity, ordered by the change just recorded.
    static func touch(_ tx: WriteContext, _ id: Int64, at: Timestamp) throws {
        let stmt = try tx.prepare(tx.connection.sql.conversations.touch)
        stmt.bind(1, at.milliseconds).bind(2, tx.lastSeq).bind(3, id)
        try stmt.run()
    }

    /// Counts `count` new messages in conversation `id` (its `message_count`) and makes `newest`
    /// its last activity, ordered by change `seq`, unless its last activity is later already
    /// (history imported with older times leaves its place in the list). `.notFound` for an
    /// unknown conversation. O(log n): a send to a hot conversation writes its row once and no
    /// index page; a cold one is made hot first (see `HotConversations`).
    static func addMessages(_ tx: WriteContext, _ id: Int64, count: Int, newest: Timestamp, seq: Int64) throws {
        try HotConversations.warm(tx, id)
        let stmt = try tx.prepare(tx.connection.sql.conversations.addMessages)
        stmt.bind(1, newest.milliseconds).bind(2, seq).bind(3, id).bind(4, Int64(count))
        try stmt.run()
        if tx.connection.changes == 0 { _ = try require(tx.connection, id) }
    }

    /// How many messages conversation `id` holds (its `message_count`, kept by every write that
    /// adds or deletes messages), or `.notFound`. O(log n).
    static func messageCount(_ db: Connection, _ id: Int64) throws -> Int64 {
        let stmt = try db.prepare(db.sql.conversations.messageCount)
        stmt.bind(1, id)
        defer { stmt.reset() }
        guard try stmt.step() else { throw NotesError.notFound("conversation", id) }
        return stmt.int64(0)
    }

    static func require(_ db: Connection, _ id: Int64) throws -> Conversation {
        let stmt = try db.prepare(db.sql.conversations.byID)
        stmt.bind(1, id)
        guard try stmt.step() else { throw NotesError.notFound("conversation", id) }
        return conversation(from: stmt)
    }

    static func conversation(from stmt: Statement) -> Conversation {
        Conversation(id: stmt.int64(0), uid: stmt.uid(1), title: stmt.text(2),
                     createdAt: Timestamp(milliseconds: stmt.int64(3)), lastActivityAt: Timestamp(milliseconds: stmt.int64(4)))
    }
}

extension Store {
    /// The store's chat conversations.
    public var conversations: ConversationStore { ConversationStore(store: self) }
}
