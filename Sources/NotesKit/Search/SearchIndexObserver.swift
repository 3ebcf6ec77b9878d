/// The search index's observer of writes (see `Store/WriteObserver.swift`): new records become
/// pending for the index, changed and removed ones note the grams the index holds for them (see
/// `SearchIndex+Pending.swift`), and before the transaction commits the pending set of each kind
/// it wrote is folded into the index when it is large enough. New records' texts go to the
/// transaction's ``GramPipeline`` of their kind, which builds their postings on the side.
final class SearchIndexObserver: WriteObserver {
    /// Whether the transaction wrote searched articles or messages, and how many bytes of text.
    private var articles = false
    private var messages = false
    private var bytes = 0
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
            try willChange(tx, .articles, Self.document(old))
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
            try remove(tx, deleted.map { SearchIndex.Document(id: $0.id, fields: [(SearchIndex.content, $0.content)]) })
        case .conversationCreated, .conversationUpdated, .conversationDeleted:
            break
        }
    }

    /// Folds the pending set of each kind this transaction wrote into the index when it is large
    /// enough (or the transaction wrote much text).
    func beforeCommit(_ tx: WriteContext) throws {
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

    /// Folds in the middle of a transaction that has written ``SearchIndex/foldChunkBytes`` of text.
    private func foldIfLarge(_ tx: WriteContext) throws {
        if bytes >= SearchIndex.foldChunkBytes { try beforeCommit(tx) }
    }

    /// Notes that the record whose text was `old` changes (to a text of `newBytes`) or goes.
    private func willChange(_ tx: WriteContext, _ index: SearchIndex, _ old: SearchIndex.Document, newBytes: Int = 0) throws {
        if let pipeline = pipelines[index.kind], let first = pipeline.firstId, old.id >= first { pipeline.invalidate() }
        try index.willChange(tx.connection, old)
        if index.kind == SearchIndex.articles.kind { articles = true } else { messages = true }
        bytes += newBytes
    }

    /// Removes messages from the index: a few become pending; many (a conversation) leave the
    /// index at once, in one pass over their grams' postings.
    private func remove(_ tx: WriteContext, _ documents: [SearchIndex.Document]) throws {
        guard documents.count > 64 else {
            for document in documents { try willChange(tx, .messages, document) }
            return
        }
        let through = try SearchIndex.messages.indexedThrough(tx.connection)
        try SearchIndex.messages.remove(tx.connection, documents.filter { $0.id <= through }.map { ($0.id, SearchIndex.grams(of: $0)) })
    }
}

extension SearchIndex {
    func foldIfDue(_ db: Connection, force: Bool, pipeline: GramPipeline?) throws {
        if try force || pendingCount(db) >= Self.foldCount { try fold(db, pipeline: pipeline) }
    }
}
