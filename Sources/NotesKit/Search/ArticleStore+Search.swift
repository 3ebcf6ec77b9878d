/// Literal substring search over articles, and the index upkeep their writes call.
extension ArticleStore {
    static let searchKind = "article_search"

    /// The articles whose title and/or content contain `query`, newest first, with match spans.
    ///
    /// Literal substring semantics: every character of the query is itself (quotes, `%`, `_`,
    /// `*`, `\`, FTS operators, emoji, CJK, combining marks); text and query are compared in NFC,
    /// case-insensitively by simple Unicode case folding unless `caseSensitive` (see
    /// ``SearchText``). An empty query lists every article. Each hit carries the code-point ranges
    /// of every non-overlapping match in the searched field(s).
    ///
    /// Keyset-paged like ``list(limit:after:)`` (`after` is a `nextCursor` of this same search:
    /// a list cursor, or one of another query, field or case mode, is refused). A query longer than 10 000 characters, or with a NUL, is `.validation`.
    ///
    /// Complexity: a rare query costs O(log g + postings of its grams + candidates); a frequent
    /// one reads about `limit × n / matches` rows; a page at any depth costs what the first one
    /// costs. The plan is picked from the index's document frequencies.
    public func search(_ query: String, field: SearchField = .any, caseSensitive: Bool = false,
                       limit: Int = PageLimit.default, after cursor: String? = nil) throws -> Page<SearchHit<Article>> {
        try PageLimit.check(limit)
        let query = try SearchQuery(query, caseSensitive: caseSensitive)
        let kind = query.cursorKind(Self.searchKind, field.rawValue)
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        let hits = try store.read { db in
            var engine = SearchEngine(db: db, target: ArticleSearchTarget(field: field), query: query, limit: limit)
            return try engine.run(after: position)
        }
        guard hits.count > limit, let last = hits.prefix(limit).last else { return Page(items: hits, nextCursor: nil) }
        let next = store.cursors.encode(kind: kind, .init(key: last.record.createdAt.milliseconds, id: last.record.id))
        return Page(items: Array(hits.prefix(limit)), nextCursor: next)
    }

    // MARK: - Index upkeep (writes reach the index through `SearchIndexObserver`)

    static func rebuildIndex(_ db: Connection) throws {
        try SearchIndex.articles.rebuild(db)
    }
}

/// Articles as the search engine sees them.
struct ArticleSearchTarget: SearchTarget {
    let field: SearchField
    var ascending: Bool { false }

    var index: SearchIndex { .articles }

    var fields: [(field: UInt64, column: Int32)] {
        switch field {
        case .any: [(SearchIndex.title, 2), (SearchIndex.content, 3)]
        case .title: [(SearchIndex.title, 2)]
        case .content: [(SearchIndex.content, 3)]
        }
    }

    func newest(_ db: Connection, after position: CursorCodec.Position?) throws -> [Statement] {
        try Self.walk(db, "SELECT \(ArticleStore.columns) FROM articles", after: position)
    }

    func newestIds(_ db: Connection, after position: CursorCodec.Position?) throws -> [Statement] {
        try Self.walk(db, "SELECT id FROM articles", after: position)
    }

    /// Newest first after `position`, in two index seeks (see ``Keyset``).
    static func walk(_ db: Connection, _ select: String, after position: CursorCodec.Position?) throws -> [Statement] {
        guard let position else { return [try db.prepare("\(select) ORDER BY created_at DESC, id DESC")] }
        let sameKey = try db.prepare("\(select) WHERE created_at = ? AND id < ? ORDER BY id DESC")
        sameKey.bind(1, position.key).bind(2, position.id)
        let older = try db.prepare("\(select) WHERE created_at < ? ORDER BY created_at DESC, id DESC")
        older.bind(1, position.key)
        return [sameKey, older]
    }

    func row(_ db: Connection, _ id: Int64) throws -> Statement? {
        let stmt = try db.prepare("SELECT \(ArticleStore.columns) FROM articles WHERE id = ?")
        stmt.bind(1, id)
        return try stmt.step() ? stmt : nil
    }

    func sortKey(_ db: Connection, _ id: Int64) throws -> Int64? {
        let stmt = try db.prepare("SELECT created_at FROM articles WHERE id = ?")
        stmt.bind(1, id)
        defer { stmt.reset() }
        return try stmt.step() ? stmt.int64(0) : nil
    }

    func estimatedCount(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM articles")
    }

    func record(from stmt: Statement) -> Article { ArticleStore.article(from: stmt) }

    /// Articles run to hundreds of characters (measured: about 1.5 µs a row at 300).
    var scanRowCost: Double { 1.5 }
    var verifyCost: Double { 2.5 }

    func position(of record: Article) -> CursorCodec.Position { .init(key: record.createdAt.milliseconds, id: record.id) }

    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans {
        switch field {
        case .any: MatchSpans(title: ranges[0], content: ranges[1])
        case .title: MatchSpans(title: ranges[0])
        case .content: MatchSpans(content: ranges[0])
        }
    }
}
