extension Store {
    /// Rebuilds the search index from the stored text, in one transaction. The index is kept up
    /// to date by the writes (with a pending set); this is for repair, or after changing the store's file by other
    /// means. O(total text).
    public func reindex() throws {
        try write { tx in
            try ArticleStore.rebuildIndex(tx.connection)
            try MessageStore.rebuildIndex(tx.connection)
            try tx.connection.execute("DELETE FROM search_pending")
            try SearchIndex.articles.setRemovedCount(tx.connection, 0)
            try SearchIndex.messages.setRemovedCount(tx.connection, 0)
        }
    }

    /// Takes every pending record into the search index now (writes do it by the batch; see
    /// `SearchIndex+Pending.swift`). For tests and benchmarks. O(pending text).
    func foldSearchIndex() throws {
        try write { tx in
            try SearchIndex.articles.fold(tx.connection, removals: true)
            try SearchIndex.messages.fold(tx.connection, removals: true)
        }
    }
}
