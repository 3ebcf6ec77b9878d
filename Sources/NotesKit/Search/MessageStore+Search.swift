/// Literal substring search over chat messages, and the index upkeep their writes call.
extension MessageStore {
    /// The cursor kind of a message search, per scope, so that a cursor is refused elsewhere.
    static func searchKind(_ conversationId: Int64?) -> String {
        conversationId.map { "message_search:\($0)" } ?? "message_search"
    }

    /// The messages whose content contains `query`, newest first (`sentAt`, then `id`), or in
    /// chat order (oldest first) when `oldestFirst`, in every conversation or only in
    /// `conversation`, with match spans.
    ///
    /// The same semantics as ``ArticleStore/search(_:field:caseSensitive:limit:after:)``: literal
    /// substring, NFC, simple case folding unless `caseSensitive`, an empty query lists every
    /// message, keyset-paged (`after` is a page's `nextCursor` of the same search: same query,
    /// scope, case mode and order). An unknown conversation is `.notFound`. Complexity as for
    /// articles. (The chat demo's search: `caseSensitive: true, oldestFirst: true`.)
    public func search(_ query: String, conversation: Int64? = nil, caseSensitive: Bool = false, oldestFirst: Bool = false,
                       limit: Int = PageLimit.default, after cursor: String? = nil) throws -> Page<SearchHit<Message>> {
        try PageLimit.check(limit)
        let query = try SearchQuery(query, caseSensitive: caseSensitive)
        let kind = query.cursorKind(Self.searchKind(conversation), oldestFirst ? "asc" : "desc")
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        let hits = try store.read { db in
            if let conversation { _ = try ConversationStore.require(db, conversation) }
            var engine = SearchEngine(db: db, target: MessageSearchTarget(conversation: conversation, ascending: oldestFirst), query: query, limit: limit)
            return try engine.run(after: position)
        }
        guard hits.count > limit, let last = hits.prefix(limit).last else { return Page(items: hits, nextCursor: nil) }
        let next = store.cursors.encode(kind: kind, .init(key: last.record.sentAt.milliseconds, id: last.record.id))
        return Page(items: Array(hits.prefix(limit)), nextCursor: next)
    }

    // MARK: - Index upkeep (writes reach the index through `SearchIndexObserver`)

    static func rebuildIndex(_ db: Connection) throws {
        try SearchIndex.messages.rebuild(db)
    }
}

/// Messages as the search engine sees them, in every conversation or in one.
struct MessageSearchTarget: SearchTarget {
    let conversation: Int64?
    var ascending = false

    var index: SearchIndex { .messages }

    var fields: [(field: UInt64, column: Int32)] { [(SearchIndex.content, 3)] }

    func newest(_ db: Connection, after position: CursorCodec.Position?) throws -> [Statement] {
        try walk(db, "SELECT \(MessageStore.columns) FROM messages", after: position)
    }

    func newestIds(_ db: Connection, after position: CursorCodec.Position?) throws -> [Statement] {
        try walk(db, "SELECT id FROM messages", after: position)
    }

    /// Newest first (oldest first when ``ascending``) after `position`, in two index seeks (see
    /// ``Keyset``): by `messages_history` in one conversation, by `messages_newest` in all of them.
    func walk(_ db: Connection, _ select: String, after position: CursorCodec.Position?) throws -> [Statement] {
        let scope = conversation == nil ? "" : "conversation_id = ? AND "
        let (order, beyond) = ascending ? ("ASC", ">") : ("DESC", "<")
        func bindScope(_ stmt: Statement) -> Int32 {
            guard let conversation else { return 1 }
            stmt.bind(1, conversation)
            return 2
        }
        guard let position else {
            let stmt = try db.prepare("\(select)\(conversation == nil ? "" : " WHERE conversation_id = ?") ORDER BY sent_at \(order), id \(order)")
            _ = bindScope(stmt)
            return [stmt]
        }
        let sameKey = try db.prepare("\(select) WHERE \(scope)sent_at = ? AND id \(beyond) ? ORDER BY id \(order)")
        let i = bindScope(sameKey)
        sameKey.bind(i, position.key).bind(i + 1, position.id)
        let older = try db.prepare("\(select) WHERE \(scope)sent_at \(beyond) ? ORDER BY sent_at \(order), id \(order)")
        older.bind(bindScope(older), position.key)
        return [sameKey, older]
    }

    func row(_ db: Connection, _ id: Int64) throws -> Statement? {
        let stmt = try db.prepare("SELECT \(MessageStore.columns) FROM messages WHERE id = ?")
        stmt.bind(1, id)
        guard try stmt.step() else { return nil }
        if let conversation, stmt.int64(2) != conversation {
            stmt.reset()
            return nil
        }
        return stmt
    }

    func sortKey(_ db: Connection, _ id: Int64) throws -> Int64? {
        let stmt = try db.prepare("SELECT sent_at, conversation_id FROM messages WHERE id = ?")
        stmt.bind(1, id)
        defer { stmt.reset() }
        guard try stmt.step() else { return nil }
        if let conversation, stmt.int64(1) != conversation { return nil }
        return stmt.int64(0)
    }

    /// All messages (ids are dense), also within one conversation: a conversation's share of the
    /// matches is taken to be its share of the messages, which cancels out of the plan.
    func estimatedCount(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM messages")
    }

    func record(from stmt: Statement) -> Message { MessageStore.message(from: stmt) }

    /// Messages are short (measured: about 0.35 µs a row at 40 characters).
    var scanRowCost: Double { 0.35 }
    var verifyCost: Double { 1.5 }

    func position(of record: Message) -> CursorCodec.Position { .init(key: record.sentAt.milliseconds, id: record.id) }

    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans { MatchSpans(content: ranges[0]) }
}
