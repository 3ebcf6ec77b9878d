import CSQLite

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe by itself: it is opened with `SQLITE_OPEN_NOMUTEX` and its statement cache is
/// plain Swift state. This is the only type that calls SQLite's C API; everything above speaks SQL
/// through it.
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
    let db: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// Statements stepped since the last ``finishStatements()``; each may hold a read transaction open.
    private var inUse: [Statement] = []

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
            throw Connection.error(code: rc, message: "cannot open \(NotesError.shown(path)): \(message)")
        }
        db = handle
        sqlite3_extended_result_codes(db, 1)
    }

    /// Finalizes every statement and closes the database.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        sqlite3_close_v2(db)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw Connection.error(code: rc, message: text)
        }
    }

    /// A prepared statement for `sql`, reset and with its bindings cleared, cached for reuse.
    func prepare(_ sql: String) throws -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            if !cached.inUse {
                cached.inUse = true
                inUse.append(cached)
            }
            return cached
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw lastError(rc) }
        let statement = Statement(raw, connection: self)
        statements[sql] = statement
        statement.inUse = true
        inUse.append(statement)
        return statement
    }

    /// Resets every statement used since the last call, so that none keeps a read transaction (and
    /// with it an old snapshot of the file) open between calls. The store calls it after each use.
    func finishStatements() {
        for statement in inUse {
            statement.reset()
            statement.inUse = false
        }
        inUse.removeAll(keepingCapacity: true)
    }

    /// Runs `body` in a write transaction (BEGIN IMMEDIATE), committing on success and rolling back
    /// on any error, so that a failure leaves nothing half-written.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        // BEGIN and COMMIT as cached statements: parsing them on every write costs a small write
        // (one chat message) about a tenth of its time.
        try prepare("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            finishStatements()
            try prepare("COMMIT").run()
            return result
        } catch {
            finishStatements()
            if sqlite3_get_autocommit(db) == 0 { _ = try? execute("ROLLBACK") }
            throw error
        }
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

    func lastError(_ rc: Int32) -> NotesError {
        Connection.error(code: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)), fallback: rc)
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

/// A valid pointer to an empty C string (the literal lives in the binary's read-only data), for
/// binding empty text and blobs, whose buffers may have no base address.
private var emptyCString: UnsafePointer<CChar> {
    UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}

/// A prepared statement. Bind parameters are 1-based, columns 0-based, as in SQLite.
final class Statement {
    private var raw: OpaquePointer?
    private unowned let connection: Connection
    /// Listed in the connection's statements to reset after the current call.
    var inUse = false
    /// A failed bind since the last reset, reported by the next `step`.
    private var bindFailure: Int32 = SQLITE_OK

    init(_ raw: OpaquePointer, connection: Connection) {
        self.raw = raw
        self.connection = connection
    }

    func finalize() {
        sqlite3_finalize(raw)
        raw = nil
    }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
        bindFailure = SQLITE_OK
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int64?) -> Statement {
        if let value { sqlite3_bind_int64(raw, index, value) } else { sqlite3_bind_null(raw, index) }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, _ value: String?) -> Statement {
        guard var value else {
            sqlite3_bind_null(raw, index)
            return self
        }
        value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                // An empty buffer may have no address; SQLite needs a non-NULL pointer for "".
                // The 64-bit call takes any length (no Int32 conversion to trap on); SQLite refuses
                // text over its limit with SQLITE_TOOBIG, which `step` then reports.
                let rc = sqlite3_bind_text64(raw, index, chars.baseAddress ?? emptyCString, UInt64(chars.count),
                                             csqlite_transient(), UInt8(SQLITE_UTF8))
                if rc != SQLITE_OK { bindFailure = rc }
            }
        }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, blob: [UInt8]) -> Statement {
        blob.withUnsafeBytes { bytes in
            // An empty blob still needs a non-NULL pointer, or SQLite stores NULL.
            _ = sqlite3_bind_blob(raw, index, bytes.baseAddress ?? UnsafeRawPointer(emptyCString), Int32(bytes.count), csqlite_transient())
        }
        return self
    }

    // MARK: - Uids
    //
    // Every uid column (articles, drafts, conversations, messages, the change feed's deletes) stores
    // the UUID as 16 bytes (a BLOB), not its 36 characters of text; the API keeps the text. Every
    // SQL site that writes or reads a uid goes through these two.

    /// Binds a UUID string (`0b6f6c1e-…`) as its 16 bytes. A string that is not a UUID fails the
    /// next `step` with `.validation` (callers normalize uids first, so only a bug gets there).
    @discardableResult
    func bind(_ index: Int32, uid: String) -> Statement {
        guard let (high, low) = UID.halves(uid) else {
            bindFailure = SQLITE_MISMATCH
            return self
        }
        var bytes = (high.bigEndian, low.bigEndian)
        withUnsafeBytes(of: &bytes) { raw in
            _ = sqlite3_bind_blob(self.raw, index, raw.baseAddress, 16, csqlite_transient())
        }
        return self
    }

    /// The UUID string of a uid column (16 bytes). A column holding anything else (only a damaged
    /// or foreign-written file has one) is read as its text, so a read never fails on it.
    func uid(_ column: Int32) -> String {
        guard sqlite3_column_type(raw, column) == SQLITE_BLOB, sqlite3_column_bytes(raw, column) == 16,
              let p = sqlite3_column_blob(raw, column) else { return text(column) }
        let high = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))
        let low = UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        return UID.text(high: high, low: low)
    }

    /// The 16 bytes of a uid column, or nil when it holds anything else.
    private func uidBytes(_ column: Int32) -> UnsafeRawPointer? {
        guard sqlite3_column_type(raw, column) == SQLITE_BLOB, sqlite3_column_bytes(raw, column) == 16 else { return nil }
        return sqlite3_column_blob(raw, column)
    }

    /// A uid column as the UUID text the API shows (`0b6f6c1e-…`, 36 bytes), formatted in place
    /// without a `String`; a column that is not 16 bytes (a damaged file) as its stored text.
    func withUIDText<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        guard let bytes = uidBytes(column) else { return try withUTF8(column) { try body(UnsafeRawBufferPointer($0)) } }
        var text: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)  // 36 bytes
        return try withUnsafeMutableBytes(of: &text) { out in
            var at = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[at] = 45; at += 1 }  // "-"
                let byte = bytes.load(fromByteOffset: i, as: UInt8.self)
                out[at] = hexDigit(byte >> 4)
                out[at + 1] = hexDigit(byte & 0x0F)
                at += 2
            }
            return try body(UnsafeRawBufferPointer(rebasing: out[0..<36]))
        }
    }

    func optionalUID(_ column: Int32) -> String? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : uid(column)
    }

    /// Advances to the next row: true while there is one.
    func step() throws -> Bool {
        if bindFailure != SQLITE_OK {
            let rc = bindFailure
            bindFailure = SQLITE_OK
            if rc == SQLITE_TOOBIG { throw NotesError(.validation, "a text is too long to store (SQLite takes at most 1 000 000 000 bytes)") }
            if rc == SQLITE_MISMATCH { throw NotesError.validation("uid", "a uid must be a UUID like 0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e") }
            throw Connection.error(code: rc, message: "cannot pass a value to SQLite")
        }
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = connection.lastError(rc)
        sqlite3_reset(raw)
        throw error
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, column)
    }

    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(raw, column) else { return "" }
        let n = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// Calls `body` with the column's UTF-8 bytes in place (valid until the next step or reset).
    func withUTF8<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let p = sqlite3_column_text(raw, column)
        let n = Int(sqlite3_column_bytes(raw, column))
        return try body(UnsafeBufferPointer(start: p, count: p == nil ? 0 : n))
    }

    /// Calls `body` with the column's bytes in place (valid until the next step or reset).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let p = sqlite3_column_blob(raw, column)
        let n = Int(sqlite3_column_bytes(raw, column))
        return try body(UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : n))
    }

    func optionalBlob(_ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(raw, column) != SQLITE_NULL else { return nil }
        return withBlob(column) { Array($0) }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : text(column)
    }
}

/// The lower-case hex digit of `nibble` (0...15), as ASCII (arithmetic, not a global table: a
/// table is a lazily made global, checked on every use of a million-row scan).
@inline(__always)
private func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 48 + nibble : 87 + nibble }
