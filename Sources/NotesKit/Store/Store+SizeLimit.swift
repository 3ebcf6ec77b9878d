extension Store {
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
        return try read { db in try db.database.setMaxSize(bytes: bytes) }
    }
}
