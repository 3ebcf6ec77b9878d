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

        /// The time it is ordered by: the article's `createdAt`, the message's `sentAt`.
        var time: Int64 {
            switch self {
            case .article(let hit): hit.record.createdAt.milliseconds
            case .message(let hit): hit.record.sentAt.milliseconds
            }
        }

        /// Its place within one millisecond: articles before messages, then ids descending, as
        /// one number (see ``position``).
        var rank: Int64 {
            switch self {
            case .article(let hit): Store.articleRank + hit.record.id
            case .message(let hit): hit.record.id
            }
        }
    }

    /// Article ranks sit above every message id (ids stay far below 2^62).
    static let articleRank: Int64 = 1 << 62

    /// The articles (title or content) and messages containing `query`, newest first across both
    /// kinds: by time (an article's `createdAt`, a message's `sentAt`), then articles before
    /// messages, then id, descending. Same matching as the per-kind searches (literal, NFC, case
    /// folded; an empty query lists every record), with their spans. Only records in `range` are
    /// found (part of each kind's index seek, as for the per-kind searches).
    ///
    /// Keyset-paged: `after` is a page's `nextCursor` of this same search (query, kinds and range);
    /// each page runs both kinds' searches from the cursor's position, each for at most
    /// `limit + 1` hits, and merges them, so a page at any depth costs what the first one costs.
    public func search(_ query: String, kinds: SearchKinds = .all, range: TimeRange = .all,
                       limit: Int = PageLimit.default, after cursor: String? = nil) throws -> Page<AnyHit> {
        try PageLimit.check(limit)
        guard !kinds.isEmpty, kinds.isSubset(of: .all) else {
            throw NotesError(.validation, "kinds must name \"articles\", \"messages\" or both", field: "kinds")
        }
        let parsed = try SearchQuery(query, caseSensitive: false)
        let kind = parsed.cursorKind("store_search", String(kinds.rawValue), range.since.map { String($0.milliseconds) } ?? "",
                                     range.until.map { String($0.milliseconds) } ?? "")
        let position = try cursor.map { try cursors.decode($0, kind: kind) }
        if range.isEmpty { return Page(items: [], nextCursor: nil) }
        // Each kind resumes after the merged position: past it within its millisecond, or (for
        // the kind not yet reached there) from that millisecond's first record.
        let articleAfter = position.map { p in
            CursorCodec.Position(key: p.key, id: p.id >= Store.articleRank ? p.id - Store.articleRank : Int64.min)
        }
        let messageAfter = position.map { p in CursorCodec.Position(key: p.key, id: p.id >= Store.articleRank ? Int64.max : p.id) }
        var hits: [AnyHit] = try read { db in
            var found: [AnyHit] = []
            if kinds.contains(.articles) {
                var engine = SearchEngine(db: db, target: ArticleSearchTarget(field: .any, range: range), query: parsed, limit: limit)
                found += try engine.run(after: articleAfter).map(AnyHit.article)
            }
            if kinds.contains(.messages) {
                var engine = SearchEngine(db: db, target: MessageSearchTarget(conversation: nil, range: range), query: parsed, limit: limit)
                found += try engine.run(after: messageAfter).map(AnyHit.message)
            }
            return found
        }
        hits.sort { $0.time != $1.time ? $0.time > $1.time : $0.rank > $1.rank }
        return page(hits, limit: limit, kind: kind) { .init(key: $0.time, id: $0.rank) }
    }
}
