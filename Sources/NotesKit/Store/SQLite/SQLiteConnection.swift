import CSQLite

/// The SQLite backend of the storage seam (see `Store/Database.swift`): one SQLite connection.
///
/// The only type, with ``SQLiteStatement``, that calls SQLite's C API. Not thread-safe: a
/// ``Store`` owns it (through its ``Connection``) and serializes every use behind its lock.
final class SQLiteConnection: DatabaseConnection {
    let db: OpaquePointer
    let sql = StoreSQL.sqlite
    let isInMemory: Bool
    /// BEGIN IMMEDIATE and COMMIT, prepared once: parsing them on every write costs a small write
    /// (one chat message) about a tenth of its time.
    private var beginStatement: OpaquePointer?
    private var commitStatement: OpaquePointer?

    /// Opens (or creates) the database at `path`; `":memory:"` gives a private in-memory database.
    /// A read-only connection never creates or writes the file.
    init(path: String, readOnly: Bool = false) throws {
        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let flags = access | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteConnection.error(code: rc, message: "cannot open \(NotesError.shown(path)): \(message)")
        }
        db = handle
        isInMemory = path == ":memory:"
        sqlite3_extended_result_codes(db, 1)
        Self.addScanFilterFunction(db)
    }

    /// The pointer type of a bound ``ScanFilter`` (a literal in the binary: SQLite keeps the pointer).
    static var scanFilterType: UnsafePointer<CChar> {
        UnsafeRawPointer(("nk_scan_filter" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// Adds the SQL function `nk_scan_row(filter, id, key, text[, text])`: whether a scan's row
    /// comes back, as the bound ``ScanFilter`` decides from the row's id, sort key and searched
    /// texts (a search's rowid-order scan). Not for use in triggers or views.
    private static func addScanFilterFunction(_ db: OpaquePointer) {
        let function: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, values in
            guard let values, count == 4 || count == 5,
                  let raw = sqlite3_value_pointer(values[0], SQLiteConnection.scanFilterType) else {
                sqlite3_result_error(context, "nk_scan_row takes a bound scan filter, an id, a key and one or two texts", -1)
                return
            }
            func text(_ value: OpaquePointer?) -> UnsafeBufferPointer<UInt8> {
                guard let p = sqlite3_value_text(value) else { return UnsafeBufferPointer(start: nil, count: 0) }
                return UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(value)))
            }
            let filter = Unmanaged<ScanFilter>.fromOpaque(raw).takeUnretainedValue()
            let keep = filter.keep(id: sqlite3_value_int64(values[1]), key: sqlite3_value_int64(values[2]), text(values[3]),
                                   count == 5 ? text(values[4]) : nil)
            sqlite3_result_int(context, keep ? 1 : 0)
        }
        // (Registering a function on a connection just opened fails only out of memory: the
        // scan's statement then fails to prepare, naming the function.)
        _ = sqlite3_create_function_v2(db, "nk_scan_row", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, nil, function, nil, nil, nil)
    }

    /// No wake-ups: a SQLite file's subscribers get the commits of their own handle.
    var feedWakeUps: FeedWakeUpSource? { nil }

    /// Closes the database (the ``Connection`` finalizes its statements first).
    func close() {
        sqlite3_finalize(beginStatement)
        sqlite3_finalize(commitStatement)
        beginStatement = nil
        commitStatement = nil
        sqlite3_close_v2(db)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw SQLiteConnection.error(code: rc, message: text)
        }
    }

    func prepare(_ sql: String) throws -> any DatabaseStatement { try prepareSQLite(sql) }

    /// A new prepared statement (the ``Connection`` caches it).
    func prepareSQLite(_ sql: String) throws -> SQLiteStatement {
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw lastError(rc) }
        return SQLiteStatement(raw, db: db)
    }

    func begin() throws { try run(&beginStatement, "BEGIN IMMEDIATE") }

    func commit() throws { try run(&commitStatement, "COMMIT") }

    func rollback() {
        if sqlite3_get_autocommit(db) == 0 { _ = try? execute("ROLLBACK") }
    }

    private func run(_ cached: inout OpaquePointer?, _ sql: String) throws {
        if cached == nil { cached = try prepareSQLite(sql).raw }
        let statement = SQLiteStatement(cached!, db: db)  // set just above
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Configures the connection and brings the schema up to date (see `SQLiteMigrations.swift`).
    func setUp(_ connection: Connection, readOnly: Bool, durability: Durability) throws {
        try SQLiteSchema.configure(connection, inMemory: isInMemory, readOnly: readOnly, durability: durability)
        try SQLiteSchema.migrate(connection, readOnly: readOnly)
    }

    /// Adds the SQL function `nk_uid(text)`: the 16 bytes of a UUID string, as uid columns store
    /// them (see `Statement.bind(_:uid:)`); text that is not a UUID fails the statement. The
    /// migration to compact rows converts every stored uid with it.
    func addUIDFunction() throws {
        let function: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, values in
            guard count == 1, let value = values?[0], let text = sqlite3_value_text(value) else {
                sqlite3_result_error(context, "nk_uid takes one text", -1)
                return
            }
            let uid = String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
            guard let (high, low) = UID.halves(uid) else {
                sqlite3_result_error(context, "a stored uid is not a UUID: \(NotesError.shown(uid, limit: 40))", -1)
                return
            }
            var bytes = (high.bigEndian, low.bigEndian)
            withUnsafeBytes(of: &bytes) { sqlite3_result_blob(context, $0.baseAddress, 16, csqlite_transient()) }
        }
        let rc = sqlite3_create_function_v2(db, "nk_uid", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, function, nil, nil, nil)
        if rc != SQLITE_OK { throw lastError(rc) }
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(db) }
    var changes: Int { Int(sqlite3_changes(db)) }

    func lastError(_ rc: Int32) -> NotesError { SQLiteConnection.lastError(db, rc) }

    static func lastError(_ db: OpaquePointer, _ rc: Int32) -> NotesError {
        error(code: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)), fallback: rc)
    }

    /// Maps an SQLite result code to the NotesError kind a caller can act on, keeping the code.
    static func error(code: Int32, message: String, fallback: Int32? = nil) -> NotesError {
        let code = code == SQLITE_OK ? (fallback ?? code) : code
        let kind: NotesError.Kind
        switch code & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: kind = .busy
        case SQLITE_CORRUPT, SQLITE_NOTADB: kind = .corrupt
        case SQLITE_READONLY, SQLITE_PERM: kind = .readOnly
        case SQLITE_FULL: kind = .storageFull
        case SQLITE_CONSTRAINT: kind = .conflict
        default: kind = .storage
        }
        var text = message
        switch code & 0xFF {
        case SQLITE_NOTADB: text = "the file is not a database (\(message))"
        case SQLITE_CORRUPT: text = "the store file is damaged (\(message)); restore it from a backup"
        case SQLITE_READONLY: text = "the store cannot be written (\(message)): it was opened read-only, or the file or its folder is not writable"
        case SQLITE_FULL: text = "the disk is full, or the store reached its max_size_bytes (\(message)): nothing of this write was saved; free some space (or raise the limit) and try again"
        default: break
        }
        return NotesError(kind, text, sqliteCode: code)
    }
}

extension Connection {
    /// The SQLite connection under `self`, for SQLite's own migrations (nil on another backend).
    var sqlite: SQLiteConnection? { database as? SQLiteConnection }

    /// See ``SQLiteConnection/addUIDFunction()``.
    func addUIDFunction() throws {
        guard let sqlite else { throw NotesError(.internalError, "nk_uid is a function of the SQLite backend") }
        try sqlite.addUIDFunction()
    }

    /// A connection to the SQLite database at `path` (see ``SQLiteConnection/init(path:readOnly:)``).
    convenience init(path: String, readOnly: Bool = false) throws {
        self.init(try SQLiteConnection(path: path, readOnly: readOnly))
    }
}

/// A valid pointer to an empty C string (the literal lives in the binary's read-only data), for
/// binding empty text and blobs, whose buffers may have no base address.
private var emptyCString: UnsafePointer<CChar> {
    UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}

/// One prepared SQLite statement: bind parameters are 1-based, columns 0-based, as in SQLite.
///
/// A plain value (two pointers): ``Statement`` holds it directly and calls it without a dynamic
/// dispatch, so a column read costs what `sqlite3_column_*` costs.
struct SQLiteStatement: DatabaseStatement {
    let raw: OpaquePointer
    let db: OpaquePointer

    init(_ raw: OpaquePointer, db: OpaquePointer) {
        self.raw = raw
        self.db = db
    }

    func finalize() { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    func rewind() { sqlite3_reset(raw) }

    func bind(_ index: Int32, int64 value: Int64?) throws {
        if let value { sqlite3_bind_int64(raw, index, value) } else { sqlite3_bind_null(raw, index) }
    }

    func bind(_ index: Int32, text value: String?) throws {
        guard var value else {
            sqlite3_bind_null(raw, index)
            return
        }
        let rc = value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                // An empty buffer may have no address; SQLite needs a non-NULL pointer for "".
                // The 64-bit call takes any length (no Int32 conversion to trap on); SQLite refuses
                // text over its limit with SQLITE_TOOBIG.
                sqlite3_bind_text64(raw, index, chars.baseAddress ?? emptyCString, UInt64(chars.count),
                                    csqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
        if rc != SQLITE_OK { throw bindError(rc) }
    }

    func bind(_ index: Int32, blob bytes: UnsafeRawBufferPointer) throws {
        // An empty blob still needs a non-NULL pointer, or SQLite stores NULL.
        let rc = sqlite3_bind_blob64(raw, index, bytes.baseAddress ?? UnsafeRawPointer(emptyCString), UInt64(bytes.count), csqlite_transient())
        if rc != SQLITE_OK { throw bindError(rc) }
    }

    /// A scan filter for `nk_scan_row` (see ``SQLiteConnection``), not retained.
    func bind(_ index: Int32, scanFilter: ScanFilter) {
        sqlite3_bind_pointer(raw, index, Unmanaged.passUnretained(scanFilter).toOpaque(), SQLiteConnection.scanFilterType, nil)
    }

    /// A uid as its 16 bytes (a BLOB): see ``Statement/bind(_:uid:)``.
    func bind(_ index: Int32, uid high: UInt64, _ low: UInt64) throws {
        var bytes = (high.bigEndian, low.bigEndian)
        _ = withUnsafeBytes(of: &bytes) { sqlite3_bind_blob(raw, index, $0.baseAddress, 16, csqlite_transient()) }
    }

    private func bindError(_ rc: Int32) -> NotesError {
        if rc == SQLITE_TOOBIG { return NotesError(.validation, "a text is too long to store (SQLite takes at most 1 000 000 000 bytes)") }
        return SQLiteConnection.error(code: rc, message: "cannot pass a value to SQLite")
    }

    /// Advances to the next row: true while there is one.
    func step() throws -> Bool {
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = SQLiteConnection.lastError(db, rc)
        sqlite3_reset(raw)
        throw error
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(raw, column) else { return "" }
        let n = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    // The column's value is fetched once (`sqlite3_column_value`) and then read with the
    // `sqlite3_value_*` calls: each `sqlite3_column_*` call costs the statement's checks and its
    // error bookkeeping again, about a fifth of a million-row scan's reads. (The value is valid
    // until the next step or reset, as the pointers read from it are anyway. SQLite calls it
    // "unprotected": read without the connection's mutex, which a connection opened NOMUTEX and
    // used by one thread at a time, as every connection here is, has no use for.)

    func withUTF8<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let value = sqlite3_column_value(raw, column)
        let p = sqlite3_value_text(value)
        let n = Int(sqlite3_value_bytes(value))
        return try body(UnsafeBufferPointer(start: p, count: p == nil ? 0 : n))
    }

    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let p = sqlite3_column_blob(raw, column)
        let n = Int(sqlite3_column_bytes(raw, column))
        return try body(UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : n))
    }

    /// The two halves of a uid column (16 bytes, big-endian), or nil when it holds anything else.
    func uid(_ column: Int32) -> (high: UInt64, low: UInt64)? {
        let value = sqlite3_column_value(raw, column)
        guard sqlite3_value_type(value) == SQLITE_BLOB, sqlite3_value_bytes(value) == 16,
              let p = sqlite3_value_blob(value) else { return nil }
        return (UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }
}
