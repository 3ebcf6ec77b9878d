/// Literal substring search over chat messages (their writes reach the index through `SearchIndexObserver`).
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
        let found = try store.searchPage(query, target, kind: kind, limit: limit, after: cursor, into: sink(target)) { db in
            if let conversation { _ = try ConversationStore.require(db, conversation) }
        }
        return (found, kind)
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

    var rowByID: String { "SELECT \(MessageStore.columns) FROM messages WHERE id = ?" }

    func inScope(_ row: Statement) -> Bool {
        if let conversation, row.int64(2) != conversation { return false }
        return range.contains(Timestamp(milliseconds: row.int64(5)))
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

    func record(from stmt: Statement) -> Message { MessageStore.message(from: stmt) }

    func position(_ stmt: Statement) -> CursorCodec.Position { .init(key: stmt.int64(5), id: stmt.int64(0)) }

    static func appender(_ batch: ColumnBatch) -> MessageStore.Appender { MessageStore.Appender(batch) }

    func hitBatch() -> ColumnBatch { ColumnBatch(MessageStore.batch().columns + [Column("content_spans", .int32List)]) }

    /// Messages are short (measured: about 0.2 µs a row at 40 characters, read in rowid order;
    /// about 0.35 µs through the time index).
    var scanRowCost: Double { 0.2 }
    var verifyCost: Double { 1.5 }

    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans { MatchSpans(content: ranges[0]) }
}
