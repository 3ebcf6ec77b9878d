/// PostgreSQL behind the storage seam (`Database.swift`): a ``DatabaseConnection`` over a
/// ``PostgresConnection`` and its ``DatabaseStatement``s.
///
/// Statements are the backend's ``StoreSQL`` (`PostgresSQL.swift`), written with `$1, $2, ...`
/// placeholders; SQL given with SQLite's `?` placeholders has them numbered in order. Values
/// travel as text: integers as decimal, blobs as `bytea` hex (`\x…`), uids as UUID text (the
/// columns are `uuid`). A statement runs on its first `step` and its rows are buffered.
///
/// ``begin()`` takes the store's write lock at once, a transaction-scoped advisory lock: writers
/// on every host commit one after the other, like SQLite's, so the change feed's seqs are handed
/// out in commit order (a reader never skips a change a slower writer commits later) and the ids
/// of a multi-row insert are consecutive.
final class PostgresDatabase: DatabaseConnection {
    let pg: PostgresConnection
    var lastInsertRowID: Int64 = 0
    var changes: Int = 0

    init(uri: String) throws {
        pg = try PostgresConnection(uri: uri)
    }

    var sql: StoreSQL { .postgres }

    func prepare(_ sql: String) throws -> any DatabaseStatement {
        PostgresStatement(sql: PostgresDialect.translated(sql), database: self)
    }

    func execute(_ sql: String) throws {
        try pg.execute(PostgresDialect.translated(sql))
    }

    /// The key of the store's write lock ("NKWR").
    static let writeLock = 1_313_560_402

    func begin() throws {
        try pg.begin()
        do {
            try pg.execute("SELECT pg_advisory_xact_lock(\(Self.writeLock))")
        } catch {
            pg.rollback()
            throw error
        }
    }

    func commit() throws { try pg.commit() }
    func rollback() { pg.rollback() }

    func setUp(_ connection: Connection, readOnly: Bool, durability: Durability) throws {
        try PostgresSchema.migrate(pg, readOnly: readOnly)
    }

    func close() { pg.close() }

    // Storage upkeep: the server's own (autovacuum gives freed space back; its administrator caps
    // the disk), so these do nothing, and a size cap is refused.

    func reclaimSpace() throws -> Int64? { 0 }
    func reclaimSpaceOutsideTransaction() throws -> Int64 { 0 }
    func withBulkWriteSettings<T>(_ body: () throws -> T) throws -> T { try body() }

    func setMaxSize(bytes: Int64) throws -> Int64 {
        throw NotesError(.invalidArgument, "a store on a PostgreSQL server has no size cap of its own; the server's administrator limits its disk", code: "not_sqlite")
    }
}

/// One statement of a ``PostgresDatabase``: its parameters as text, run on the first `step`.
final class PostgresStatement: DatabaseStatement {
    private let sql: String
    private unowned let database: PostgresDatabase
    private var params: [String?] = []
    private var rows: PGResult?
    private var row: Int32 = -1

    init(sql: String, database: PostgresDatabase) {
        self.sql = sql
        self.database = database
    }

    func reset() {
        params.removeAll(keepingCapacity: true)
        rows = nil
        row = -1
    }

    func rewind() {
        rows = nil
        row = -1
    }

    func finalize() { reset() }

    private func set(_ index: Int32, _ value: String?) {
        let i = Int(index) - 1
        guard i >= 0 else { return }
        if params.count <= i { params.append(contentsOf: repeatElement(nil, count: i + 1 - params.count)) }
        params[i] = value
    }

    func bind(_ index: Int32, int64 value: Int64?) throws { set(index, value.map { String($0) }) }
    func bind(_ index: Int32, text value: String?) throws { set(index, value) }
    func bind(_ index: Int32, blob bytes: UnsafeRawBufferPointer) throws { set(index, Self.hex(bytes)) }
    func bind(_ index: Int32, uid high: UInt64, _ low: UInt64) throws { set(index, UID.text(high: high, low: low)) }

    func step() throws -> Bool {
        if rows == nil {
            // No savepoint around a write: a failed statement aborts the PostgreSQL transaction,
            // and the store logic never goes on after one (a uid already there is met by
            // `ON CONFLICT (uid) DO NOTHING`, not by an error): the error rolls the write back.
            let result = try database.pg.result(sql, params)
            database.changes = result.affected
            if result.count > 0, sql.hasPrefix("INSERT") {
                // the backend's inserts end with RETURNING id
                database.lastInsertRowID = Self.integer(result.bytes(result.count - 1, 0)) ?? database.lastInsertRowID
            }
            rows = result
            row = -1
        }
        row += 1
        return row < (rows?.count ?? 0)
    }

    /// The text of a column of the current row in place (valid until the next step or reset).
    private func value(_ column: Int32) -> UnsafeBufferPointer<UInt8>? { rows?.bytes(row, column) }

    func isNull(_ column: Int32) -> Bool { value(column) == nil }

    func int64(_ column: Int32) -> Int64 {
        guard let bytes = value(column) else { return 0 }
        if let n = Self.integer(bytes) { return n }
        if bytes.count == 1 && bytes[0] == UInt8(ascii: "t") { return 1 }
        if bytes.count == 1 && bytes[0] == UInt8(ascii: "f") { return 0 }
        return Double(String(decoding: bytes, as: UTF8.self)).map { Int64($0) } ?? 0
    }

    /// A decimal integer's value (nil for anything else, or one out of Int64's range).
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>?) -> Int64? {
        guard let bytes, !bytes.isEmpty else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        var n: Int64 = 0
        var i = negative ? 1 : 0
        guard i < bytes.count else { return nil }
        while i < bytes.count {
            let digit = bytes[i] &- 48
            guard digit < 10 else { return nil }
            let (times, o1) = n.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            n = next
            i += 1
        }
        return n
    }

    func text(_ column: Int32) -> String { value(column).map { String(decoding: $0, as: UTF8.self) } ?? "" }

    func withUTF8<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard let bytes = value(column) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(bytes)
    }

    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let bytes = Self.unhex(value(column))
        return try bytes.withUnsafeBytes(body)
    }

    func uid(_ column: Int32) -> (high: UInt64, low: UInt64)? {
        value(column).flatMap { UID.halves(String(decoding: $0, as: UTF8.self)) }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` as `bytea`'s hex input, `\x0a1b…`.
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        var out: [UInt8] = [92, 120]  // \x
        out.reserveCapacity(2 + bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `bytea`'s hex output, `\x0a1b…` (empty for anything else).
    static func unhex(_ text: UnsafeBufferPointer<UInt8>?) -> [UInt8] {
        guard let utf8 = text, utf8.count >= 2, utf8[0] == 92, utf8[1] == 120 else { return [] }
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: 0
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((utf8.count - 2) / 2)
        var i = 2
        while i + 1 < utf8.count {
            out.append(nibble(utf8[i]) << 4 | nibble(utf8[i + 1]))
            i += 2
        }
        return out
    }
}
