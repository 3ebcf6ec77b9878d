/// The search index's observer of writes (see `Store/WriteObserver.swift`): new records become
/// pending for the index, changed and removed ones note the grams the index holds for them (see
/// `SearchIndex+Pending.swift`), and before the transaction commits the pending set of each kind
/// it wrote is folded into the index when it is large enough (its removed records when due). New records' texts go to the
/// transaction's ``GramPipeline`` of their kind, which builds their postings on the side.
final class SearchIndexObserver: WriteObserver {
    /// Whether the transaction wrote searched articles or messages, and how many bytes of text.
    private var articles = false
    private var messages = false
    private var bytes = 0
    /// Removed records the transaction added to the pending set, by search index kind.
    private var removed: [Int64: Int] = [:]
    /// The postings of the transaction's new records, built on the side (by search index kind).
    private var pipelines: [Int64: GramPipeline] = [:]

    func observe(_ change: RecordChange, in tx: WriteContext) throws {
        switch change {
        case .articlesCreated(let created):
            articles = true
            let pipeline = pipeline(.articles)
            for a in created {
                let size = a.title.utf8.count + a.content.utf8.count
                bytes += size
                pipeline.add(Self.document(a), bytes: size)
            }
            try foldIfLarge(tx)
        case .articleUpdated(let old, let new):
            try willChange(tx, .articles, Self.document(old), newBytes: new.title.utf8.count + new.content.utf8.count)
        case .articleDeleted(let old):
            try willRemove(tx, .articles, [Self.document(old)])
        case .messagesCreated(let created):
            messages = true
            let pipeline = pipeline(.messages)
            for m in created {
                let size = m.content.utf8.count
                bytes += size
                pipeline.add(SearchIndex.Document(id: m.id, fields: [(SearchIndex.content, m.content)]), bytes: size)
            }
            try foldIfLarge(tx)
        case .messagesDeleted(let deleted):
            try willRemove(tx, .messages, deleted.map { SearchIndex.Document(id: $0.id, fields: [(SearchIndex.content, $0.content)]) })
        case .conversationCreated, .conversationUpdated, .conversationDeleted:
            break
        }
    }

    /// Folds the pending set of each kind this transaction wrote into the index when it is large
    /// enough (or the transaction wrote much text).
    func beforeCommit(_ tx: WriteContext) throws {
        for (kind, count) in removed where count > 0 {
            let index: SearchIndex = kind == SearchIndex.articles.kind ? .articles : .messages
            try index.setRemovedCount(tx.connection, try index.removedCount(tx.connection) + Int64(count))
        }
        removed = [:]
        let force = bytes > SearchIndex.foldBytes
        if articles { try SearchIndex.articles.foldIfDue(tx.connection, force: force, pipeline: pipelines[SearchIndex.articles.kind]) }
        if messages { try SearchIndex.messages.foldIfDue(tx.connection, force: force, pipeline: pipelines[SearchIndex.messages.kind]) }
        articles = false
        messages = false
        bytes = 0
    }

    static func document(_ article: Article) -> SearchIndex.Document {
        SearchIndex.Document(id: article.id, fields: [(SearchIndex.title, article.title), (SearchIndex.content, article.content)])
    }

    /// The pipeline of `index`'s kind for this transaction (made on first use).
    private func pipeline(_ index: SearchIndex) -> GramPipeline {
        if let pipeline = pipelines[index.kind] { return pipeline }
        let pipeline = GramPipeline(index)
        pipelines[index.kind] = pipeline
        return pipeline
    }

    /// Folds in the middle of a transaction that has written ``SearchIndex/foldChunkBytes`` of text
    /// (after a bulk write's last chunk: a fold between chunks would make a second fold merge into
    /// what the first wrote, twice the work on PostgreSQL).
    private func foldIfLarge(_ tx: WriteContext) throws {
        if bytes >= SearchIndex.foldChunkBytes, !tx.moreRowsComing { try beforeCommit(tx) }
    }

    /// Notes that the record whose text was `old` changes (to a text of `newBytes`) or goes.
    private func willChange(_ tx: WriteContext, _ index: SearchIndex, _ old: SearchIndex.Document, newBytes: Int = 0) throws {
        if let pipeline = pipelines[index.kind], let first = pipeline.firstId, old.id >= first { pipeline.invalidate() }
        try index.willChange(tx.connection, old)
        if index.kind == SearchIndex.articles.kind { articles = true } else { messages = true }
        bytes += newBytes
    }

    /// Notes that the records whose texts were `old` are gone (see ``SearchIndex/willRemove(_:_:)``).
    private func willRemove(_ tx: WriteContext, _ index: SearchIndex, _ old: [SearchIndex.Document]) throws {
        if let pipeline = pipelines[index.kind], let first = pipeline.firstId, old.contains(where: { $0.id >= first }) {
            pipeline.invalidate()
        }
        removed[index.kind, default: 0] += try index.willRemove(tx.connection, old)
        if index.kind == SearchIndex.articles.kind { articles = true } else { messages = true }
    }
}

extension SearchIndex {
    /// Folds the pending records in when they are ``writeFoldFactor`` × ``foldCount``, or
    /// ``foldCount`` once removed records are due (they count then; no search folds them), or when
    /// `force`d; the removed ones too when due.
    func foldIfDue(_ db: Connection, force: Bool, pipeline: GramPipeline?) throws {
        let state = try pendingState(db)
        let limit = state.removalsDue ? Self.foldCount : writeFoldFactor * Self.foldCount
        if force || state.count >= limit { try fold(db, pipeline: pipeline, removals: state.removalsDue) }
    }
}
