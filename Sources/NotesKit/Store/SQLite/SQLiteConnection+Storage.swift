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

    /// Inside the compaction's write: gives the file's freed pages back where that is cheap, and
    /// returns the bytes given back, or nil when they are to be given back by a `VACUUM` after the
    /// transaction (``reclaimSpaceOutsideTransaction()``).
    ///
    /// Stores are made without auto-vacuum: a pointer map would cost every write that allocates a
    /// page or moves cells between pages (a third more instructions in SQLite's b-tree inserts), and the
    /// free list's pages are reused by later writes anyway. So the pages are given back only when
    /// the free list holds at least ``vacuumFreeFraction`` of the file, by a `VACUUM` (which
    /// rewrites the file: its cost is then at most a few times the writes that freed that much);
    /// below that they stay for later writes, and 0 bytes are given back. A store made before in
    /// incremental auto-vacuum mode runs `PRAGMA incremental_vacuum` here, costing what was freed.
    func reclaimSpace() throws -> Int64? {
        let before = try pragma("PRAGMA page_count")
        guard try pragma("PRAGMA auto_vacuum") == 2 else {
            return try pragma("PRAGMA freelist_count") * Self.vacuumFreeFraction >= before ? nil : 0
        }
        try execute("PRAGMA incremental_vacuum")
        return max(0, before - (try pragma("PRAGMA page_count"))) * (try pragma("PRAGMA page_size"))
    }

    /// The part of the file (1 / this) the free list must hold before ``reclaimSpace()`` asks
    /// for a `VACUUM`: a quarter.
    static let vacuumFreeFraction: Int64 = 4

    /// Rewrites the whole file without its free pages (VACUUM; outside any transaction; the file
    /// keeps its auto-vacuum mode). Returns the bytes it gave back.
    func reclaimSpaceOutsideTransaction() throws -> Int64 {
        let before = try pragma("PRAGMA page_count")
        try execute("VACUUM")
        return max(0, before - (try pragma("PRAGMA page_count"))) * (try pragma("PRAGMA page_size"))
    }

    /// The page cache of an import, in KiB: bounded, so a 1 000 000-record import stays well
    /// under 200 MB.
    static let importCacheKiB = 65_536

    /// Runs `body` (a bulk write's transaction, begun inside it) with the page cache grown to
    /// ``importCacheKiB`` and temporary files in memory (both set back after it):
    /// - a transaction larger than the cache spills pages to the WAL and reads them back, and the
    ///   uid index, written in random order, would be spilled and re-read over and over;
    /// - a statement that inserts many rows keeps the pages it changes in a statement journal (to
    ///   undo itself alone if a row fails a constraint): a temporary file past 64 KiB, written a
    ///   page at a time (100 000 articles: some 110 000 pages, two system calls each). In memory,
    ///   it is a copy of each page instead, freed when the statement ends. (Set outside the
    ///   transaction: SQLite decides where the journal goes when the transaction begins.)
    func withBulkWriteSettings<T>(_ body: () throws -> T) throws -> T {
        let cache = try pragma("PRAGMA cache_size"), temp = try pragma("PRAGMA temp_store")
        try execute("PRAGMA cache_size = -\(Self.importCacheKiB); PRAGMA temp_store = MEMORY")
        defer { _ = try? execute("PRAGMA cache_size = \(cache); PRAGMA temp_store = \(temp)") }
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
    /// The most of a store file a reader maps into memory (SQLite caps it at its own maximum, 2 GiB
    /// as Debian builds it).
    static let readerMapBytes: Int64 = 1 << 40

    /// A read-only connection to the SQLite store file at `path` that waits for locks as the
    /// store does: for the half of a read run on another thread.
    ///
    /// It reads the file through a memory map (`PRAGMA mmap_size`): a scan then reads its pages
    /// where the kernel keeps them, not through one `pread` copy per page into SQLite's page
    /// cache; that is about a quarter of SQLite's time in a million-row scan. (Pages still in the
    /// write-ahead log are read from it as before. SQLite's caveat for maps: an I/O error, or the
    /// file truncated behind SQLite's back, faults the process instead of failing the read.)
    static func sqliteReader(path: String) throws -> Connection {
        let db = try Connection(path: path, readOnly: true)
        do {
            try db.execute("PRAGMA busy_timeout = \(Store.busyTimeoutMilliseconds); PRAGMA mmap_size = \(readerMapBytes)")
        } catch {
            db.close()
            throw error
        }
        return db
    }
}
