/// The SQLite backend's answers to what the store asks of a database beyond statements: the
/// space a compaction frees, an import's page cache, the size cap, a second connection for a
/// read on another thread. (PRAGMAs: SQLite's own settings.)
extension SQLiteConnection {
    /// The integer a PRAGMA (or any one-value query) returns, 0 when none.
    func pragma(_ sql: String) throws -> Int64 {
        let statement = try prepareSQLite(sql)
        defer { statement.finalize() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Inside the compaction's write: `PRAGMA incremental_vacuum` in incremental auto-vacuum mode
    /// (every store made by this library), returning the bytes given back; nil for a store without
    /// that mode (see ``reclaimSpaceOutsideTransaction()``).
    func reclaimSpace() throws -> Int64? {
        guard try pragma("PRAGMA auto_vacuum") == 2 else { return nil }
        let before = try pragma("PRAGMA page_count")
        try execute("PRAGMA incremental_vacuum")
        return max(0, before - (try pragma("PRAGMA page_count"))) * (try pragma("PRAGMA page_size"))
    }

    /// Rewrites the whole file with `auto_vacuum = INCREMENTAL` (VACUUM; outside any transaction):
    /// what a store made before that mode needs once. Returns the bytes it gave back.
    func reclaimSpaceOutsideTransaction() throws -> Int64 {
        let before = try pragma("PRAGMA page_count")
        try execute("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
        return max(0, before - (try pragma("PRAGMA page_count"))) * (try pragma("PRAGMA page_size"))
    }

    /// The page cache of an import, in KiB: bounded, so a 1 000 000-record import stays well
    /// under 200 MB.
    static let importCacheKiB = 65_536

    /// Runs `body` (a bulk write: an import, a large insert; begin to commit) with the page cache grown to
    /// ``importCacheKiB`` and statement journals in memory (both set back after it). A transaction
    /// larger than the cache spills pages to the WAL and reads them back, and the uid index,
    /// written in random order, would be spilled and re-read over and over. A multi-row INSERT
    /// that may abort (a CHECK or foreign key) keeps a statement journal of every page it changes
    /// (a few MB); in a file, SQLite's default, that was 1.1 GB of `write` calls to `/var/tmp` for
    /// 200 000 imported messages. (`temp_store` is read when the transaction begins: set before it.)
    func withBulkWriteSettings<T>(_ body: () throws -> T) throws -> T {
        let previous = try pragma("PRAGMA cache_size"), previousTemp = try pragma("PRAGMA temp_store")
        try execute("PRAGMA cache_size = -\(Self.importCacheKiB); PRAGMA temp_store = MEMORY")
        defer { _ = try? execute("PRAGMA cache_size = \(previous); PRAGMA temp_store = \(previousTemp)") }
        return try body()
    }

    /// The largest page count SQLite accepts for `max_page_count`.
    static let maxPageCount: Int64 = 4_294_967_294

    /// Caps the file at about `bytes`, rounded up to whole pages (`PRAGMA max_page_count`; never
    /// below the current size). Returns the cap in effect, in bytes.
    func setMaxSize(bytes: Int64) throws -> Int64 {
        let pageSize = max(1, try pragma("PRAGMA page_size"))
        let pages = min(bytes / pageSize + (bytes % pageSize == 0 ? 0 : 1), Self.maxPageCount)
        return try pragma("PRAGMA max_page_count = \(pages)") * pageSize
    }
}

extension Connection {
    /// A read-only connection to the SQLite store file at `path` that waits for locks as the
    /// store does: for the half of a read run on another thread.
    static func sqliteReader(path: String) throws -> Connection {
        let db = try Connection(path: path, readOnly: true)
        do {
            try db.execute("PRAGMA busy_timeout = \(Store.busyTimeoutMilliseconds)")
        } catch {
            db.close()
            throw error
        }
        return db
    }
}
