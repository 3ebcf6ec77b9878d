/// Literal substring search over chat messages, and the index upkeep their writes call.
extension MessageStore {
    /// The cursor kind of a message search, per scope, so that a cursor is refused elsewhere.
    static func searchKind(_ conversationId: Int64?) -> String {
        conversationId.map { "message_search:\($0)" } ?? "message_search"
    }

    /// The messages sent within `range` whose content contains `query`, newest first (`sentAt`,
    /// then `id`), or in chat order (oldest first) when `oldestFirst`, in every conversation or
    /// only in `conversation`, with match spans.
    ///
    /// The same semantics as ``ArticleStore/search(_:field:caseSensitive:limit:after:)``: literal
    /// substring, NFC, simple case folding unless `caseSensitive`, an empty query lists every
    /// message, keyset-paged (`after` is a page's `nextCursor` of the same search: same query,
    /// scope, case mode, order and range). An unknown conversation is `.notFound`. Complexity as for
    /// articles. (The chat demo's search: `caseSensitive: true, oldestFirst: true`.)
    public func search(_ query: String, conversation: Int64? = nil, caseSensitive: Bool = false, oldestFirst: Bool = false,
                       limit: Int = PageLimit.default, after cursor: String? = nil, range: TimeRange = .all) throws -> Page<SearchHit<Message>> {
        let (sink, kind) = try search(query, conversation: conversation, caseSensitive: caseSensitive, oldestFirst: oldestFirst,
                                      limit: limit, after: cursor, range: range, sink: RecordSink.init)
        return store.page(sink.hits, positions: sink.positions, limit: limit, kind: kind)
    }

    /// ``search(_:conversation:caseSensitive:oldestFirst:limit:after:range:)`` as a batch (the
    /// message columns, then `content_spans`, flat start, end pairs) and the next page's cursor:
    /// the rows are read straight into the columns.
    public func searchBatch(_ query: String, conversation: Int64? = nil, caseSensitive: Bool = false, oldestFirst: Bool = false,
                            limit: Int = PageLimit.default, after cursor: String? = nil,
                            range: TimeRange = .all) throws -> (ColumnBatch, String?) {
        let (sink, kind) = try search(query, conversation: conversation, caseSensitive: caseSensitive, oldestFirst: oldestFirst,
                                      limit: limit, after: cursor, range: range) { BatchSink($0, rows: limit) }
        return (sink.batch, store.nextCursor(sink.positions, limit: limit, kind: kind))
    }

    /// The empty page's columns of ``searchBatch(_:conversation:caseSensitive:oldestFirst:limit:after:range:)``.
    public static func hitBatch() -> ColumnBatch { MessageSearchTarget(conversation: nil).hitBatch() }

    private func search<Sink: SearchSink>(_ query: String, conversation: Int64?, caseSensitive: Bool, oldestFirst: Bool, limit: Int,
                                          after cursor: String?, range: TimeRange,
                                          sink: (MessageSearchTarget) -> Sink) throws -> (Sink, String) {
        try PageLimit.check(limit)
        let query = try SearchQuery(query, caseSensitive: caseSensitive)
        let target = MessageSearchTarget(conversation: conversation, range: range, ascending: oldestFirst)
        let kind = query.cursorKind(target.walk.cursorKind(Self.searchKind(conversation)), oldestFirst ? "asc" : "desc")
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        let found = try store.readSnapshot { db in
            if let conversation { _ = try ConversationStore.require(db, conversation) }
            var engine = SearchEngine(db: db, target: target, query: query, limit: limit, sink: sink(target))
            try engine.run(after: position)
            return engine.sink
        }
        return (found, kind)
    }

    // MARK: - Index upkeep (writes reach the index through `SearchIndexObserver`)

    static func rebuildIndex(_ db: Connection) throws {
        try SearchIndex.messages.rebuild(db)
    }
}

/// Messages as the search engine sees them, in every conversation or in one.
struct MessageSearchTarget: SearchTarget {
    let conversation: Int64?
    var range = TimeRange.all
    var ascending = false

    var index: SearchIndex { .messages }

    var fields: [(field: UInt64, column: Int32)] { [(SearchIndex.content, 3)] }

    var walk: Keyset { walk(selecting: "SELECT \(MessageStore.columns) FROM messages") }
    var idWalk: Keyset { walk(selecting: "SELECT id FROM messages") }

    /// Search order within the scope and range: by `messages_history` in one conversation, by
    /// `messages_newest` in all of them.
    private func walk(selecting select: String) -> Keyset {
        if let conversation { return MessageStore.historyWalk(conversation, select, range: range).ordered(ascending: ascending) }
        return MessageStore.walk(select, range: range, ascending: ascending)
    }

    func row(_ db: Connection, _ id: Int64) throws -> Statement? {
        let stmt = try db.prepare("SELECT \(MessageStore.columns) FROM messages WHERE id = ?")
        stmt.bind(1, id)
        guard try stmt.step() else { return nil }
        if let conversation, stmt.int64(2) != conversation {
            stmt.reset()
            return nil
        }
        if !range.contains(Timestamp(milliseconds: stmt.int64(5))) {
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
        guard range.contains(Timestamp(milliseconds: stmt.int64(0))) else { return nil }
        return stmt.int64(0)
    }

    /// All messages (ids are dense), also within one conversation: a conversation's share of the
    /// matches is taken to be its share of the messages, which cancels out of the plan.
    func estimatedCount(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM messages")
    }

    func record(from stmt: Statement) -> Message { MessageStore.message(from: stmt) }

    func position(_ stmt: Statement) -> CursorCodec.Position { .init(key: stmt.int64(5), id: stmt.int64(0)) }

    static func appendRow(_ stmt: Statement, _ batch: ColumnBatch) { MessageStore.appendRow(stmt, batch) }

    func hitBatch() -> ColumnBatch { ColumnBatch(MessageStore.batch().columns + [Column("content_spans", .int32List)]) }

    /// Messages are short (measured: about 0.2 µs a row at 40 characters, read in rowid order;
    /// about 0.35 µs through the time index).
    var scanRowCost: Double { 0.2 }
    var verifyCost: Double { 1.5 }

    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans { MatchSpans(content: ranges[0]) }
}
