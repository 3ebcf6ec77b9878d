/// The storage seam: what NotesKit's store logic needs from a database.
///
/// The store logic (the article, draft, conversation and message stores, the change feed, the
/// search index, selections, exchange) is written once, against ``Connection`` and ``Statement``.
/// A backend supplies three things, each in its own folder (`Store/SQLite/`, `Store/PostgreSQL/`):
///
/// 1. a ``DatabaseConnection`` and its ``DatabaseStatement`` (prepare, bind, step, read columns,
///    transactions): the only code that calls the database's client library;
/// 2. its ``StoreSQL``: the text of every statement the store logic runs, in the backend's own
///    dialect (placeholders, types, upserts, `RETURNING`), under the same names for every backend —
///    the compiler checks that a backend has them all;
/// 3. its own forward-only migrations, applied by its `setUp` when a connection opens (SQLite:
///    `SQLiteSchema`, recorded in its `migrations` table; each backend chooses its own names, and
///    refuses a database migrated by a newer NotesKit).
///
/// Conventions every backend keeps, so the store logic stays one:
/// - parameters are numbered from 1 and columns from 0, in the order the ``StoreSQL`` entry's
///   documentation gives; times are Int64 milliseconds, booleans Int64 0/1;
/// - uids cross the seam as two `UInt64` halves (the UUID's 16 bytes, big-endian): SQLite stores a
///   16-byte BLOB, another backend may use its `uuid` type;
/// - a constraint violation (a duplicate uid) is a `NotesError` of kind `.conflict`, a dropped
///   connection `.storage`; every error is a `NotesError`;
/// - ``DatabaseConnection/begin()`` takes the write lock at once (SQLite: BEGIN IMMEDIATE), so
///   a transaction that reads then writes never fails half-way on a lock;
/// - what a write changed is announced to the write's observers (the change feed and the search
///   index: see ``WriteObserver``), never written by the backend behind the store's back.
protocol DatabaseConnection: AnyObject {
    /// The SQL text of every statement the store logic runs, in this backend's dialect.
    var sql: StoreSQL { get }
    /// A new prepared statement (``Connection`` caches it by its text).
    func prepare(_ sql: String) throws -> any DatabaseStatement
    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws
    /// Starts a write transaction, taking the write lock at once.
    func begin() throws
    func commit() throws
    /// Rolls back the open transaction, if any; never fails.
    func rollback()
    /// The id of the last row inserted by this connection (SQLite's rowid; a backend without one
    /// returns ids with `RETURNING` and its ``StoreSQL`` says so).
    var lastInsertRowID: Int64 { get }
    /// Rows changed by the last statement.
    var changes: Int { get }
    /// Configures a newly opened connection and brings its schema up to date with this backend's
    /// own migrations; refuses (`.schema`) a database that is not a NotesKit store, or was written by
    /// a newer NotesKit. With `readOnly`, writes nothing.
    func setUp(_ connection: Connection, readOnly: Bool, durability: Durability) throws
    /// Closes the connection (its statements were finalized first).
    func close()
    /// How a reader learns that other connections committed changes (PostgreSQL: `LISTEN`), so
    /// that the store's subscribers get them too; nil when the backend has no such signal (SQLite).
    var feedWakeUps: FeedWakeUpSource? { get }

    // Storage upkeep: what a backend does its own way (SQLite: PRAGMAs), or not at all.

    /// Inside a write transaction that removed rows (a compaction): gives the freed space back
    /// and returns the bytes given back, or nil when that can only be done outside a transaction.
    func reclaimSpace() throws -> Int64?
    /// Outside any transaction: gives freed space back; returns the bytes (0 when nothing to do).
    func reclaimSpaceOutsideTransaction() throws -> Int64
    /// Runs `body`, a large write transaction (an import) from its begin to its commit, with the
    /// connection tuned for it.
    func withBulkWriteSettings<T>(_ body: () throws -> T) throws -> T
    /// Caps the database at about `bytes` while this connection is open (`.storageFull` past it);
    /// returns the cap in effect. A backend without a cap refuses with `.invalidArgument`.
    func setMaxSize(bytes: Int64) throws -> Int64
}

/// One prepared statement of a ``DatabaseConnection``: parameters 1-based, columns 0-based.
protocol DatabaseStatement {
    /// Clears the bindings and the current result, so the statement can run again.
    func reset()
    /// Ends the current run so the statement can run again with every parameter bound anew: the
    /// bindings are kept (SQLite then reuses a text parameter's buffer instead of freeing it).
    func rewind()
    func finalize()
    func bind(_ index: Int32, int64 value: Int64?) throws
    func bind(_ index: Int32, text value: String?) throws
    func bind(_ index: Int32, blob bytes: UnsafeRawBufferPointer) throws
    /// Binds a uid given as the two big-endian halves of its 16 bytes.
    func bind(_ index: Int32, uid high: UInt64, _ low: UInt64) throws
    /// Runs the statement or advances to its next row: true while there is one.
    func step() throws -> Bool
    func isNull(_ column: Int32) -> Bool
    func int64(_ column: Int32) -> Int64
    func text(_ column: Int32) -> String
    /// Calls `body` with the column's UTF-8 bytes in place (valid until the next step or reset).
    func withUTF8<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
    /// Calls `body` with the column's bytes in place (valid until the next step or reset).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T
    /// A uid column's halves, or nil when it holds anything but a uid (a damaged store).
    func uid(_ column: Int32) -> (high: UInt64, low: UInt64)?
}

/// The store's handle on one database connection, whatever the backend: a cache of prepared
/// statements, transactions, and the backend's SQL (``sql``).
///
/// Not thread-safe by itself: the backend's connection is not (SQLite's is opened with
/// `SQLITE_OPEN_NOMUTEX`) and the statement cache is plain Swift state.
///
/// Why the unchecked `Sendable` is safe: a connection is only ever used by one thread at a time. A
/// ``Store``'s connection lives inside the store's `Mutex<Connection?>` and is handed only to the
/// non-escaping bodies of `Store.read`/`Store.write`, which run under that lock; the other
/// connections (a selection's second half, `BackgroundRead`) are made, used and closed by one
/// thread. What the compiler cannot see is that those bodies never keep the connection (or a
/// `Statement` of it) past their return; the conformance is what lets it check everything around
/// the lock (`Store` itself and the layouts, selections and threads built on it are checked
/// `Sendable`). Exercised from many threads at once by `ConcurrencyTests` (Swift) and
/// `test_threads.py`.
final class Connection: @unchecked Sendable {
    let database: any DatabaseConnection
    /// The backend's statements (see ``StoreSQL``).
    let sql: StoreSQL
    @exclusivity(unchecked) private var statements: [String: Statement] = [:]
    /// Statements stepped since the last ``finishStatements()``; each may hold a read transaction open.
    @exclusivity(unchecked) private var inUse: [Statement] = []
    /// The statements `prepare` handed out lately and their texts (at most ``recentCount``, replaced
    /// in turn): a hot read (`get`, a page) runs the same statement call after call, and a write
    /// (a send) the same few, found here by comparing texts (the same string storage: one compare;
    /// another text differs within its first bytes) before the dictionary hashes the whole text.
    /// (The run-time exclusivity checks of these properties are off: the connection is only ever
    /// used by one thread at a time, see above.)
    @exclusivity(unchecked) private var recentSQL: [String] = []
    @exclusivity(unchecked) private var recent: [Statement] = []
    @exclusivity(unchecked) private var recentNext = 0
    static let recentCount = 8
    /// The SQL text of each keyset walk's shape run on this connection (``Keyset/Shape``): a few
    /// dozen shapes at most, each made once.
    @exclusivity(unchecked) private var keysetTexts: [Keyset.Shape: String] = [:]

    init(_ database: any DatabaseConnection) {
        self.database = database
        self.sql = database.sql
    }

    /// Finalizes every statement and closes the database.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        keysetTexts.removeAll()
        recentSQL.removeAll()
        recent.removeAll()
        database.close()
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws { try database.execute(sql) }

    /// Runs one statement that returns no rows and runs on every read (a read snapshot's BEGIN
    /// and COMMIT): on SQLite prepared once and cached (parsing it again cost a short search a few
    /// per cent of its time), elsewhere sent as ``execute(_:)`` sends it.
    func executeOften(_ sql: String) throws {
        guard database is SQLiteConnection else { return try execute(sql) }
        try prepare(sql).run()
    }

    /// The SQL text of a keyset walk's `shape`, made on its first use; the same string every time,
    /// so that ``prepare(_:)`` finds its statement by the string's storage.
    func keysetText(_ shape: Keyset.Shape) -> String {
        if let text = keysetTexts[shape] { return text }
        let text = shape.sql(idIn: sql.articleIndex.idIn)
        keysetTexts[shape] = text
        return text
    }

    /// A prepared statement for `sql`, reset and with its bindings cleared, cached for reuse.
    func prepare(_ sql: String) throws -> Statement {
        if let cached = recentStatement(sql) ?? remembered(sql) {
            if cached.inUse {
                cached.reset()
            } else {  // (finishStatements left it reset, its bindings cleared)
                cached.inUse = true
                inUse.append(cached)
            }
            return cached
        }
        let statement = Statement(try database.prepare(sql))
        statements[sql] = statement
        remember(sql, statement)
        statement.inUse = true
        inUse.append(statement)
        return statement
    }

    /// The statement for `sql` among those handed out lately, or nil.
    @inline(__always)
    private func recentStatement(_ sql: String) -> Statement? {
        for k in recentSQL.indices where recentSQL[k] == sql { return recent[k] }
        return nil
    }

    /// The cached statement for `sql`, remembered among those handed out lately.
    private func remembered(_ sql: String) -> Statement? {
        guard let cached = statements[sql] else { return nil }
        remember(sql, cached)
        return cached
    }

    private func remember(_ sql: String, _ statement: Statement) {
        if recent.count < Self.recentCount {
            recentSQL.append(sql)
            recent.append(statement)
        } else {
            recentSQL[recentNext] = sql
            recent[recentNext] = statement
            recentNext = (recentNext + 1) % Self.recentCount
        }
    }

    /// Resets every statement used since the last call, so that none keeps a read transaction (and
    /// with it an old snapshot of the database) open between calls. The store calls it after each use.
    func finishStatements() {
        for statement in inUse {
            statement.reset()
            statement.inUse = false
        }
        inUse.removeAll(keepingCapacity: true)
    }

    /// Runs `body` in a write transaction, committing on success and rolling back on any error,
    /// so that a failure leaves nothing half-written.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.begin()
        do {
            let result = try body()
            finishStatements()
            try database.commit()
            return result
        } catch {
            finishStatements()
            database.rollback()
            throw error
        }
    }

    var lastInsertRowID: Int64 { database.lastInsertRowID }
    var changes: Int { database.changes }

    // MARK: - Inserted ids
    //
    // A single-row INSERT (conversations, drafts) learns its id here: from the row the statement
    // returns (a backend whose insert statements end in `RETURNING id`), else from the
    // connection's last insert rowid (SQLite, where a RETURNING would cost a row per insert).
    // Articles and messages insert through `WriteContext.insertRows` (`RowInsert.swift`).

    /// Runs an INSERT of one row and returns its id, or nil when it inserted nothing (an
    /// `ON CONFLICT DO NOTHING` that met its uid).
    func insertedIDIfAny(_ insert: Statement) throws -> Int64? {
        if try insert.step() {
            let id = insert.int64(0)
            while try insert.step() {}
            return id
        }
        return changes == 1 ? lastInsertRowID : nil
    }

    /// Runs an INSERT of one row that must insert it, and returns its id.
    func insertedID(_ insert: Statement) throws -> Int64 {
        guard let id = try insertedIDIfAny(insert) else { throw NotesError(.internalError, "an insert wrote no row") }
        return id
    }
}

/// A prepared statement of a ``Connection``. Bind parameters are 1-based, columns 0-based.
///
/// SQLite's statements are held as themselves and stepped and read directly (no dynamic dispatch
/// per column read, the hot path of every read); another backend's through ``DatabaseStatement``,
/// as are every backend's binds, resets and finalizing (`other`).
final class Statement {
    /// The statement when the backend is SQLite: its two pointers, read without a copy of an enum
    /// payload or a retain (an outlined copy per column read cost a few percent of a scan).
    private let lite: SQLiteStatement?
    /// The statement through the protocol (every backend; used when `lite` is nil).
    private let other: any DatabaseStatement
    /// Listed in the connection's statements to reset after the current call.
    @exclusivity(unchecked) var inUse = false
    /// A failed bind since the last reset, thrown by the next `step`.
    @exclusivity(unchecked) private var bindFailure: (any Error)?

    init(_ statement: any DatabaseStatement) {
        lite = statement as? SQLiteStatement
        other = statement
    }

    func finalize() { other.finalize() }

    func reset() {
        other.reset()
        bindFailure = nil
    }

    /// Readies the statement for another run whose binds set every parameter again (see
    /// ``DatabaseStatement/rewind()``).
    func rewind() {
        other.rewind()
        bindFailure = nil
    }

    /// Runs a bind, keeping its error for the next `step` (binds chain: `.bind(1, a).bind(2, b)`).
    @inline(__always)
    private func binding(_ body: () throws -> Void) -> Statement {
        do { try body() } catch { if bindFailure == nil { bindFailure = error } }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int64?) -> Statement {
        binding { try other.bind(index, int64: value) }
    }

    @discardableResult
    func bind(_ index: Int32, _ value: String?) -> Statement {
        binding { try other.bind(index, text: value) }
    }

    /// Binds a scan's row filter, for SQLite's `nk_scan_row` (see ``ScanFilter``); the filter
    /// must outlive the statement's steps. Another backend has no such function: the next `step`
    /// fails.
    @discardableResult
    func bind(_ index: Int32, scanFilter: ScanFilter) -> Statement {
        binding {
            guard let s = lite else { throw NotesError(.internalError, "a scan filter runs only in SQLite") }
            s.bind(index, scanFilter: scanFilter)
        }
    }

    @discardableResult
    func bind(_ index: Int32, blob: [UInt8]) -> Statement {
        binding { try blob.withUnsafeBytes { try other.bind(index, blob: $0) } }
    }

    // MARK: - Uids
    //
    // Every uid column (articles, drafts, conversations, messages, the change feed's deletes) stores
    // the UUID as 16 bytes (SQLite: a BLOB), not its 36 characters of text; the API keeps the text.
    // Every SQL site that writes or reads a uid goes through these.

    /// Binds a UUID string (`0b6f6c1e-…`) as its 16 bytes. A string that is not a UUID fails the
    /// next `step` with `.validation` (callers normalize uids first, so only a bug gets there).
    @discardableResult
    func bind(_ index: Int32, uid: String) -> Statement {
        binding {
            guard let (high, low) = UID.halves(uid) else {
                throw NotesError.validation("uid", "a uid must be a UUID like 0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e")
            }
            try other.bind(index, uid: high, low)
        }
    }

    /// The halves of a uid column, or nil when it holds anything else.
    @inline(__always)
    private func uidHalves(_ column: Int32) -> (high: UInt64, low: UInt64)? {
        if let s = lite {
            s.uid(column)
        } else {
            other.uid(column)
        }
    }

    /// The UUID string of a uid column. A column holding anything else (only a damaged or
    /// foreign-written store has one) is read as its text, so a read never fails on it.
    func uid(_ column: Int32) -> String {
        guard let (high, low) = uidHalves(column) else { return text(column) }
        return UID.text(high: high, low: low)
    }

    /// A uid column as the UUID text the API shows (`0b6f6c1e-…`, 36 bytes), formatted in place
    /// without a `String`; a column that is not a uid (a damaged file) as its stored text.
    func withUIDText<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        guard let (high, low) = uidHalves(column) else { return try withUTF8(column) { try body(UnsafeRawBufferPointer($0)) } }
        return try UID.withText(high: high, low: low, body)
    }

    /// Appends a uid column's text (as ``withUIDText(_:_:)`` has it) to `out`, formatted straight
    /// into the column's buffer.
    @inline(__always)
    func appendUIDText(_ column: Int32, to out: Column) {
        if let (high, low) = uidHalves(column) {
            out.append(uidHigh: high, low: low)
        } else {
            withUTF8(column) { out.append(utf8: UnsafeRawBufferPointer($0)) }
        }
    }

    func optionalUID(_ column: Int32) -> String? {
        isNull(column) ? nil : uid(column)
    }

    // MARK: - Running

    /// Advances to the next row: true while there is one.
    func step() throws -> Bool {
        if let failure = bindFailure {
            bindFailure = nil
            throw failure
        }
        if let s = lite {
            return try s.step()
        } else {
            return try other.step()
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
    }

    /// Runs the statement (prepared, or reset) once per key of `keys`, each bound as parameter 1
    /// (a delete by id or seq), and leaves it reset.
    func run(eachBinding keys: some Sequence<Int64>) throws {
        for key in keys {
            bind(1, key)
            try run()
            reset()
        }
    }

    /// The statement's first row decoded by `decode`, or nil when it returns none; the statement
    /// is reset after (a lookup by a key: one row at most).
    func first<T>(_ decode: (Statement) throws -> T) throws -> T? {
        defer { reset() }
        return try step() ? try decode(self) : nil
    }

    // MARK: - Columns

    func isNull(_ column: Int32) -> Bool {
        if let s = lite {
            s.isNull(column)
        } else {
            other.isNull(column)
        }
    }

    func int64(_ column: Int32) -> Int64 {
        if let s = lite {
            s.int64(column)
        } else {
            other.int64(column)
        }
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    func text(_ column: Int32) -> String {
        if let s = lite {
            s.text(column)
        } else {
            other.text(column)
        }
    }

    func optionalText(_ column: Int32) -> String? {
        isNull(column) ? nil : text(column)
    }

    /// Calls `body` with the column's UTF-8 bytes in place (valid until the next step or reset).
    func withUTF8<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let s = lite {
            try s.withUTF8(column, body)
        } else {
            try other.withUTF8(column, body)
        }
    }

    /// Calls `body` with the column's bytes in place (valid until the next step or reset).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        if let s = lite {
            try s.withBlob(column, body)
        } else {
            try other.withBlob(column, body)
        }
    }

    func optionalBlob(_ column: Int32) -> [UInt8]? {
        isNull(column) ? nil : withBlob(column) { Array($0) }
    }
}
