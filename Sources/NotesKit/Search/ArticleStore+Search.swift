/// Literal substring search over articles (their writes reach the index through `SearchIndexObserver`).
extension ArticleStore {
    static let searchKind = "article_search"

    /// The articles created within `range` whose title and/or content contain `query`, newest
    /// first (oldest first when `ascending`), with match spans.
    ///
    /// Literal substring semantics: every character of the query is itself (quotes, `%`, `_`,
    /// `*`, `\`, FTS operators, emoji, CJK, combining marks); text and query are compared in NFC,
    /// case-insensitively by simple Unicode case folding unless `caseSensitive` (see
    /// ``SearchText``). An empty query lists every article. Each hit carries the code-point ranges
    /// of every non-overlapping match in the searched field(s).
    ///
    /// Keyset-paged like ``list(limit:after:)`` (`after` is a `nextCursor` of this same search:
    /// a list cursor, or one of another query, field, case mode, order or range, is refused). A query longer than 10 000 characters, or with a NUL, is `.validation`.
    ///
    /// Complexity: a rare query costs O(log g + postings of its grams + candidates); a frequent
    /// one reads about `limit × n / matches` rows; a page at any depth costs what the first one
    /// costs. The plan is picked from the index's document frequencies.
    public func search(_ query: String, field: SearchField = .any, caseSensitive: Bool = false,
                       limit: Int = PageLimit.default, after cursor: String? = nil, range: TimeRange = .all,
                       ascending: Bool = false) throws -> Page<SearchHit<Article>> {
        let (sink, kind) = try search(query, field: field, caseSensitive: caseSensitive, limit: limit, after: cursor, range: range,
                                      ascending: ascending, sink: RecordSink.init)
        return store.page(sink.hits, positions: sink.positions, limit: limit, kind: kind)
    }

    /// ``search(_:field:caseSensitive:limit:after:range:ascending:)`` as a batch (the article
    /// columns, then a `title_spans` and/or `content_spans` column of flat start, end pairs, per
    /// field searched) and the next page's cursor: the rows are read straight into the columns.
    public func searchBatch(_ query: String, field: SearchField = .any, caseSensitive: Bool = false,
                            limit: Int = PageLimit.default, after cursor: String? = nil, range: TimeRange = .all,
                            ascending: Bool = false) throws -> (ColumnBatch, String?) {
        let (sink, kind) = try search(query, field: field, caseSensitive: caseSensitive, limit: limit, after: cursor, range: range,
                                      ascending: ascending) { BatchSink($0, rows: limit) }
        return (sink.batch, store.nextCursor(sink.positions, limit: limit, kind: kind))
    }

    /// The empty page's columns of ``searchBatch(_:field:caseSensitive:limit:after:range:ascending:)``.
    public static func hitBatch(_ field: SearchField) -> ColumnBatch { ArticleSearchTarget(field: field).hitBatch() }

    private func search<Sink: SearchSink>(_ query: String, field: SearchField, caseSensitive: Bool, limit: Int, after cursor: String?,
                                          range: TimeRange, ascending: Bool,
                                          sink: (ArticleSearchTarget) -> Sink) throws -> (Sink, String) {
        try PageLimit.check(limit)
        let query = try SearchQuery(query, caseSensitive: caseSensitive)
        let target = ArticleSearchTarget(field: field, range: range, ascending: ascending)
        let kind = query.cursorKind(target.walk.cursorKind(Self.searchKind), field.rawValue)
        let found = try store.searchPage(query, target, kind: kind, limit: limit, after: cursor, into: sink(target))
        return (found, kind)
    }
}

/// Articles as the search engine sees them.
struct ArticleSearchTarget: SearchTarget {
    let field: SearchField
    var range = TimeRange.all
    var ascending = false

    var index: SearchIndex { .articles }

    var fields: [(field: UInt64, column: Int32)] {
        switch field {
        case .any: [(SearchIndex.title, 2), (SearchIndex.content, 3)]
        case .title: [(SearchIndex.title, 2)]
        case .content: [(SearchIndex.content, 3)]
        }
    }

    var walk: Keyset { ArticleStore.walk(range: range, ascending: ascending) }
    var idWalk: Keyset { ArticleStore.walk("SELECT id FROM articles", range: range, ascending: ascending) }

    var rowByID: String { "SELECT \(ArticleStore.columns) FROM articles WHERE id = ?" }

    func inScope(_ row: Statement) -> Bool { range.contains(Timestamp(milliseconds: row.int64(4))) }

    func sortKey(_ db: Connection, _ id: Int64) throws -> Int64? {
        let stmt = try db.prepare("SELECT created_at FROM articles WHERE id = ?")
        stmt.bind(1, id)
        defer { stmt.reset() }
        guard try stmt.step(), range.contains(Timestamp(milliseconds: stmt.int64(0))) else { return nil }
        return stmt.int64(0)
    }

    func record(from stmt: Statement) -> Article { ArticleStore.article(from: stmt) }

    func position(_ stmt: Statement) -> CursorCodec.Position { .init(key: stmt.int64(4), id: stmt.int64(0)) }

    static func appender(_ batch: ColumnBatch) -> ArticleStore.Appender { ArticleStore.Appender(batch) }

    func hitBatch() -> ColumnBatch {
        var columns = ArticleStore.batch().columns
        if field != .content { columns.append(Column("title_spans", .int32List)) }
        if field != .title { columns.append(Column("content_spans", .int32List)) }
        return ColumnBatch(columns)
    }

    /// Articles run to hundreds of characters (measured: about 0.5 µs a row at 300, read in rowid
    /// order; about twice that through the time index).
    var scanRowCost: Double { 0.5 }
    var verifyCost: Double { 2.5 }

    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans {
        switch field {
        case .any: MatchSpans(title: ranges[0], content: ranges[1])
        case .title: MatchSpans(title: ranges[0])
        case .content: MatchSpans(content: ranges[0])
        }
    }
}
