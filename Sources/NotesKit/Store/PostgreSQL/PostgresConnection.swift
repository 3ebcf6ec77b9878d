#if canImport(Glibc)
import Glibc
#endif

/// One value bound to a statement parameter, sent as text (PostgreSQL parses it by the
/// parameter's type: `$1::bigint`, `$2::uuid`, ...). nil is SQL NULL.
typealias PGValue = String?

/// The rows of one result, copied out of libpq: `rows[r][c]` is the text of a value, nil for NULL.
struct PGRows {
    var rows: [[String?]]
    /// How many rows the command changed (`UPDATE 3` → 3), 0 for a query.
    var affected: Int

    var isEmpty: Bool { rows.isEmpty }
    var count: Int { rows.count }
    func text(_ row: Int, _ column: Int) -> String? { rows[row][column] }
    func int64(_ row: Int, _ column: Int) -> Int64? { rows[row][column].flatMap { Int64($0) } }
    func bool(_ row: Int, _ column: Int) -> Bool? { rows[row][column].map { $0 == "t" } }
}

/// One connection to a PostgreSQL server, through libpq, with prepared statements.
///
/// Not thread-safe: its store serializes every use. Parameters and results travel as text. A
/// statement is prepared the first time its SQL is run and reused after (prepared statements live
/// on the server connection: a reconnection prepares them again).
///
/// When the connection breaks (the server restarted, the network dropped), ``read(_:)`` reconnects
/// and runs its body once more; a write (``transaction(_:)``) is not retried: it fails with
/// `.unreachable` and, since PostgreSQL rolls back a transaction whose connection is gone, left
/// nothing written — unless the break came during COMMIT, which the message says (its outcome is
/// unknown). The next call reconnects.
final class PostgresConnection {
    let lib: LibPQ
    private var conn: OpaquePointer?
    /// The URI it was opened with (a second connection to the same store: the feed's listener).
    let uri: String
    private var prepared: [String: String] = [:]
    /// Between ``begin()`` and ``commit()`` / ``rollback()``: a write.
    private var inTransaction = false
    /// A transaction is open on the server: a write, or a read snapshot (an export's, begun by
    /// ``execute(_:)`` with `BEGIN …`). A broken connection is then not replaced behind its back:
    /// what ran in the transaction is gone, and a statement retried outside it would mix states.
    private var serverTransaction = false

    /// Connects to the server named by `uri` (a libpq connection URI, `postgresql://` or
    /// `postgres://`, or a `key=value` connection string).
    init(uri: String) throws {
        lib = try LibPQ.loaded()
        self.uri = uri
        conn = try Self.connect(lib, uri)
    }

    private static func connect(_ lib: LibPQ, _ uri: String) throws -> OpaquePointer {
        // Later keywords override earlier ones: the URI may set its own connect_timeout; the
        // encoding is always UTF-8 (the library's strings are).
        let keywords = ["connect_timeout", "application_name", "dbname", "client_encoding"]
        let values = ["10", "noteskit", uri, "UTF8"]
        let conn: OpaquePointer? = withArrayOfCStrings(keywords) { k in
            withArrayOfCStrings(values) { v in lib.connectdbParams(k, v, 1) }
        }
        guard let conn else { throw NotesError(.storage, "out of memory connecting to PostgreSQL") }
        if lib.status(conn) != LibPQ.connectionOK {
            let message = lib.errorMessage(conn).map { String(cString: $0) } ?? "unknown error"
            let needsPassword = lib.connectionNeedsPassword(conn) == 1
            lib.finish(conn)
            throw connectError(message, needsPassword: needsPassword, uri: uri)
        }
        _ = lib.setNoticeProcessor(conn, { _, _ in }, nil)  // NOTICEs are not the user's business
        // Every statement names the store's tables unqualified: they live in its schema.
        let result = lib.exec(conn, "SET search_path = \(PostgresSchema.schema), pg_catalog")
        lib.clear(result)
        return conn
    }

    /// The error for a failed connection, by what the server (or libpq) said.
    static func connectError(_ raw: String, needsPassword: Bool, uri: String) -> NotesError {
        let message = raw.split(separator: "\n").map { $0.trimmingPrefix("FATAL:").trimmingPrefix(" ") }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        let shown = redacted(uri)
        if needsPassword || message.contains("password authentication failed") || message.contains("no password supplied") {
            return NotesError(.authentication, "PostgreSQL refused the password for \(shown) (\(message)); check the user name and password in the URI", code: "wrong_password")
        }
        if message.contains("pg_hba.conf") || (message.contains("role \"") && message.contains("does not exist"))
            || message.contains("authentication failed") || message.contains("permission denied for database") {
            return NotesError(.authentication, "PostgreSQL does not let this role connect to \(shown) (\(message))", code: "connection_not_allowed")
        }
        if message.contains("database \"") && message.contains("does not exist") {
            return NotesError(.storage, "\(shown) names a database that does not exist (\(message)); create it first (createdb) or fix the URI", code: "database_missing")
        }
        if message.contains("invalid URI") || message.contains("invalid connection option") || message.contains("missing \"=\"")
            || message.contains("invalid integer value") || message.contains("invalid percent-encoded") {
            return NotesError(.invalidArgument, "not a usable PostgreSQL connection URI: \(shown) (\(message))", code: "uri_invalid")
        }
        return NotesError(.unreachable, "cannot reach the PostgreSQL server of \(shown) (\(message)); is it running, and are host and port right?", code: "server_unreachable")
    }

    /// The URI with its password replaced by `***`, for messages.
    static func redacted(_ uri: String) -> String {
        var text = uri
        if let scheme = text.firstRange(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@") {
            let credentials = text[scheme.upperBound..<at]
            if let colon = credentials.firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        if let range = text.firstRange(of: "password=") {
            let end = text[range.upperBound...].firstIndex(where: { $0 == "&" || $0 == " " }) ?? text.endIndex
            text.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return NotesError.shown(text)
    }

    func close() {
        if let conn { lib.finish(conn) }
        conn = nil
        prepared.removeAll()
    }

    deinit { close() }

    /// True when the connection is gone (the server went away); the next call reconnects.
    var isBroken: Bool { conn.map { lib.status($0) != LibPQ.connectionOK } ?? true }

    /// Connects again (after a broken connection); prepared statements are prepared anew.
    func reconnect() throws {
        close()
        conn = try Self.connect(lib, uri)
    }

    private func live() throws -> OpaquePointer {
        if let conn, lib.status(conn) == LibPQ.connectionOK { return conn }
        if serverTransaction { throw lost(during: inTransaction ? "a write" : "a read") }
        try reconnect()
        guard let conn else { throw NotesError(.unreachable, "cannot reach the PostgreSQL server") }
        return conn
    }

    var serverVersion: Int { conn.map { Int(lib.serverVersion($0)) } ?? 0 }

    // MARK: - Running SQL

    /// Runs one or more statements without parameters (migrations, `BEGIN`, ...). A `BEGIN` whose
    /// connection turns out broken (the server restarted since the last call) begins on a new one:
    /// nothing of its transaction had run.
    func execute(_ sql: String) throws {
        let retriable = isIdle && sql.hasPrefix("BEGIN")
        do {
            try executeOnConnection(sql)
        } catch let error as NotesError where error.code == "connection_lost" && retriable {
            try reconnect()
            try executeOnConnection(sql)
        }
    }

    private func executeOnConnection(_ sql: String) throws {
        // A transaction ends with its COMMIT or ROLLBACK, also when that fails (the server rolls
        // back a transaction whose connection is gone).
        if sql == "COMMIT" || sql == "ROLLBACK" { serverTransaction = false }
        let conn = try live()
        let result = lib.exec(conn, sql)
        defer { lib.clear(result) }
        try check(result, sql: sql)
        if sql.hasPrefix("BEGIN") { serverTransaction = true }
    }

    /// True outside any transaction on the server (nothing would be lost by reconnecting).
    private var isIdle: Bool {
        !serverTransaction
    }

    /// Runs one statement with parameters `$1, $2, ...` as a prepared statement; its rows.
    ///
    /// Outside a transaction, a statement whose connection turns out broken (the server restarted)
    /// is run once more on a new connection; inside one (a write, or an export's snapshot) it fails
    /// with `.unreachable`: a retry would run outside the transaction.
    @discardableResult
    func query(_ sql: String, _ params: [PGValue] = []) throws -> PGRows {
        try result(sql, params).copied()
    }

    /// Like ``query(_:_:)``, but the rows stay in libpq's memory and are read in place.
    func result(_ sql: String, _ params: [PGValue] = []) throws -> PGResult {
        let retriable = isIdle
        do {
            return PGResult(lib, try resultOnConnection(sql, params))
        } catch let error as NotesError where error.code == "connection_lost" && retriable {
            try reconnect()
            return PGResult(lib, try resultOnConnection(sql, params))
        }
    }

    /// The result of running `sql` as a prepared statement (prepared on first use), checked; the
    /// caller clears it.
    private func resultOnConnection(_ sql: String, _ params: [PGValue]) throws -> OpaquePointer? {
        let conn = try live()
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "nk\(prepared.count + 1)"
            let result = lib.prepare(conn, name, sql, Int32(params.count), nil)
            defer { lib.clear(result) }
            try check(result, sql: sql)
            prepared[sql] = name
        }
        let result: OpaquePointer? = withArrayOfOptionalCStrings(params) { values in
            lib.execPrepared(conn, name, Int32(params.count), values, nil, nil, 0)
        }
        do {
            try check(result, sql: sql)
        } catch {
            lib.clear(result)
            throw error
        }
        return result
    }

    /// Runs one statement with parameters once, unprepared (statements whose text changes).
    @discardableResult
    func queryOnce(_ sql: String, _ params: [PGValue] = []) throws -> PGRows {
        let conn = try live()
        let result: OpaquePointer? = withArrayOfOptionalCStrings(params) { values in
            lib.execParams(conn, sql, Int32(params.count), nil, values, nil, nil, 0)
        }
        let rows = PGResult(lib, result)
        try check(result, sql: sql)
        return rows.copied()
    }

    /// Throws the error a failed result stands for.
    private func check(_ result: OpaquePointer?, sql: String) throws {
        let status = result.map { lib.resultStatus($0) } ?? -1
        if status == LibPQ.commandOK || status == LibPQ.tuplesOK || status == 0 { return }
        if isBroken || result == nil {
            throw lost(during: inTransaction ? "a write" : "a read")
        }
        let state = lib.resultErrorField(result, LibPQ.diagSQLState).map { String(cString: $0) } ?? ""
        let message = (lib.resultErrorField(result, Int32(UInt8(ascii: "M"))) ?? lib.resultErrorMessage(result))
            .map { String(cString: $0) } ?? "unknown error"
        throw Self.error(sqlState: state, message: message)
    }

    /// The error for a failed statement, by its SQLSTATE.
    static func error(sqlState state: String, message: String) -> NotesError {
        let said = "PostgreSQL: \(message) (SQLSTATE \(state))"
        switch state {
        case "40001", "40P01", "55P03":
            return NotesError(.busy, "\(said); the write was rolled back: try it again", code: "write_conflict")
        case "23505":
            return NotesError(.conflict, "\(said): a record with that key exists already", code: "duplicate_key")
        case "53100":
            return NotesError(.storageFull, "\(said); the server's disk is full: nothing was written", code: "disk_full")
        case "42501" where message.contains("row-level security"):
            return NotesError(.storage, "\(said): a role writes only rows of its own", code: "row_security")
        case "42501":
            return NotesError(.storage, "\(said); this role lacks the grant (an administrator gives it with store.create_user)", code: "permission_denied")
        case "25006":
            return NotesError(.readOnly, "\(said); the server or session is read-only", code: "read_only")
        case "57P01", "57P02", "57P03":
            return NotesError(.unreachable, "\(said): the server is shutting down or starting", code: "connection_lost")
        default:
            if state.hasPrefix("08") {
                return NotesError(.unreachable, said, code: "connection_lost")
            }
            return NotesError(.storage, said, code: "postgres_error")
        }
    }

    private func lost(during what: String) -> NotesError {
        let detail = conn.flatMap { lib.errorMessage($0) }.map { String(cString: $0) }?
            .split(separator: "\n").first.map(String.init) ?? "the connection broke"
        return NotesError(.unreachable, "the connection to the PostgreSQL server broke during \(what) (\(detail)); nothing of it was written, and the next call reconnects", code: "connection_lost")
    }

    // MARK: - Transactions

    /// Starts a transaction. A connection found broken (also by the `BEGIN` itself) is replaced
    /// first: nothing of the transaction has run yet; once it has begun, a break fails every
    /// statement with `.unreachable` and PostgreSQL rolls the transaction back.
    func begin() throws {
        try execute("BEGIN")
        inTransaction = true
    }

    /// Commits. A connection already broken lost the transaction (`.unreachable`, nothing
    /// written); one that breaks during the COMMIT leaves its outcome unknown (`commit_unknown`).
    func commit() throws {
        guard let conn, lib.status(conn) == LibPQ.connectionOK else {
            defer { inTransaction = false; serverTransaction = false }
            throw lost(during: "a write")
        }
        let result = lib.exec(conn, "COMMIT")
        defer { lib.clear(result) }
        inTransaction = false
        serverTransaction = false
        let status = result.map { lib.resultStatus($0) } ?? -1
        if status != LibPQ.commandOK && (result == nil || lib.status(conn) != LibPQ.connectionOK) {
            throw NotesError(.unreachable, "the connection to the PostgreSQL server broke while committing a write: it may or may not have been written; read it back once reconnected", code: "commit_unknown")
        }
        try check(result, sql: "COMMIT")
    }

    /// True between ``begin()`` and ``commit()`` / ``rollback()``.
    var isInTransaction: Bool { inTransaction }

    /// Rolls back the open transaction, if any; never fails.
    func rollback() {
        inTransaction = false
        serverTransaction = false
        if let conn, lib.status(conn) == LibPQ.connectionOK, lib.transactionStatus(conn) != LibPQ.transactionIdle {
            _ = try? execute("ROLLBACK")
        }
    }

    /// Runs `body` in one transaction, committing on success and rolling back on any error: a
    /// failure leaves nothing written. Not retried when the connection breaks (`.unreachable`).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }

    // MARK: - Quoting (for statements that take no parameters: CREATE ROLE, GRANT)

    /// `name` as a quoted SQL identifier.
    func identifier(_ name: String) throws -> String {
        try libpqString({ lib.escapeIdentifier($0, name, name.utf8.count) },
                        else: { _ in NotesError(.validation, "\(NotesError.shown(name)) cannot be a PostgreSQL name", field: "name") })
    }

    /// `text` as a quoted SQL string literal.
    func literal(_ text: String) throws -> String {
        try libpqString({ lib.escapeLiteral($0, text, text.utf8.count) },
                        else: { _ in NotesError(.validation, "the text cannot be quoted for PostgreSQL", field: "text") })
    }

    /// `password` hashed the way the server stores it (SCRAM-SHA-256 by default), so the clear
    /// text never reaches the server's logs.
    func encryptedPassword(_ password: String, user: String) throws -> String {
        try libpqString({ lib.encryptPasswordConn($0, password, user, nil) }, else: { conn in
            NotesError(.storage, "libpq could not hash the password: \(lib.errorMessage(conn).map { String(cString: $0) } ?? "")")
        })
    }

    /// The string libpq's `make` returns on the live connection, copied and freed; `failure`'s
    /// error when it returns none.
    private func libpqString(_ make: (LibPQ.Conn) -> UnsafeMutablePointer<CChar>?,
                             else failure: (LibPQ.Conn) -> NotesError) throws -> String {
        let conn = try live()
        guard let made = make(conn) else { throw failure(conn) }
        defer { lib.freemem(made) }
        return String(cString: made)
    }

    // MARK: - Notifications

    /// The socket of the connection, to wait on for notifications (-1 when closed).
    var socket: Int32 { conn.map { lib.socket($0) } ?? -1 }

    /// The notifications that arrived since the last call, as (channel, payload): reads what is
    /// waiting on the socket, without blocking. A broken connection is `.unreachable` (it is not
    /// reconnected here: a new connection would not be listening).
    func notifications() throws -> [(channel: String, payload: String)] {
        guard let conn, lib.status(conn) == LibPQ.connectionOK else { throw lost(during: "waiting for notifications") }
        if lib.consumeInput(conn) == 0 { throw lost(during: "waiting for notifications") }
        var out: [(channel: String, payload: String)] = []
        while let raw = lib.notifies(conn) {
            // PGnotify (libpq-fe.h): char *relname; int be_pid; char *extra; ...
            let fields = raw.assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)
            let channel = fields[0].map { String(cString: $0) } ?? ""
            let payload = fields[2].map { String(cString: $0) } ?? ""
            lib.freemem(raw)
            out.append((channel, payload))
        }
        return out
    }
}

/// The rows of one result, read in place from libpq's memory (valid until the result is released):
/// no copy of a value the caller does not read.
final class PGResult {
    private let lib: LibPQ
    private let handle: OpaquePointer?
    /// Rows and columns.
    let count: Int32
    let columns: Int32
    /// How many rows the command changed (`UPDATE 3` → 3), 0 for a query.
    let affected: Int

    init(_ lib: LibPQ, _ handle: OpaquePointer?) {
        self.lib = lib
        self.handle = handle
        count = lib.ntuples(handle)
        columns = lib.nfields(handle)
        affected = lib.cmdTuples(handle).flatMap { Int(String(cString: $0)) } ?? 0
    }

    deinit { lib.clear(handle) }

    /// Every value copied out as text.
    func copied() -> PGRows {
        PGRows(rows: (0..<count).map { r in (0..<columns).map { c in bytes(r, c).map { String(decoding: $0, as: UTF8.self) } } },
               affected: affected)
    }

    /// The text of the value at (row, column) in place, nil for NULL or outside the result.
    func bytes(_ row: Int32, _ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard row >= 0, row < count, column >= 0, column < columns, lib.getisnull(handle, row, column) == 0,
              let value = lib.getvalue(handle, row, column) else { return nil }
        let length = Int(lib.getlength(handle, row, column))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
    }
}

/// Calls `body` with a NULL-terminated array of C strings.
func withArrayOfCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    withArrayOfOptionalCStrings(strings.map { Optional($0) }, body)
}

/// Calls `body` with an array of C strings (NULL for nil), NULL-terminated.
func withArrayOfOptionalCStrings<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
    defer { for copy in copies { free(copy) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
