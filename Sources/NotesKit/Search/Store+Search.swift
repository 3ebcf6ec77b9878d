extension Store {
    /// Rebuilds the search index from the stored text, in one transaction. The index is kept up
    /// to date by every write; this is for repair, or after changing the store's file by other
    /// means. O(total text).
    public func reindex() throws {
        try write { tx in
            try ArticleStore.rebuildIndex(tx.connection)
            try MessageStore.rebuildIndex(tx.connection)
        }
    }
}
