/// One search over articles and messages together (`store.search` in Python).
extension Store {
    /// Which kinds of record ``search(_:kinds:since:until:limit:after:)`` looks in.
    public struct SearchKinds: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let articles = SearchKinds(rawValue: 1)
        public static let messages = SearchKinds(rawValue: 2)
        public static let all: SearchKinds = [.articles, .messages]
    }

    /// A hit of a search over several kinds: an article (title and content searched) or a message.
    public enum AnyHit: Sendable {
        case article(SearchHit<Article>)
        case message(SearchHit<Message>)

    }

    /// A hit's place within one millisecond: articles before messages, then ids descending, as one
    /// number (the cursor's id): an article's rank is this plus its id (ids stay far below 2^62).
    static let articleRank: Int64 = 1 << 62

    /// The articles (title or content) and messages containing `query`, newest first across both
    /// kinds: by time (an article's `createdAt`, a message's `sentAt`), then articles before
    /// messages, then id, descending. Same matching as the per-kind searches (literal, NFC, case
    /// folded; an empty query lists every record), with their spans. Only records in `range` are
    /// found (part of each kind's index seek, as for the per-kind searches).
    ///
    /// Keyset-paged: `after` is a page's `nextCursor` of this same search (query, kinds and range).
    /// A page runs one kind's search from the cursor's position for at most `limit + 1` hits, then
    /// the other's only back to the time of the last of those (the page holds nothing older), and
    /// merges them, so a page at any depth costs what the first one costs.
    public func search(_ query: String, kinds: SearchKinds = .all, range: TimeRange = .all,
                       limit: Int = PageLimit.default, after cursor: String? = nil) throws -> Page<AnyHit> {
        let (articles, messages, order, next) = try search(query, kinds: kinds, range: range, limit: limit, after: cursor,
                                                           articles: RecordSink.init, messages: RecordSink.init)
        var a = articles.hits.makeIterator(), m = messages.hits.makeIterator()
        let items = order.compactMap { isArticle in isArticle ? a.next().map(AnyHit.article) : m.next().map(AnyHit.message) }
        return Page(items: items, nextCursor: next)
    }

    /// ``search(_:kinds:range:limit:after:)`` as two batches, read straight into columns: the
    /// article hits (article columns, `title_spans`, `content_spans`) and the message hits
    /// (message columns, `content_spans`), each in page order; `order` says, hit by hit, whether
    /// the page's next hit is the next article (true) or the next message; and the next page's cursor.
    public func searchBatches(_ query: String, kinds: SearchKinds = .all, range: TimeRange = .all, limit: Int = PageLimit.default,
                              after cursor: String? = nil) throws -> (articles: ColumnBatch, messages: ColumnBatch, order: [Bool], next: String?) {
        let (articles, messages, order, next) = try search(query, kinds: kinds, range: range, limit: limit, after: cursor,
                                                           articles: { BatchSink($0, rows: limit) }, messages: { BatchSink($0, rows: limit) })
        return (articles.batch, messages.batch, order, next)
    }

    private func search<A: SearchSink, M: SearchSink>(
        _ query: String, kinds: SearchKinds, range: TimeRange, limit: Int, after cursor: String?,
        articles makeArticles: (ArticleSearchTarget) -> A, messages makeMessages: (MessageSearchTarget) -> M
    ) throws -> (A, M, [Bool], String?) {
        try PageLimit.check(limit)
        guard !kinds.isEmpty, kinds.isSubset(of: .all) else {
            throw NotesError(.validation, "kinds must name \"articles\", \"messages\" or both", field: "kinds")
        }
        let parsed = try SearchQuery(query, caseSensitive: false)
        let kind = parsed.cursorKind("store_search", String(kinds.rawValue), range.since.map { String($0.milliseconds) } ?? "",
                                     range.until.map { String($0.milliseconds) } ?? "")
        let position = try cursor.map { try cursors.decode($0, kind: kind) }
        let articleTarget = ArticleSearchTarget(field: .any, range: range), messageTarget = MessageSearchTarget(conversation: nil, range: range)
        var articles = makeArticles(articleTarget), messages = makeMessages(messageTarget)
        if range.isEmpty { return (articles, messages, [], nil) }
        // Each kind resumes after the merged position: past it within its millisecond, or (for
        // the kind not yet reached there) from that millisecond's first record.
        let articleAfter = position.map { p in
            CursorCodec.Position(key: p.key, id: p.id >= Store.articleRank ? p.id - Store.articleRank : Int64.min)
        }
        let messageAfter = position.map { p in CursorCodec.Position(key: p.key, id: p.id >= Store.articleRank ? Int64.max : p.id) }
        var folds: [SearchIndex] = []
        try readSnapshot { db in
            // Messages first (chats are usually the denser kind): when they fill the page, the
            // page holds nothing older than the last of them, so the articles are searched back to
            // its time only.
            var articleRange = range
            if kinds.contains(.messages) {
                var engine = SearchEngine(db: db, target: messageTarget, query: parsed, limit: limit, sink: messages)
                try engine.run(after: messageAfter)
                messages = engine.sink
                if engine.foldsPending { folds.append(messageTarget.index) }
                if messages.count > limit, let last = messages.positions.last {
                    let since = max(range.since?.milliseconds ?? Int64.min, last.key)
                    articleRange.since = Timestamp(milliseconds: since)
                }
            }
            if kinds.contains(.articles) {
                var target = articleTarget
                target.range = articleRange
                var engine = SearchEngine(db: db, target: target, query: parsed, limit: limit, sink: articles)
                try engine.run(after: articleAfter)
                articles = engine.sink
                if engine.foldsPending { folds.append(target.index) }
            }
        }
        foldAfterSearch(folds)
        // Merge: time, then articles before messages, then id, descending.
        let a = articles.positions, m = messages.positions
        var order: [Bool] = []
        order.reserveCapacity(min(a.count + m.count, limit + 1))
        var i = 0, j = 0
        var last = CursorCodec.Position(key: 0, id: 0)
        while order.count <= limit, i < a.count || j < m.count {
            let takeArticle = j == m.count || (i < a.count && (a[i].key, Store.articleRank + a[i].id) > (m[j].key, m[j].id))
            if order.count < limit {
                last = takeArticle ? .init(key: a[i].key, id: Store.articleRank + a[i].id) : m[j]
            }
            order.append(takeArticle)
            if takeArticle { i += 1 } else { j += 1 }
        }
        let more = order.count > limit
        if more { order.removeLast() }
        articles.keep(order.reduce(0) { $0 + ($1 ? 1 : 0) })
        messages.keep(order.count - order.reduce(0) { $0 + ($1 ? 1 : 0) })
        return (articles, messages, order, more ? cursors.encode(kind: kind, last) : nil)
    }
}
