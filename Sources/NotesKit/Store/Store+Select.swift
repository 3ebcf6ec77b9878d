import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// `select`: every record of a kind (optionally filtered by time, conversation, sender) read as
// column batches, in (key, tie-breaker) order, a chunk at a time. A reader with two threads splits
// the rows in two halves by position and reads the second half on its own read-only connection
// while the caller reads the first.

/// The records a `select` reads: a table, its filter, its order and how a row becomes columns.
public final class Selection: Sendable {
    let store: Store
    let table: String
    /// The output columns' SQL, then the sort key and the tie-breaker are selected after them.
    let columnsSQL: String
    /// What the reads select: the output columns, then the sort key and the tie-breaker unless
    /// they are output columns already (each column fewer is a tenth less of a scan's work).
    let selectedSQL: String
    /// Where the sort key and the tie-breaker are in a selected row.
    let keyColumn: Int32, tieColumn: Int32
    let key: String
    let tie: String
    let conditions: [String]
    let binds: [Int64]
    public let ascending: Bool
    /// Checked when reading starts (e.g. the conversation exists). A selection holding rows passes
    /// it (a message's conversation exists), so a count checks it only when it finds none.
    let precheck: (@Sendable (Connection) throws -> Void)?
    /// How many rows the selection holds, read from a count the writes keep (one conversation's
    /// messages: its `message_count`) instead of walking them; nil when none is kept.
    let storedCount: (@Sendable (Connection) throws -> Int64)?
    let makeBatch: @Sendable () -> ColumnBatch
    /// What appends the rows to a batch.
    let appender: @Sendable (ColumnBatch) -> any RowAppender
    /// True when the rows may be read in rowid order (the tie-breaker is the rowid and no
    /// condition narrows the rows by an index): worth trying first, checked as read.
    let rowidOrderWorthTrying: Bool
    /// False when counting the rows costs what reading them does (a grouped selection): then the
    /// rows are read on one thread whatever the reader asks.
    let parallelWorthTrying: Bool

    init(store: Store, table: String, columns: String, key: String, tie: String, conditions: [String], binds: [Int64],
         ascending: Bool, rowidOrderWorthTrying: Bool = false, parallelWorthTrying: Bool = true, precheck: (@Sendable (Connection) throws -> Void)? = nil,
         storedCount: (@Sendable (Connection) throws -> Int64)? = nil,
         makeBatch: @escaping @Sendable () -> ColumnBatch, appender: @escaping @Sendable (ColumnBatch) -> any RowAppender) {
        self.store = store
        self.table = table
        self.columnsSQL = columns
        var names = Selection.expressions(columns)
        for extra in [key, tie] where !names.contains(extra) { names.append(extra) }
        self.selectedSQL = names.joined(separator: ", ")
        self.keyColumn = Int32(names.firstIndex(of: key)!)  // (both are in `names`: just appended when missing)
        self.tieColumn = Int32(names.firstIndex(of: tie)!)
        self.key = key
        self.tie = tie
        self.conditions = conditions
        self.binds = binds
        self.ascending = ascending
        self.rowidOrderWorthTrying = rowidOrderWorthTrying
        self.parallelWorthTrying = parallelWorthTrying
        self.precheck = precheck
        self.storedCount = storedCount
        self.makeBatch = makeBatch
        self.appender = appender
    }

    /// The comma-separated expressions of a select list (commas inside parentheses are not separators).
    static func expressions(_ list: String) -> [String] {
        var out: [String] = [], current = "", depth = 0
        for c in list {
            if c == "," && depth == 0 {
                out.append(current)
                current = ""
                continue
            }
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1 }
            if !(current.isEmpty && c == " ") { current.append(c) }
        }
        out.append(current)
        return out
    }

    /// The columns of every batch (names, kinds, nullability), without reading anything.
    public var schema: [Column] { makeBatch().columns }

    /// The most rows in one batch.
    public static let batchRows = 65_536
    /// A batch is closed once a text column passes this, so its offsets stay 32-bit (`string`).
    static let batchTextBytes = 1 << 30
    /// Fewer rows than this are read on one thread.
    static let parallelRows = 20_000

    private func whereSQL(_ extra: [String]) -> String {
        let all = conditions + extra
        return all.isEmpty ? "" : " WHERE " + all.joined(separator: " AND ")
    }

    private func bind(_ stmt: Statement) -> Int32 {
        var i: Int32 = 1
        for value in binds {
            stmt.bind(i, value)
            i += 1
        }
        return i
    }

    /// How many records the selection holds. O(n) over the index; where the writes keep the count,
    /// O(log n) for all the messages of one conversation, O(conversations) for all messages.
    public func count() throws -> Int {
        try store.read { db in
            let n = try countRows(db)
            if n == 0 { try precheck?(db) }
            return Int(n)
        }
    }

    func countRows(_ db: Connection) throws -> Int64 {
        if let storedCount { return try storedCount(db) }
        let stmt = try db.prepare("SELECT count(*) FROM \(table)\(whereSQL([]))")
        _ = bind(stmt)
        return try stmt.step() ? stmt.int64(0) : 0
    }

    /// A reader of the batches, from the start. `threads` 2 reads both halves at once (file stores
    /// with at least ``parallelRows`` rows; the second half is held in memory until reached).
    public func reader(threads: Int = 1) throws -> SelectionReader {
        try store.read { db in try precheck?(db) }
        return SelectionReader(self, threads: threads)
    }

    // MARK: - Chunks

    typealias Position = (key: Int64, tie: Int64)

    /// The selection's rows in its order, the sort key and tie-breaker selected after the columns.
    var walk: Keyset {
        Keyset(select: "SELECT \(selectedSQL) FROM \(table)", key: key, id: tie, filters: conditions, binds: binds,
               ascending: ascending)
    }

    /// Reads up to `rows` rows after `position` (from the start when nil) and not past `end`, into
    /// a new batch; returns it with the last position read (nil when none was).
    func chunk(_ db: Connection, after position: Position?, through end: Position?,
               rows: Int = Selection.batchRows) throws -> (ColumnBatch, Position?) {
        let batch = makeBatch()
        let appender = self.appender(batch)
        var last = position
        var limit = rows
        var finished = false

        func run(_ stmt: Statement) throws {
            while !finished, batch.count < limit, try stmt.step() {
                let here = (stmt.int64(keyColumn), stmt.int64(tieColumn))
                if let end, ascending ? (here.0, here.1) > (end.key, end.tie) : (here.0, here.1) < (end.key, end.tie) {
                    finished = true
                    return
                }
                appender.append(stmt)
                batch.endRow()
                last = here
                if batch.count & 63 == 0, batch.largestText > Selection.batchTextBytes { limit = batch.count }
            }
        }

        for stmt in try walk.statements(db, after: position.map { .init(key: $0.key, id: $0.tie) }) {
            defer { stmt.reset() }
            try run(stmt)
            if finished || batch.count >= limit { break }
        }
        return (batch, batch.count == 0 ? nil : last)
    }

    /// What a rowid-order read of a range found: its batches and its first and last keys.
    struct RowidRun {
        var batches: [ColumnBatch] = []
        var first: Int64?
        var last: Int64?
    }

    /// Reads the rows with rowids in `(after, through]` in rowid order (descending when the
    /// selection is), a batch at a time; nil as soon as a key goes against the selection's order
    /// (rowid order is then not the selection's order) or `stopped` is set.
    func rowidRun(_ db: Connection, after low: Int64, through high: Int64, stopped: StopFlag) throws -> RowidRun? {
        let order = ascending ? "ASC" : "DESC"
        let stmt = try db.prepare("SELECT \(selectedSQL) FROM \(table)" + whereSQL(["\(tie) > ?", "\(tie) <= ?"])
                                  + " ORDER BY \(tie) \(order)")
        let i = bind(stmt)
        stmt.bind(i, low).bind(i + 1, high)
        var run = RowidRun()
        var batch = makeBatch()
        var appender = self.appender(batch)
        while try stmt.step() {
            let k = stmt.int64(keyColumn)
            if let last = run.last, ascending ? k < last : k > last { return nil }
            if run.first == nil { run.first = k }
            run.last = k
            appender.append(stmt)
            batch.endRow()
            if batch.count == Selection.batchRows || (batch.count & 63 == 0 && batch.largestText > Selection.batchTextBytes) {
                run.batches.append(batch)
                let full = batch
                batch = makeBatch()
                batch.reserve(rows: full.count, like: full)
                appender = self.appender(batch)
                if stopped.isSet { return nil }
            }
        }
        if batch.count > 0 { run.batches.append(batch) }
        return run
    }

    /// The smallest and largest rowid of the table (nil when it is empty). O(log n): each in its
    /// own subquery, as SQLite reads a lone min() or max() off the b-tree's edge but scans the
    /// whole table for the two together.
    func rowidSpan(_ db: Connection) throws -> (Int64, Int64)? {
        let stmt = try db.prepare("SELECT (SELECT min(\(tie)) FROM \(table)), (SELECT max(\(tie)) FROM \(table))")
        guard try stmt.step(), let low = stmt.optionalInt64(0), let high = stmt.optionalInt64(1) else { return nil }
        return (low, high)
    }

    /// The position of the row at `offset` in the selection's order (nil past the end).
    func position(_ db: Connection, at offset: Int64) throws -> Position? {
        let order = ascending ? "ASC" : "DESC"
        let stmt = try db.prepare("SELECT \(key), \(tie) FROM \(table)\(whereSQL([])) ORDER BY \(key) \(order), \(tie) \(order) LIMIT 1 OFFSET ?")
        stmt.bind(bind(stmt), offset)
        return try stmt.step() ? (stmt.int64(0), stmt.int64(1)) : nil
    }
}

/// Appends rows to one batch's columns, a row per call: what a scan calls for each row. A kind's
/// appender is a struct holding its columns: made once per batch, it reads them without a retain
/// (taken from the batch's array for each row, they cost a retain and a release each, a sixth of
/// a million-row scan); made for one row, it costs what that did, and no allocation.
protocol RowAppender {
    /// Appends the row `stmt` is on (the batch's `endRow()` is the caller's).
    func append(_ stmt: Statement)
}

/// The appender of a kind read a row at a time by a function (read too rarely for its own).
struct RowByRow: RowAppender {
    let batch: ColumnBatch
    let appendRow: (Statement, ColumnBatch) -> Void

    init(_ batch: ColumnBatch, _ appendRow: @escaping (Statement, ColumnBatch) -> Void) {
        self.batch = batch
        self.appendRow = appendRow
    }

    func append(_ stmt: Statement) { appendRow(stmt, batch) }
}

/// Reads a selection's batches in order, each call one batch, until nil.
///
/// One consumer (not `Sendable`); each chunk of the first half is one read under the store's
/// lock, so other calls on the store run between batches.
public final class SelectionReader {
    let selection: Selection
    let threads: Int
    private var started = false
    private var position: Selection.Position?
    private var end: Selection.Position?
    private var firstHalfDone = false
    private var secondHalf: BackgroundRead?
    private var pending: [ColumnBatch] = []

    init(_ selection: Selection, threads: Int) {
        self.selection = selection
        self.threads = threads
    }

    deinit { cancel() }

    /// The next batch, or nil after the last.
    public func next() throws -> ColumnBatch? {
        if !started {
            started = true
            if let first = try start() { return first }
        }
        if !firstHalfDone, let batch = try readFirstHalf(rows: Selection.batchRows) { return batch }
        if let half = secondHalf {
            secondHalf = nil
            pending = try half.wait()?.batches ?? []
            pending.reverse()
        }
        return pending.popLast()
    }

    /// Stops the second half's thread, if any, and drops what it read.
    public func cancel() {
        secondHalf?.stop()
        secondHalf = nil
        pending = []
    }

    /// Up to `rows` more rows of the first half (all of them on one thread), or nil when it is read.
    private func readFirstHalf(rows: Int) throws -> ColumnBatch? {
        let (batch, last) = try selection.store.read { db in try selection.chunk(db, after: position, through: end, rows: rows) }
        if batch.count < rows && batch.largestText <= Selection.batchTextBytes { firstHalfDone = true }
        guard batch.count > 0 else {
            firstHalfDone = true
            return nil
        }
        position = last
        return batch
    }

    /// Chooses how the rows are read. Two threads by the index: the first ``Selection/parallelRows``
    /// rows are read (and returned) first, so a smaller selection (a week of one chat) is read in
    /// that one query, never counted; a larger one is then counted and split in two halves.
    private func start() throws -> ColumnBatch? {
        let selection = self.selection
        guard threads > 1, selection.parallelWorthTrying, let path = selection.store.path else { return nil }
        if selection.rowidOrderWorthTrying, let batches = try readInRowidOrder(path) {
            pending = batches.reversed()
            firstHalfDone = true
            return nil
        }
        let first = try readFirstHalf(rows: Selection.parallelRows)
        if firstHalfDone { return first }
        let split = try selection.store.read { db -> Selection.Position? in
            let total = try selection.countRows(db)
            guard total / 2 > Int64(Selection.parallelRows) else { return nil }
            return try selection.position(db, at: total / 2 - 1)
        }
        // (Rows deleted in between may put the middle before the rows read: then one thread reads on.)
        guard let split, let read = position,
              selection.ascending ? (split.key, split.tie) > (read.key, read.tie) : (split.key, split.tie) < (read.key, read.tie)
        else { return first }
        end = split
        // The second half, on its own connection and thread: every batch after `split`.
        secondHalf = BackgroundRead(path: path) { db, stopped in
            var run = Selection.RowidRun()
            var position: Selection.Position? = split
            while !stopped.isSet {
                let (batch, last) = try selection.chunk(db, after: position, through: nil)
                db.finishStatements()
                guard batch.count > 0 else { break }
                run.batches.append(batch)
                position = last
            }
            return run
        }
        return first
    }
}

extension SelectionReader {
    /// Reads everything in rowid order, each half of the rowids on its own read-only connection
    /// and thread, when that order is the selection's (checked as read: every key in order, and
    /// the halves meet in order). Nil when it is not, or the selection is small: then nothing was
    /// handed out and the reader goes by the index instead.
    fileprivate func readInRowidOrder(_ path: String) throws -> [ColumnBatch]? {
        let selection = self.selection
        guard let span = try selection.store.read({ db in try selection.rowidSpan(db) }),
              span.1 - span.0 >= Int64(Selection.parallelRows) else { return nil }
        let (low, high) = span
        let middle = low + (high - low) / 2
        // Ascending: (low - 1, middle] then (middle, high]; descending the other way round.
        let (first, second) = selection.ascending ? ((low - 1, middle), (middle, high)) : ((middle, high), (low - 1, middle))
        let other = BackgroundRead(path: path) { db, stopped in
            try selection.rowidRun(db, after: second.0, through: second.1, stopped: stopped)
        }
        let stopped = StopFlag()
        let mine: Selection.RowidRun?
        do {
            let db = try Connection.sqliteReader(path: path)
            defer { db.close() }
            mine = try selection.rowidRun(db, after: first.0, through: first.1, stopped: stopped)
        } catch {
            other.stop()
            throw error
        }
        guard let mine else {
            other.stop()
            return nil
        }
        guard let theirs = try other.wait() else { return nil }
        if let last = mine.last, let next = theirs.first, selection.ascending ? next < last : next > last { return nil }
        return mine.batches + theirs.batches
    }
}

/// A flag one thread sets and another checks between batches.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// A read on its own read-only connection and thread (the far half of a rowid-order read, or the
/// second half of a two-thread read); its result is taken with `wait()`.
///
/// The batches it reads are built on its thread and handed over whole: the read runs inside
/// `state`'s lock (nobody waits on it before the thread is joined), so the compiler sees the result
/// go from the thread into the lock and out to the one caller of `wait()`.
final class BackgroundRead: Sendable {
    let path: String
    let read: @Sendable (Connection, StopFlag) throws -> Selection.RowidRun?
    private let state = Mutex<Outcome>(.none)
    private let stopped = StopFlag()
    private let thread = Mutex<pthread_t?>(nil)

    enum Outcome {
        case none
        case read(Selection.RowidRun?)
        case failed(NotesError)
    }

    init(path: String, read: @escaping @Sendable (Connection, StopFlag) throws -> Selection.RowidRun?) {
        self.path = path
        self.read = read
        if let thread = startThread({ self.run() }) {
            self.thread.withLock { $0 = thread }
        } else {
            run()  // no thread to be had: read it here
        }
    }

    private func run() {
        state.withLock { outcome in
            do {
                let db = try Connection.sqliteReader(path: path)
                defer { db.close() }
                outcome = .read(try read(db, stopped))
            } catch let error as NotesError {
                outcome = .failed(error)
            } catch {
                outcome = .failed(NotesError(.internalError, "reading a selection failed: \(error)"))
            }
        }
    }

    /// Waits for the thread; what it read (nil when it gave up), or its error.
    func wait() throws -> Selection.RowidRun? {
        join()
        let outcome = state.withLock { outcome in
            let taken = outcome
            outcome = .none
            return taken
        }
        switch outcome {
        case .none: return nil
        case .read(let run): return run
        case .failed(let error): throw error
        }
    }

    func stop() {
        stopped.set()
        join()
        state.withLock { $0 = .none }
    }

    private func join() {
        if let thread = thread.withLock({ $0.take() }) { pthread_join(thread, nil) }
    }
}

// MARK: - What each kind selects

extension ArticleStore {
    /// Every article created in `[since, until)` (either bound optional), newest first unless `ascending`.
    public func select(since: Timestamp? = nil, until: Timestamp? = nil, ascending: Bool = false) -> Selection {
        var conditions: [String] = [], binds: [Int64] = []
        if let since { conditions.append("created_at >= ?"); binds.append(since.milliseconds) }
        if let until { conditions.append("created_at < ?"); binds.append(until.milliseconds) }
        // Articles are mostly created in time order: without a time window, a rowid-order scan is tried first.
        return Selection(store: store, table: "articles", columns: Self.columns, key: "created_at", tie: "id",
                         conditions: conditions, binds: binds, ascending: ascending, rowidOrderWorthTrying: conditions.isEmpty,
                         makeBatch: Self.batch, appender: Appender.init)
    }

    /// Article batches kept for the next list page.
    static let pages = BatchPool { batch() }

    /// The columns of article batches, named as the record's fields.
    public static func batch() -> ColumnBatch {
        ColumnBatch([Column("id", .int64), Column("uid", .string, bytesPerRow: UID.textCount), Column("title", .string),
                     Column("content", .string, bytesPerRow: 1024), Column("created_at", .timestamp), Column("updated_at", .timestamp),
                     Column("revision", .int64)])
    }

    /// Appends article rows (``columns``) to a batch of ``batch()``'s columns.
    struct Appender: RowAppender {
        let id, uid, title, content, createdAt, updatedAt, revision: Column

        init(_ batch: ColumnBatch) {
            let c = batch.columns
            (id, uid, title, content, createdAt, updatedAt, revision) = (c[0], c[1], c[2], c[3], c[4], c[5], c[6])
        }

        func append(_ stmt: Statement) {
            id.append(stmt.int64(0))
            stmt.appendUIDText(1, to: uid)
            stmt.withUTF8(2) { title.append(utf8: UnsafeRawBufferPointer($0)) }
            stmt.withUTF8(3) { content.append(utf8: UnsafeRawBufferPointer($0)) }
            createdAt.append(stmt.int64(4))
            updatedAt.append(stmt.int64(5))
            revision.append(stmt.int64(6))
        }
    }
}

extension MessageStore {
    /// Every message (of one conversation, or all) sent in `[since, until)`, by `fromMe` or
    /// anyone, oldest first unless not `ascending`. `.notFound` (when read) for an unknown conversation.
    public func select(conversation: Int64? = nil, since: Timestamp? = nil, until: Timestamp? = nil, fromMe: Bool? = nil,
                       ascending: Bool = true) -> Selection {
        var conditions: [String] = [], binds: [Int64] = []
        if let conversation { conditions.append("conversation_id = ?"); binds.append(conversation) }
        if let since { conditions.append("sent_at >= ?"); binds.append(since.milliseconds) }
        if let until { conditions.append("sent_at < ?"); binds.append(until.milliseconds) }
        if let fromMe { conditions.append("from_me = ?"); binds.append(fromMe ? 1 : 0) }
        var check: (@Sendable (Connection) throws -> Void)?
        if let conversation { check = { db in _ = try ConversationStore.require(db, conversation) } }
        // One whole conversation: its count is kept in its row (`.notFound` when there is none);
        // every message: the sum of those.
        var stored: (@Sendable (Connection) throws -> Int64)?
        if since == nil, until == nil, fromMe == nil {
            if let conversation {
                stored = { db in try ConversationStore.messageCount(db, conversation) }
            } else {
                stored = { db in try Store.scalar(db, db.sql.conversations.messageTotal) }
            }
        }
        // Messages are mostly written in time order: over all conversations, without a time
        // window, a plain rowid-order scan is tried first (and checked as read).
        return Selection(store: store, table: "messages", columns: Self.columns, key: "sent_at", tie: "id",
                         conditions: conditions, binds: binds, ascending: ascending,
                         rowidOrderWorthTrying: conversation == nil && since == nil && until == nil, precheck: check, storedCount: stored,
                         makeBatch: Self.batch, appender: Appender.init)
    }

    /// Message batches kept for the next history page.
    static let pages = BatchPool { batch() }

    /// The columns of message batches, named as the record's fields.
    public static func batch() -> ColumnBatch {
        ColumnBatch([Column("id", .int64), Column("uid", .string, bytesPerRow: UID.textCount), Column("conversation_id", .int64),
                     Column("content", .string), Column("from_me", .bool), Column("sent_at", .timestamp),
                     Column("sender", .string, nullable: true, bytesPerRow: 0)])
    }

    /// Appends message rows (``columns``) to a batch of ``batch()``'s columns.
    struct Appender: RowAppender {
        let id, uid, conversation, content, fromMe, sentAt, sender: Column

        init(_ batch: ColumnBatch) {
            let c = batch.columns
            (id, uid, conversation, content, fromMe, sentAt, sender) = (c[0], c[1], c[2], c[3], c[4], c[5], c[6])
        }

        func append(_ stmt: Statement) {
            id.append(stmt.int64(0))
            stmt.appendUIDText(1, to: uid)
            conversation.append(stmt.int64(2))
            stmt.withUTF8(3) { content.append(utf8: UnsafeRawBufferPointer($0)) }
            fromMe.append(stmt.int64(4) != 0)
            sentAt.append(stmt.int64(5))
            if stmt.isNull(6) { sender.appendNull() } else { stmt.withUTF8(6) { sender.append(utf8: UnsafeRawBufferPointer($0)) } }
        }
    }
}

extension ConversationStore {
    /// Every conversation, most recent activity first (the list's order).
    public func select() -> Selection {
        Selection(store: store, table: "conversations", columns: Self.columns, key: "last_activity_at", tie: "activity_seq",
                  conditions: [], binds: [], ascending: false, makeBatch: Self.batch, appender: { RowByRow($0, Self.appendRow) })
    }

    /// The columns of conversation batches, named as the record's fields.
    public static func batch() -> ColumnBatch {
        ColumnBatch([Column("id", .int64), Column("uid", .string, bytesPerRow: UID.textCount), Column("title", .string),
                     Column("created_at", .timestamp), Column("last_activity_at", .timestamp)])
    }

    static func appendRow(_ stmt: Statement, _ batch: ColumnBatch) {
        let c = batch.columns
        c[0].append(stmt.int64(0))
        stmt.appendUIDText(1, to: c[1])
        stmt.withUTF8(2) { c[2].append(utf8: UnsafeRawBufferPointer($0)) }
        c[3].append(stmt.int64(3))
        c[4].append(stmt.int64(4))
    }
}

// MARK: - Pages as batches

extension Store {
    /// The page builder of pages read straight into columns (no `String` per field): up to
    /// `limit` rows of `walk` after `position`, and a cursor of kind `kind` at the last of them
    /// when one more row exists (as ``page(_:limit:kind:position:)`` does for records).
    /// `appender` appends to `batch`'s columns (made once a page, not once a row).
    func pageBatch(_ db: Connection, _ walk: Keyset, after position: CursorCodec.Position?, limit: Int, kind: String,
                   batch: ColumnBatch, keyColumn: Int32, idColumn: Int32, appender: some RowAppender) throws -> String? {
        var last: CursorCodec.Position?
        batch.reservePage(rows: limit)
        let fetched = try walk.rows(db, after: position, limit: limit + 1) { stmt -> Bool in
            guard batch.count < limit else { return true }
            appender.append(stmt)
            batch.endRow()
            last = .init(key: stmt.int64(keyColumn), id: stmt.int64(idColumn))
            return true
        }
        guard fetched.count > limit, let last else { return nil }
        return cursors.encode(kind: kind, last)
    }
}

extension ArticleStore {
    /// ``list(limit:after:range:ascending:)`` as a batch of article columns and the next page's cursor.
    public func listBatch(limit: Int = PageLimit.default, after cursor: String? = nil, range: TimeRange = .all,
                          ascending: Bool = false) throws -> (ColumnBatch, String?) {
        try PageLimit.check(limit)
        let walk = Self.walk(range: range, ascending: ascending)
        let kind = walk.cursorKind(Self.listKind)
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        return try store.read { db in
            let batch = Self.pages.take()
            let next = try store.pageBatch(db, walk, after: position, limit: limit, kind: kind, batch: batch, keyColumn: 4, idColumn: 0,
                                           appender: Appender(batch))
            return (batch, next)
        }
    }
}

extension ConversationStore {
    /// ``list(limit:after:)`` as a batch of conversation columns and the next page's cursor.
    public func listBatch(limit: Int = PageLimit.default, after cursor: String? = nil) throws -> (ColumnBatch, String?) {
        try PageLimit.check(limit)
        let position = try cursor.map { try store.cursors.decode($0, kind: Self.listKind) }
        return try store.read { db in
            let batch = Self.batch()
            let next = try store.pageBatch(db, db.sql.conversations.mostRecentFirst, after: position, limit: limit, kind: Self.listKind, batch: batch,
                                           keyColumn: 4, idColumn: 5, appender: RowByRow(batch, Self.appendRow))
            return (batch, next)
        }
    }
}

extension MessageStore {
    /// ``history(of:limit:before:range:)`` as a batch of message columns (oldest first) and the
    /// cursor of the page just earlier.
    public func historyBatch(of conversationId: Int64, limit: Int = 50, before cursor: String? = nil,
                             range: TimeRange = .all) throws -> (ColumnBatch, String?) {
        try PageLimit.check(limit)
        let walk = Self.historyWalk(conversationId, range: range)
        let kind = walk.cursorKind(Self.historyKind(conversationId))
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        return try store.read { db in
            let batch = Self.pages.take()
            let next = try store.pageBatch(db, walk, after: position, limit: limit, kind: kind, batch: batch, keyColumn: 5, idColumn: 0,
                                           appender: Appender(batch))
            // A page with messages shows the conversation exists; only an empty one needs the check.
            if batch.count == 0 { _ = try ConversationStore.require(db, conversationId) }
            batch.reverse()
            return (batch, next)
        }
    }
}

// MARK: - One row in place

/// One stored row read in place: integers, and text as the UTF-8 bytes stored. Valid only inside
/// the call that hands it out.
public struct RawRow {
    let stmt: Statement

    public func int64(_ column: Int) -> Int64 { stmt.int64(Int32(column)) }

    public func withUTF8<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try stmt.withUTF8(Int32(column)) { try body(UnsafeRawBufferPointer($0)) }
    }

    /// True when the column is NULL (an optional text: a message's sender).
    public func isNull(_ column: Int) -> Bool { stmt.isNull(Int32(column)) }

    /// A uid column (16 bytes stored) as its UUID text, in place.
    public func withUIDText<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try stmt.withUIDText(Int32(column), body)
    }
}

extension Store {
    /// The row of `entity` with `id`, read by the statement `byID` (binds an id), handed to `body`
    /// in place; `.notFound` if there is none. O(log n). (`byID` is a function, not a key path:
    /// applying a key path cost a get a few percent.)
    func withRow<T>(_ entity: String, _ byID: (StoreSQL) -> String, _ id: Int64, _ body: (RawRow) throws -> T) throws -> T {
        try read { db in
            let stmt = try db.prepare(byID(db.sql))
            stmt.bind(1, id)
            guard try stmt.step() else { throw NotesError.notFound(entity, id) }
            return try body(RawRow(stmt: stmt))
        }
    }
}

extension ArticleStore {
    /// The article with `id` handed to `body` in place (columns in ``columns`` order: id, uid,
    /// title, content, created_at, updated_at, revision); `.notFound` if there is none. For
    /// callers that copy the fields out anyway (the C ABI's packed row), without a `String` each.
    public func withRow<T>(_ id: Int64, _ body: (RawRow) throws -> T) throws -> T {
        try store.withRow("article", { $0.articles.byID }, id, body)
    }
}

extension MessageStore {
    /// The message with `id` handed to `body` in place (columns: id, uid, conversation_id,
    /// content, from_me, sent_at, sender); `.notFound` if there is none.
    public func withRow<T>(_ id: Int64, _ body: (RawRow) throws -> T) throws -> T {
        try store.withRow("message", { $0.messages.byID }, id, body)
    }
}
