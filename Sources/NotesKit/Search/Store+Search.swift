extension Store {
    /// Rebuilds the search index from the stored text, in one transaction. The index is kept up
    /// to date by the writes (with a pending set); this is for repair, or after changing the store's file by other
    /// means. O(total text).
    public func reindex() throws {
        try write { tx in
            try SearchIndex.articles.rebuild(tx.connection)
            try SearchIndex.messages.rebuild(tx.connection)
            try tx.connection.execute("DELETE FROM search_pending")
            try SearchIndex.articles.setRemovedCount(tx.connection, 0)
            try SearchIndex.messages.setRemovedCount(tx.connection, 0)
        }
    }

    /// One page of a search: `query` over `target`, after `cursor` (a `nextCursor` of cursor kind
    /// `kind`), up to `limit + 1` hits (the last tells that more exist) put into `sink`, the
    /// statements that must agree reading one snapshot (``readSnapshot(lazily:_:)``, begun by the
    /// engine); `check` runs first in the read (a scope that must exist). Both stores' `search`
    /// and `searchBatch` run through it.
    func searchPage<Target: SearchTarget, Sink: SearchSink>(_ query: SearchQuery, _ target: Target, kind: String, limit: Int,
                                                            after cursor: String?, into sink: Sink,
                                                            check: (Connection) throws -> Void = { _ in }) throws -> Sink {
        let position = try cursor.map { try cursors.decode($0, kind: kind) }
        let (found, folds) = try readSnapshot(lazily: true) { db, snapshot in
            try check(db)
            var engine = SearchEngine(db: db, target: target, query: query, limit: limit, sink: sink, snapshot: snapshot)
            try engine.run(after: position)
            return (engine.sink, engine.foldsPending)
        }
        if folds { foldAfterSearch([target.index]) }
        return found
    }

    /// After a search that checked many pending records of `indexes` (``SearchEngine/foldsPending``):
    /// folds those kinds' pending sets into the index, in a write transaction of its own (see
    /// `SearchIndex+Pending.swift`), so that the searches that follow do not check them again. The
    /// search's page is complete without it: on a read-only handle nothing is folded, and a fold
    /// that fails (the disk full, another writer holding the lock past the busy timeout) is left to
    /// a later search or write, which folds the same records. O(pending text).
    func foldAfterSearch(_ indexes: [SearchIndex]) {
        guard !indexes.isEmpty, !isReadOnly else { return }
        _ = try? write { tx in
            for index in indexes { try index.foldIfDue(tx.connection, force: true, pipeline: nil) }
        }
    }

    /// Takes every pending record into the search index now (searches and writes do it by the
    /// batch; see `SearchIndex+Pending.swift`). For tests and benchmarks. O(pending text).
    func foldSearchIndex() throws {
        try write { tx in
            try SearchIndex.articles.fold(tx.connection, removals: true)
            try SearchIndex.messages.fold(tx.connection, removals: true)
        }
    }
}
