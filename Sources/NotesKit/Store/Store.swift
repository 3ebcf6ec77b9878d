import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A NotesKit store: one SQLite file (or a private in-memory database) holding articles, drafts,
/// conversations, messages and the change feed.
///
/// A `Store` owns one connection and serializes every call on it behind a lock, so it is safe to
/// use from many threads at once. Every write runs in one transaction: it commits whole or leaves
/// nothing behind. Files are opened in WAL mode with `foreign_keys=ON` and a busy timeout of
/// ``busyTimeoutMilliseconds``, so other processes may share the file. With ``Durability/durable``
/// (the default) a write that returned survives a power cut; see ``Durability``.
///
/// ```swift
/// let store = try Store.open(path: "notes.db")
/// let article = try store.articles.create(title: "2026-11-29", content: "今天……")
/// store.close()
/// ```
public final class Store: Sendable {
    /// How long a call waits for another connection's lock before failing with `.busy`.
    public static let busyTimeoutMilliseconds: Int32 = 10_000
    /// Rows from which a bulk insert (`createMany`, `insertMany`) is a `bulk` write (see ``write(bulk:_:)``).
    static let bulkRows = 1_024

    /// The file path, or nil for an in-memory store.
    public let path: String?

    /// The store's one connection, reached only under this lock (nil once closed).
    private let connection: Mutex<Connection?>
    /// The thread holding the lock (its `pthread_self`), 0 when none: a call made from inside another
    /// call on the same thread (an import's progress callback calling the store) is refused rather
    /// than deadlocking.
    private let owner = Atomic<UInt>(0)
    /// A thread working for the call that holds the lock (a table import's reading thread, which
    /// runs the caller's progress callback), 0 when none: its calls are refused as the holder's
    /// are, where they would wait for a lock that waits for them.
    private let helper = Atomic<UInt>(0)
    /// The subscribers and how the commits reach them (see ``ChangeDelivery``).
    private let delivery: ChangeDelivery
    let cursors: CursorCodec

    /// True when opened with `readOnly`: every write fails with `.readOnly`.
    public let isReadOnly: Bool

    /// How far a returned write is kept: ``Durability/durable`` unless opened otherwise.
    public let durability: Durability

    /// A store over `connection` (any backend: see `Database.swift`), set up by the backend (its
    /// settings and migrations). `path` is the SQLite file, nil for another backend or in memory.
    init(path: String?, connection: Connection, readOnly: Bool = false, durability: Durability = .durable) throws {
        self.path = path
        self.connection = Mutex(connection)
        self.isReadOnly = readOnly
        self.durability = durability
        delivery = ChangeDelivery(wakeUps: connection.database.feedWakeUps)
        do {
            try connection.database.setUp(connection, readOnly: readOnly, durability: durability)
            cursors = CursorCodec(secret: try Store.cursorSecret(connection))
        } catch {
            connection.close()
            throw error
        }
    }

    /// Opens the store file at `path`, creating it (and its schema) if it does not exist.
    ///
    /// With `readOnly`, the file must exist and is never written (every write fails with
    /// `.readOnly`); it must already have this library's schema.
    ///
    /// A new store file is created with exactly `mode` (nil: ``FileModes/privateFile``, owner-only),
    /// whatever the umask, and SQLite gives its `-wal` and `-shm` files the same mode. An existing
    /// store keeps its mode: it is never chmodded (``exposedFiles(path:mode:)`` lists the files
    /// other accounts can read). Opening a file also removes the leftovers of exports killed in its
    /// folder (``TempEntries``), unless `readOnly`.
    ///
    /// Fails with `.storage` for a folder or an unreachable path, `.corrupt` for a file that is not
    /// a database, `.schema` for a database that is not a NotesKit store or was written by a
    /// newer NotesKit (such a file is never altered), and `.validation` for a bad `mode`.
    ///
    /// With ``Durability/fast`` a write that returned survives the process being killed but not a
    /// power cut (its last few writes may be lost then; the file stays consistent).
    public static func open(path: String, readOnly: Bool = false, durability: Durability = .durable,
                            mode: UInt32? = nil) throws -> Store {
        guard !path.isEmpty else { throw NotesError(.invalidArgument, "the store path is empty") }
        if PostgresConnection.isURI(path) { return try openPostgres(uri: path, readOnly: readOnly) }
        guard !path.utf8.contains(0) else { throw NotesError(.invalidArgument, "the store path contains a NUL character") }
        let mode = try FileModes.fileMode(mode)
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw NotesError(.storage, "cannot open \(NotesError.shown(path)): it is a folder, not a store file")
        }
        try refuseTinyFile(path, size: info.st_size)
        if !readOnly && path != ":memory:" {
            TempEntries.sweep(folderOf: path)
            try createStoreFile(path, mode: mode)
        }
        return try Store(path: path, connection: Connection(path: path, readOnly: readOnly), readOnly: readOnly,
                         durability: durability)
    }

    /// SQLite takes a 1-byte file for an empty database and overwrites it; a non-empty file shorter
    /// than a database header that is not all zeros is somebody's data, so it is refused instead.
    private static func refuseTinyFile(_ path: String, size: Int) throws {
        guard size > 0 && size < 100 else { return }
        let fd = Glibc.open(path, O_RDONLY)
        guard fd >= 0 else { return }  // SQLite reports why it cannot open it
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: size)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, size) }
        if n > 0 && bytes[..<n].contains(where: { $0 != 0 }) {
            throw NotesError(.corrupt, "the file is not a database (\(NotesError.shown(path)) holds \(size) bytes of other data); open or create a NotesKit store file instead")
        }
    }

    /// A private in-memory store, gone when closed: for tests and scratch work.
    public static func memory() throws -> Store {
        try Store(path: nil, connection: Connection(path: ":memory:"), durability: .fast)
    }

    /// Closes the store. Further calls fail with `.closed`; closing twice does nothing.
    public func close() {
        // Closing from inside a call on this thread (an import's progress callback) cannot take the
        // lock; the connection then closes when the last reference to the store goes away.
        delivery.removeAll()
        guard !isHeldHere else { return }
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }

    public var isClosed: Bool { connection.withLock { $0 == nil } }

    deinit {
        delivery.removeAll()
        connection.withLock { $0?.close() }
    }

    // MARK: - Access

    /// This thread's identity, as `owner` holds it.
    private static func currentThread() -> UInt { UInt(pthread_self()) }

    /// True on the thread holding the lock, and on the thread working for it (see ``helping(_:)``).
    private var isHeldHere: Bool {
        let me = Store.currentThread()
        return owner.load(ordering: .acquiring) == me || helper.load(ordering: .acquiring) == me
    }

    /// Runs `body` on a thread working for the call holding the lock, which waits for it (one at a
    /// time): a call to the store from `body` is refused, as one from the holding thread is.
    func helping<T>(_ body: () -> T) -> T {
        helper.store(Store.currentThread(), ordering: .releasing)
        defer { helper.store(0, ordering: .releasing) }
        return body()
    }

    /// Runs `body` with the open connection under the store's lock, refusing a nested call from the
    /// thread that holds it.
    private func locked<T>(_ body: (Connection) throws -> T) throws -> T {
        let me = Store.currentThread()
        if isHeldHere {
            throw NotesError(.invalidArgument, "the store is busy with a call on this same thread (a progress callback must not call the store it reports on)")
        }
        return try connection.withLock { connection in
            guard let connection else { throw NotesError(.closed, "the store is closed") }
            owner.store(me, ordering: .releasing)
            defer { owner.store(0, ordering: .releasing) }
            return try body(connection)
        }
    }

    /// Runs `body` with the connection, under the store's lock.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try locked { connection in
            defer { connection.finishStatements() }
            return try body(connection)
        }
    }

    /// Like ``read(_:)``, with every statement of `body` reading one snapshot: one read transaction
    /// (so a read of several statements takes the database's read lock once, not once each).
    func readSnapshot<T>(_ body: (Connection) throws -> T) throws -> T {
        try readSnapshot(lazily: false) { db, _ in try body(db) }
    }

    /// Like ``readSnapshot(_:)``; `lazily`, the snapshot begins only when `body` calls
    /// ``ReadSnapshot/begin()`` (statements before it each read their own moment), and not at all
    /// when it never does: on a server, the transaction's BEGIN and COMMIT are two round trips.
    func readSnapshot<T>(lazily: Bool, _ body: (Connection, ReadSnapshot) throws -> T) throws -> T {
        try read { db in
            let snapshot = ReadSnapshot(db)
            if !lazily { try snapshot.begin() }
            do {
                let result = try body(db, snapshot)
                db.finishStatements()
                if snapshot.begun { try db.executeOften(db.sql.exchange.endSnapshot) }
                return result
            } catch {
                db.finishStatements()
                if snapshot.begun { _ = try? db.execute(db.sql.exchange.abortSnapshot) }
                throw error
            }
        }
    }

    /// Runs `body` in one write transaction, under the store's lock; after it commits, tells the
    /// subscribers what changed (outside the lock, on the calling thread: see ``ChangeDelivery``).
    ///
    /// The transaction's time (``WriteContext/now``) is taken once it holds the write lock, so
    /// writers that wait for one another (other threads, processes or hosts) write times in the
    /// order they commit. A commit with more than ``WriteContext/maxBufferedChanges`` changes (a
    /// bulk import) is not held in memory: its changes are read back from the feed and delivered in
    /// several calls.
    ///
    /// A `bulk` write (an import, a bulk insert of at least ``bulkRows`` rows) runs with the
    /// backend tuned for a large transaction, from its first statement to its commit (the search
    /// index's fold included): see `DatabaseConnection.withBulkWriteSettings`.
    ///
    /// A `sends` write only adds messages at its time (``WriteContext/now``): their changes join
    /// the feed's lazy run of sends where the backend has one (``LazySends``). Any other write
    /// closes that run before `body` runs.
    func write<T>(bulk: Bool = false, sends: Bool = false, _ body: (WriteContext) throws -> T) throws -> T {
        var pinned = false, first: Int64?
        let (result, committed): (T, WriteContext.Committed)
        do {
            (result, committed) = try locked { connection in
                if isReadOnly { throw NotesError(.readOnly, "the store was opened read-only; open it without \(option: "readOnly", true) to change it") }
                func transaction() throws -> (T, WriteContext.Committed) {
                    try connection.transaction {
                        let context = WriteContext(connection: connection, bulk: bulk, sends: sends)
                        try context.feed.closeLazyRun(context)
                        let result = try body(context)
                        try context.beforeCommit()
                        first = context.firstSeq
                        pinned = self.delivery.committing(first: context.firstSeq, last: context.lastSeq, overflowed: context.overflowed)
                        return (result, context.committed)
                    }
                }
                return try bulk ? connection.database.withBulkWriteSettings(transaction) : transaction()
            }
        } catch {
            delivery.abandoned(pinned: pinned, first: first)
            throw error
        }
        delivery.committed(committed, pinned: pinned) { [weak self] since, limit in
            guard let self else { throw NotesError(.closed, "the store is closed") }
            return try self.changes(since: since, limit: limit)
        }
        return result
    }

    /// The oldest change a subscriber is still to be handed, or nil.
    var oldestPinnedSeq: Int64? { delivery.oldestPinnedSeq }

    // MARK: - Change feed

    /// The changes committed after `since` (a `seq`), oldest first, at most `limit` of them.
    ///
    /// Sees every commit to the file, from any handle or process. O(log n + limit). After a
    /// ``compact(retainMilliseconds:)``, a `since` older than what it removed gets the compacted
    /// feed: the latest change of every record changed after `since` (never a silent gap).
    public func changes(since: Int64 = 0, limit: Int = 1_000) throws -> [Change] {
        try changes(since: since, limit: limit, withUIDs: true)
    }

    /// ``changes(since:limit:)``, with the uids left empty when `withUIDs` is false (the layout
    /// needs only ids and revisions, and reads the feed before every call).
    func changes(since: Int64, limit: Int, withUIDs: Bool) throws -> [Change] {
        try PageLimit.check(limit)
        // The feed's rows and its run of sends, read in one snapshot (another handle may close
        // the run in between).
        return try readSnapshot(lazily: true) { db, snapshot in
            if db.sql.feed.lazy != nil { try snapshot.begin() }
            return try Feed.changes(db, since: since, limit: limit, uids: withUIDs)
        }
    }

    /// The `seq` of the newest change, 0 for a store without any.
    public func lastChangeSeq() throws -> Int64 {
        try read { db in try Feed.lastSeq(db) }
    }

    /// Calls `callback` with the changes of each commit made through this store handle, on the
    /// committing thread and outside the store's lock (so the callback may call the store). A commit
    /// of more than 1 000 changes (an import) comes in several calls of at most 1 000, oldest first.
    ///
    /// On a store on a PostgreSQL server it also gets the commits of every other handle, process
    /// and host that this role may read (woken by `NOTIFY`), on a thread of the store's, each change
    /// once and every change in seq order. On a SQLite file, commits by other handles or processes
    /// are read with ``changes(since:limit:)``. Returns a token for ``unsubscribe(_:)``; fails only
    /// when the store is closed or its server cannot be reached.
    public func subscribe(_ callback: @escaping @Sendable ([Change]) -> Void) throws -> Int64 {
        try delivery.subscribe(callback, head: { try lastChangeSeq() }) { [weak self] since, limit in
            guard let self else { throw NotesError(.closed, "the store is closed") }
            return try self.changes(since: since, limit: limit)
        }
    }

    /// Stops the callbacks of `token`; false when it was not subscribed.
    @discardableResult
    public func unsubscribe(_ token: Int64) -> Bool { delivery.unsubscribe(token) }
}

/// What a write transaction sees: the connection, the time of the write, and the observers of
/// what it writes (the change feed first, then the search index: see `WriteObserver.swift`).
final class WriteContext {
    /// The most changes of one transaction kept in memory for the subscribers; past it they are
    /// read back from the feed after the commit, so a bulk import runs in bounded memory.
    static let maxBufferedChanges = 1_000

    let connection: Connection
    /// One instant for the whole transaction, so every row it writes carries the same time.
    let now = Timestamp.now()
    /// The change feed: the first observer; its seqs also order the conversations' activity.
    let feed: FeedRecorder
    private let observers: [any WriteObserver]
    /// True while a bulk write announces its rows in chunks and more of the same call follow
    /// (``insertRecords(_:_:announce:bind:)``): observers that finish work by size (the search
    /// index's mid-transaction fold) wait for the call's last chunk, as when it announced at once.
    var moreRowsComing = false
    /// Whether this is a bulk write (see ``Store/write(bulk:sends:_:)``).
    let bulk: Bool

    init(connection: Connection, bulk: Bool = false, sends: Bool = false) {
        self.connection = connection
        self.bulk = bulk
        feed = FeedRecorder(lazy: sends && connection.sql.feed.lazy != nil)
        observers = [feed] + WriteContext.makeObservers()
    }

    /// What the subscribers are told once the transaction committed (taken out of the store's lock).
    struct Committed: Sendable {
        let changes: [Change]
        let firstSeq: Int64?
        let lastSeq: Int64
        let overflowed: Bool
    }

    var committed: Committed { Committed(changes: changes, firstSeq: firstSeq, lastSeq: lastSeq, overflowed: overflowed) }

    func prepare(_ sql: String) throws -> Statement { try connection.prepare(sql) }

    /// Tells every observer what the write just did to a record.
    func announce(_ change: RecordChange) throws {
        for observer in observers { try observer.observe(change, in: self) }
    }

    /// Lets every observer finish its part of the transaction (called before it commits).
    func beforeCommit() throws {
        for observer in observers { try observer.beforeCommit(self) }
    }

    /// The transaction's changes, while there are at most ``maxBufferedChanges`` of them.
    var changes: [Change] { feed.changes }
    /// The seqs of the transaction's first and last change (`lastSeq` 0 before any).
    var firstSeq: Int64? { feed.firstSeq }
    var lastSeq: Int64 { feed.lastSeq }
    /// True once the transaction recorded more changes than are buffered.
    var overflowed: Bool { feed.overflowed }
}

/// The read transaction of a ``Store/readSnapshot(lazily:_:)``: every statement after ``begin()``
/// reads one snapshot.
final class ReadSnapshot {
    private let db: Connection
    private(set) var begun = false

    init(_ db: Connection) { self.db = db }

    /// Begins the snapshot, unless it has begun.
    func begin() throws {
        guard !begun else { return }
        try db.executeOften(db.sql.exchange.beginSnapshot)
        begun = true
    }
}
