extension Store {
    /// The largest page count SQLite accepts for `max_page_count`.
    static let maxPageCount: Int64 = 4_294_967_294

    /// Caps the store at about `bytes` (rounded up to whole database pages) for as long as this
    /// store stays open: a write that would grow the database past it fails with `.storageFull`
    /// and writes nothing; reads, deletes and writes that fit keep working. A cap below the
    /// current size is raised to the current size (the store is never shrunk).
    ///
    /// Returns the cap in effect, in bytes. O(1).
    @discardableResult
    public func setMaxSize(bytes: Int64) throws -> Int64 {
        guard bytes > 0 else {
            throw NotesError.validation("max_size_bytes", "max_size_bytes must be a positive number of bytes, got \(bytes)")
        }
        return try read { db in
            let pageSize = max(1, try Store.scalar(db, "PRAGMA page_size"))
            let pages = min(bytes / pageSize + (bytes % pageSize == 0 ? 0 : 1), Store.maxPageCount)
            return try Store.scalar(db, "PRAGMA max_page_count = \(pages)") * pageSize
        }
    }
}
