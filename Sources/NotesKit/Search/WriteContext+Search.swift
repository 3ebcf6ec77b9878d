/// What a write transaction did to searched records, for the index's pending set (see
/// `SearchIndex+Pending.swift`).
struct PendingSearch {
    var articles = false
    var messages = false
    /// Bytes of text the transaction wrote.
    var bytes = 0
}

extension WriteContext {
    /// Notes that `article` was just inserted (it is pending until the next fold), and hands its
    /// text to the transaction's ``GramPipeline``.
    func indexLater(article: Article) throws {
        pendingSearch.articles = true
        let bytes = article.title.utf8.count + article.content.utf8.count
        pendingSearch.bytes += bytes
        pipeline(.articles).add(ArticleStore.searchDocument(article), bytes: bytes)
        try foldIfLarge()
    }

    /// Notes that `messages` were just inserted.
    func indexLater(messages: [Message]) throws {
        pendingSearch.messages = true
        let pipeline = pipeline(.messages)
        for m in messages {
            let bytes = m.content.utf8.count
            pendingSearch.bytes += bytes
            pipeline.add(MessageStore.searchDocument(m), bytes: bytes)
        }
        try foldIfLarge()
    }

    /// The pipeline of `index`'s kind for this transaction (made on first use).
    private func pipeline(_ index: SearchIndex) -> GramPipeline {
        if let pipeline = gramPipelines[index.kind] { return pipeline }
        let pipeline = GramPipeline(index)
        gramPipelines[index.kind] = pipeline
        return pipeline
    }

    /// Folds in the middle of a transaction that has written ``SearchIndex/foldChunkBytes`` of text.
    private func foldIfLarge() throws {
        if pendingSearch.bytes >= SearchIndex.foldChunkBytes { try flushSearch() }
    }

    /// Notes that the record whose text was `old` changes (to a text of `newBytes`) or goes.
    func indexWillChange(_ index: SearchIndex, _ old: SearchIndex.Document, newBytes: Int = 0) throws {
        if let pipeline = gramPipelines[index.kind], let first = pipeline.firstId, old.id >= first { pipeline.invalidate() }
        try index.willChange(connection, old)
        if index.kind == SearchIndex.articles.kind { pendingSearch.articles = true } else { pendingSearch.messages = true }
        pendingSearch.bytes += newBytes
    }

    /// Folds the pending set of each kind this transaction wrote into the index when it is large
    /// enough (or the transaction wrote much text). Called before the transaction commits.
    func flushSearch() throws {
        let force = pendingSearch.bytes > SearchIndex.foldBytes
        if pendingSearch.articles { try SearchIndex.articles.foldIfDue(connection, force: force, pipeline: gramPipelines[SearchIndex.articles.kind]) }
        if pendingSearch.messages { try SearchIndex.messages.foldIfDue(connection, force: force, pipeline: gramPipelines[SearchIndex.messages.kind]) }
        pendingSearch = PendingSearch()
    }
}

extension SearchIndex {
    func foldIfDue(_ db: Connection, force: Bool, pipeline: GramPipeline?) throws {
        if try force || pendingCount(db) >= Self.foldCount { try fold(db, pipeline: pipeline) }
    }
}
