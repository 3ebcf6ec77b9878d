#if canImport(Glibc)
import Glibc
#endif

/// What the search engine needs to know about one kind of record: where its rows and its index
/// are, and which columns hold the searched text. Articles and messages each provide one.
protocol SearchTarget {
    associatedtype Record: Sendable

    var index: SearchIndex { get }
    /// The fields searched, with the result column that holds each one's text.
    var fields: [(field: UInt64, column: Int32)] { get }

    /// The records in search order (sort key, then id; descending, or ascending when the walk is),
    /// within the search's scope and range, selecting the record's columns: see ``Keyset``.
    var walk: Keyset { get }
    /// The same walk selecting only `id` (and cheap: an index scan).
    var idWalk: Keyset { get }
    /// Binds 1 id. Returns: the record's columns.
    var rowByID: String { get }
    /// Whether a row of ``rowByID`` is within the search's scope and range.
    func inScope(_ row: Statement) -> Bool
    /// The sort key of record `id`, or nil when there is none in the search's scope and range.
    func sortKey(_ db: Connection, _ id: Int64) throws -> Int64?
    /// Roughly how many records are in scope (for planning only). O(log n).
    func estimatedCount(_ db: Connection) throws -> Int64

    func record(from stmt: Statement) -> Record
    /// The position of the row `stmt` is on (a ``walk`` row or a ``row(_:_:)``).
    func position(_ stmt: Statement) -> CursorCodec.Position
    associatedtype Appender: RowAppender
    /// Appends the rows (the record's columns) to a batch of ``hitBatch()``'s columns.
    static func appender(_ batch: ColumnBatch) -> Appender
    /// An empty batch of the record's columns, then one `list<int32>` span column per field
    /// searched (in ``fields`` order).
    func hitBatch() -> ColumnBatch
    /// Microseconds to read and check one row of a scan, and to fetch and check one candidate by
    /// id, for this kind of record (see ``SearchCost``).
    var scanRowCost: Double { get }
    var verifyCost: Double { get }
    func spans(_ ranges: [[Range<Int>]]) -> MatchSpans
}

extension SearchTarget {
    /// A statement stepped onto record `id`'s row (the record's columns), or nil when there is no
    /// such record or it is outside the search's scope or range.
    func row(_ db: Connection, _ id: Int64) throws -> Statement? {
        let stmt = try db.prepare(rowByID)
        stmt.bind(1, id)
        guard try stmt.step() else { return nil }
        guard inScope(stmt) else {
            stmt.reset()
            return nil
        }
        return stmt
    }

    /// Every record of the kind (ids are dense), whatever the scope: within one conversation, its
    /// share of the matches is taken to be its share of the messages, which cancels out of the plan.
    func estimatedCount(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM \(index.recordsTable)")
    }
}

/// Where a search puts its hits, in search order: each is the row a statement is on, with the
/// code-point ranges of the matches in each field searched (in ``SearchTarget/fields`` order).
protocol SearchSink {
    /// The hits so far.
    var count: Int { get }
    /// The position of each hit so far, in order.
    var positions: [CursorCodec.Position] { get }
    mutating func add(_ stmt: Statement, _ ranges: [[Range<Int>]])
    /// Keeps the first `n` hits.
    mutating func keep(_ n: Int)
}

/// Hits as records (``SearchHit``): the Swift API's pages.
struct RecordSink<Target: SearchTarget>: SearchSink {
    let target: Target
    private(set) var hits: [SearchHit<Target.Record>] = []
    private(set) var positions: [CursorCodec.Position] = []
    var count: Int { hits.count }

    init(_ target: Target) { self.target = target }

    mutating func add(_ stmt: Statement, _ ranges: [[Range<Int>]]) {
        positions.append(target.position(stmt))
        hits.append(SearchHit(record: target.record(from: stmt), spans: target.spans(ranges)))
    }

    /// Keeps the first `n` hits.
    mutating func keep(_ n: Int) {
        hits.removeSubrange(min(n, hits.count)...)
        positions.removeSubrange(min(n, positions.count)...)
    }
}

/// Hits read straight into columns (no `String` per field): the record's columns and the span
/// columns of ``SearchTarget/hitBatch()``, for the first `rows` hits; later hits (the one that
/// tells a page that more exist) only count, with their positions.
struct BatchSink<Target: SearchTarget>: SearchSink {
    let batch: ColumnBatch
    let rows: Int
    private let spanColumns: [Column]
    /// Made once (an appender made for each row retains and releases every column).
    private let appender: Target.Appender
    private(set) var positions: [CursorCodec.Position] = []
    private let target: Target
    var count: Int { positions.count }

    init(_ target: Target, rows: Int) {
        self.target = target
        self.rows = rows
        batch = target.hitBatch()
        batch.reserve(rows: min(rows, 1_024))
        spanColumns = Array(batch.columns.suffix(target.fields.count))
        appender = Target.appender(batch)
    }

    mutating func add(_ stmt: Statement, _ ranges: [[Range<Int>]]) {
        positions.append(target.position(stmt))
        guard batch.count < rows else { return }
        appender.append(stmt)
        for (column, spans) in zip(spanColumns, ranges) { column.append(pairs: spans) }
        batch.endRow()
    }

    /// Keeps the first `n` hits.
    mutating func keep(_ n: Int) {
        positions.removeSubrange(min(n, positions.count)...)
        batch.truncate(rows: min(n, batch.count))
    }
}

/// Runs one search page: plans, finds candidates, checks them against the text, collects hits.
///
/// On SQLite a short scan comes first (``probeRows(_:)``): a frequent query's page is full before
/// anything is planned; its share of hits then guides the plan (a one-character query it found
/// twice or more is scanned on without reading the index). Otherwise two strategies, picked per
/// query from the index's document frequencies:
/// - **scan**: walk the records newest first, checking each, and stop once the page is full.
///   Cheapest when the query is frequent: a page needs only a few rows.
/// - **index**: intersect the posting lists of the query's grams (one-character queries: the
///   union of the grams starting with it), then check the candidates newest first.
///   Cheapest when the query is rare: the work is proportional to the postings read.
/// A scan that runs past its budget hands over to the index from where it stopped, so a wrong
/// guess costs at most the budget. The index plan also checks the pending records (the few not
/// in the index yet, or changed since it took them in) and merges their matches in.
struct SearchEngine<Target: SearchTarget, Sink: SearchSink> {
    let db: Connection
    let target: Target
    let query: SearchQuery
    let limit: Int
    private let pattern: Pattern
    private let prefilter: Prefilter?
    private let fields: [(field: UInt64, column: Int32)]
    /// The target's ``SearchTarget/walk`` and ``SearchTarget/idWalk``, built once (the scan
    /// compares each row's position in the walk's order).
    private let keyset: Keyset
    private let idKeyset: Keyset
    private var builder = KeyBuilder()
    /// The hits found.
    private(set) var sink: Sink
    private var pending: [Int64]?
    /// How many pending records the search checked (see ``foldsPending``).
    private var pendingChecked = 0
    /// The document frequency of each gram of the query in each field searched (read once).
    private var frequencies: [UInt64: Int64]?
    /// True when the statement that read ``frequencies`` said no record is pending.
    private var nothingPending = false
    /// True when ``frequencies`` were read before the snapshot began.
    private var frequenciesBeforeSnapshot = false
    /// The postings read with the ``frequencies`` by ``StoreSQL/SearchTables/planReads``, gram by
    /// gram; with the pending records' matches it read (``pending``), they need no snapshot of
    /// their own: one statement read them together.
    private var postingsInHand: [UInt64: [Int64]]?
    private var estimated: Int64?
    /// Rows the scans read so far, and the rowid-order scan of a first page (see ``scanInRowidOrder(budget:)``).
    private var scanned = 0
    private var rowid: RowidWalk?
    /// True on a backend whose every statement is a round trip to a server (PostgreSQL): the
    /// engine then reads the query's grams, and its candidates' rows, a statement each.
    private var fewStatements: Bool { db.sql.articleIndex.batch > 1 }
    /// The condition the server checks before it sends a row (``StoreSQL/SearchFilter``), with
    /// its texts; nil for an empty query or a backend without one. The rows it sends are checked
    /// here all the same.
    private let serverFilter: (sql: String, texts: [String])?
    /// The read snapshot the search's statements share, begun by the engine (nil: begun already).
    /// Where statements cost no round trip it begins at once; else only before the index's
    /// postings and pending records, which must agree: a planning read, and a scan's one
    /// statement, each read their own moment, and a search by the scan takes no transaction.
    private let snapshot: ReadSnapshot?

    init(db: Connection, target: Target, query: SearchQuery, limit: Int, sink: Sink, snapshot: ReadSnapshot? = nil) {
        self.db = db
        self.snapshot = snapshot
        self.target = target
        self.query = query
        self.limit = limit
        self.sink = sink
        pattern = Pattern(query.key, fold: !query.caseSensitive)
        prefilter = Prefilter.make(for: query.key, fold: !query.caseSensitive)
        fields = target.fields
        keyset = target.walk
        idKeyset = target.idWalk
        if let filter = db.sql.searchFilter, !query.isEmpty {
            let names = Self.searchedColumns(of: target)
            var key = String.UnicodeScalarView()
            key.append(contentsOf: query.key.compactMap(Unicode.Scalar.init))
            serverFilter = (filter.condition(names, query.caseSensitive), Array(repeating: String(key), count: names.count))
        } else {
            serverFilter = nil
        }
    }

    /// The names of the columns whose texts `target`'s search reads, in the order of its fields.
    private static func searchedColumns(of target: Target) -> [String] {
        let columns = target.index.columns
        return target.fields.compactMap { field in columns.first { $0.field == field.field }?.name }
    }

    /// Puts up to `limit + 1` hits after `position`, in search order, into ``sink``. Run once.
    mutating func run(after position: CursorCodec.Position?) throws {
        defer {
            builder.release()
            rowid?.stmt.reset()
        }
        if !fewStatements { try snapshot?.begin() }
        if query.isEmpty {
            _ = try scan(after: position, budget: nil)
            return
        }
        // A short scan first, before any planning: a frequent query (most searches a user types)
        // fills its page from the newest rows without reading a document frequency. A rarer one
        // is planned from where the scan stopped, having cost the probe's few rows, and a scan it
        // plans reads on from there (the same statement). (Not where a statement is a round trip:
        // there the plan's one statement is cheaper than a wasted scan.)
        var from = position
        if Self.forcedPlan == nil, !fewStatements {
            guard let stopped = try scan(after: position, budget: Self.probeRows(limit)) else { return }
            from = stopped
        }
        let plan = try makePlan()
        switch plan {
        case .nothing:
            return
        case .scan(let budget):
            if let stopped = try scan(after: from, budget: budget) {
                try searchIndex(after: stopped)
            }
        case .index:
            try searchIndex(after: from)
        }
    }

    /// The rows the first scan reads before the query is planned: a page's worth of matches when
    /// about one row in four matches.
    static func probeRows(_ limit: Int) -> Int { 4 * (limit + 1) + 16 }

    // MARK: - Planning

    enum Plan {
        case nothing
        case scan(budget: Int)
        case index
    }

    /// Estimates how many records can match (an upper bound from the document frequencies of the
    /// query's grams), then what a scan and what the index would cost to fill the page.
    private mutating func makePlan() throws -> Plan {
        switch Self.forcedPlan {
        case "scan"?: return .scan(budget: Int.max)
        case "index"?: return .index
        case "handover"?: return .scan(budget: 2)
        default: break
        }
        if query.foldedKey.count == 1, sink.count >= 2 {
            // The probe found a character twice or more: frequent. Its grams (one per character
            // that follows it: hundreds) would cost more to read than the scan does to fill the
            // page, and the index would read them all and their postings. The scan's budget, three
            // times the rows the probe's share of hits says the page still needs, hands a wrong
            // guess over to the index.
            let rows = Double(limit + 1 - sink.count) * Double(scanned) / Double(sink.count)
            return .scan(budget: Int(rows * 3) + 48)
        }
        if query.foldedKey.count > 1 { try readFrequencies() }  // (with the count, where it can)
        let count = max(try estimatedCount(), 1)
        var estimate: Int64 = 0   // records that can match, at most
        var postings: Int64 = 0   // postings the index plan reads
        if query.foldedKey.count == 1 {
            // Sum the grams that start with the character, stopping once it is clearly frequent:
            // past twice the count where a scan and the index cost the same.
            let even = (Double(limit + 1) * Double(count) * target.scanRowCost / SearchCost.posting).squareRoot()
            let enough = max(Int64(2 * even), 1)
            let stmt = try target.index.gramsStatement(db, in: Gram.range(startingWith: query.foldedKey[0]))
            defer { stmt.reset() }
            var rows = 0
            while estimate < enough, rows < 2_000, try stmt.step() {
                rows += 1
                let (gram, df) = (stmt.int64(0), stmt.int64(1))
                if target.fields.contains(where: { $0.field == UInt64(Gram.field(of: gram)) }) {
                    estimate += df
                    postings += df + Int64(Postings.blockBytes / 2)
                }
            }
            if rows == 2_000 { estimate = max(estimate, enough) } // thousands of grams: frequent
            estimate = min(estimate, count)
        } else {
            // A matching record has every gram of the query, so at most min(df) match. (Grams of
            // real phrases go together, so this bound is usually close; when it is not, as for
            // "aaa" against many "aa", the scan's budget hands over to the index.)
            for (field, _) in target.fields {
                var dfs: [Int64] = []
                for gram in query.grams { dfs.append(try documentFrequency(gram | field)) }
                dfs.sort()
                guard dfs[0] > 0 else { continue }
                estimate += dfs[0]
                postings += dfs.prefix(2).reduce(0, +)
            }
        }
        // (Where one statement read the frequencies and found nothing pending, it alone answers;
        // frequencies read before the snapshot of the pending records cannot say "nothing" with
        // them: the index's postings, read in it, do.)
        if estimate == 0 {
            if nothingPending { return .nothing }
            return try pendingMatches().isEmpty && frequenciesInSnapshot ? .nothing : .index
        }
        let page = Double(limit + 1)
        var expectedRows = page * Double(count) / Double(estimate)
        // The grams bound the matches from above: a query much rarer than its grams ("aaa" among
        // many "aa") would overrun the scan's budget. Where the probe's share of hits is under a
        // quarter of theirs, the probe's share says how many rows the page still needs.
        let probed = Double(max(sink.count, 1)) / Double(max(scanned, 1))
        if scanned > 0, Double(estimate) / Double(count) > 4 * probed {
            expectedRows = Double(limit + 1 - sink.count) / probed
        }
        let scan = expectedRows * target.scanRowCost
        let index = Double(postings) * SearchCost.posting + Double(postings / 300 + 2) * SearchCost.block
            + min(expectedRows * SearchCost.walkRow, Double(estimate) * SearchCost.sortKey) + page * target.verifyCost
        guard scan <= index else { return .index }
        // Where the server checks the rows (``serverFilter``), reading one row of the walk costs
        // about what checking one candidate does: scan up to as many rows as there can be
        // candidates before the index takes over (a wrong guess costs at most twice the better
        // plan's work; a query much rarer than its grams, "aaa" among many "aa", then still
        // fills its page by the scan).
        let budget = Int(expectedRows * 3) + 48
        return .scan(budget: serverFilter == nil ? budget : max(budget, Int(min(estimate, Int64(Int32.max)))))
    }

    /// `NOTESKIT_SEARCH_PLAN` = `scan`, `index` or `handover` (a scan of two rows, then the
    /// index) forces a plan, for tests and benchmarks: results are the same whatever the plan.
    static var forcedPlan: String? {
        getenv("NOTESKIT_SEARCH_PLAN").map { String(cString: $0) }
    }

    /// The target's record count estimate, read once.
    private mutating func estimatedCount() throws -> Int64 {
        if let estimated { return estimated }
        let count = try target.estimatedCount(db)
        estimated = count
        return count
    }

    /// How many records have `gram` (a gram of the query, with a field searched).
    private mutating func documentFrequency(_ gram: UInt64) throws -> Int64 {
        try readFrequencies()
        return frequencies?[gram] ?? 0
    }

    /// Reads the document frequency of every gram of the query in every field searched, once: in
    /// one statement where statements are round trips, which may also give the records' count
    /// estimate (a row without a gram; see ``StoreSQL/SearchTables/documentFrequencies``).
    private mutating func readFrequencies() throws {
        guard frequencies == nil else { return }
        frequenciesBeforeSnapshot = !(snapshot?.begun ?? true)
        let all = target.fields.flatMap { field in query.grams.map { $0 | field.field } }
        let sql = target.index.kind == SearchIndex.articles.kind ? db.sql.articleIndex : db.sql.messageIndex
        if let planReads = sql.planReads {
            try readPlan(planReads, all)
            return
        }
        var found: [UInt64: Int64] = [:]
        for gram in all { found[gram] = try target.index.documentFrequency(db, gram) }
        frequencies = found
    }

    /// Reads with one statement (``StoreSQL/SearchTables/planReads``, one snapshot) the query's
    /// grams' frequencies, the records' count estimate, the postings of the rarest grams, and the
    /// pending records the server's filter lets through, checked here (``pending``; every pending
    /// record counts as checked, for ``foldsPending``).
    private mutating func readPlan(_ planReads: (String) -> String, _ grams: [UInt64]) throws {
        let columns = target.index.columns
        let wanted = fields.compactMap { field in columns.firstIndex { $0.field == field.field }.map { Int32($0 + 4) } }
        let stmt = try db.prepare(planReads(serverFilter?.sql ?? "TRUE"))
        stmt.bind(1, grams.map { String(Int64(bitPattern: $0)) }.joined(separator: ","))
        for (k, text) in (serverFilter?.texts ?? []).enumerated() { stmt.bind(Int32(k + 2), text) }
        defer { stmt.reset() }
        var found: [UInt64: Int64] = [:]
        var tails: [UInt64: [Int64]] = [:]
        var blocks: [UInt64: [(first: Int64, ids: [Int64])]] = [:]
        var matches: [Int64] = []
        var ranges: [Range<Int>] = []
        while try stmt.step() {
            switch stmt.int64(0) {
            case 0:
                let gram = UInt64(bitPattern: stmt.int64(1))
                found[gram] = stmt.int64(2)
                if !stmt.isNull(3) {
                    var tail: [Int64] = []
                    stmt.withBlob(3) { Postings.decodeTail($0, into: &tail) }
                    tails[gram] = tail
                }
            case 1:
                var ids: [Int64] = []
                stmt.withBlob(3) { Postings.decode($0, into: &ids) }
                blocks[UInt64(bitPattern: stmt.int64(1)), default: []].append((stmt.int64(2), ids))
            case 2:
                pendingChecked = Int(stmt.int64(1))
                nothingPending = pendingChecked == 0
                estimated = estimated ?? stmt.int64(2)
            default:
                for column in wanted {
                    ranges.removeAll(keepingCapacity: true)
                    if stmt.withUTF8(column, { find(in: $0, into: &ranges) }) {
                        matches.append(stmt.int64(2))
                        break
                    }
                }
            }
        }
        var postings: [UInt64: [Int64]] = [:]
        for (gram, tail) in tails {
            guard let df = found[gram], Int64(tail.count) < df else {
                postings[gram] = tail
                continue
            }
            var ids: [Int64] = []
            ids.reserveCapacity(Int(df))
            for block in (blocks[gram] ?? []).sorted(by: { $0.first < $1.first }) { ids.append(contentsOf: block.ids) }
            ids.append(contentsOf: tail)
            postings[gram] = ids
        }
        matches.sort()
        frequencies = found
        frequenciesBeforeSnapshot = false
        postingsInHand = postings
        pending = matches
    }

    // MARK: - Scan

    /// Checks records newest first until the page is full, the records run out (nil), or
    /// `budget` rows were read (the position of the last row read).
    private mutating func scan(after position: CursorCodec.Position?, budget: Int?) throws -> CursorCodec.Position? {
        // A first page's scan, and the scan that goes on where it stopped, read in rowid order.
        // (Not where a statement is a round trip that sends all its rows: PostgreSQL's heap has
        // no rowid order to gain, and the read would have no LIMIT.)
        let rowidOrder = position == nil ? rowid == nil && !fewStatements && keyset.filters.isEmpty && keyset.range == .all
            : position == rowid?.stopped
        if rowidOrder {
            if case .inOrder(let stopped) = try scanInRowidOrder(budget: budget) { return stopped }
            // The ids do not follow the keys: read again from the start, by the key's index (as
            // many rows as the rowid-order scans were given).
            sink.keep(0)
            return try scan(after: nil, budget: budget.map { $0 == Int.max ? $0 : $0 + scanned })
        }
        if let serverFilter {
            var walk = keyset
            walk.textFilter = serverFilter
            return try scanFiltered(walk, after: position, budget: budget)
        }
        var read = 0
        // No more rows than the budget (an empty query matches every row: a page's worth).
        let most = budget.map { $0 == Int.max ? nil : $0 } ?? (query.isEmpty ? limit + 1 : nil)
        for stmt in try keyset.statements(db, after: position, limit: most) {
            defer { stmt.reset() }
            while try stmt.step() {
                check(stmt)
                scanned += 1
                if sink.count > limit { return nil }
                read += 1
                if let budget, read >= budget { return target.position(stmt) }
            }
        }
        return nil
    }

    /// ``scan(after:budget:)`` where the server checks the rows first (``serverFilter``): each
    /// statement reads the walk's next `budget` rows at most, on the server, and sends those that
    /// may match (up to the hits the page still needs) and the last of them, numbered. Few rows
    /// that may match do not (text the filter cannot judge, see ``StoreSQL/SearchFilter``): when a
    /// statement sent all it may and the page is not full, the next one goes on after its last row.
    /// (`walk` carries the filter; also the candidates' rows of ``checkInOrder(_:after:keyed:expectedWalk:)``.)
    private mutating func scanFiltered(_ walk: Keyset, after position: CursorCodec.Position?,
                                       budget: Int?) throws -> CursorCodec.Position? {
        let rowNumber = walk.selectedColumns + 1
        var read = 0
        var after = position
        while true {
            let window = budget.flatMap { $0 == Int.max ? nil : $0 - read }
            let wanted = limit + 1 - sink.count
            var more = false
            for stmt in try walk.statements(db, after: after, limit: wanted, window: window) {
                defer { stmt.reset() }
                var got = 0
                while try stmt.step() {
                    check(stmt)
                    if sink.count > limit { return nil }
                    got += 1
                    let here = target.position(stmt)
                    if let window {
                        let number = Int(stmt.int64(rowNumber))
                        if number >= window { return here }  // the budget's last row
                        if got == wanted { read += number }
                    }
                    if got == wanted { after = here }
                }
                if got == wanted {
                    more = true  // the rest of this statement's rows, and the next's, after `after`
                    break
                }
            }
            guard more else { return nil }
        }
    }

    /// A first page's scan in rowid order (see ``Keyset/rowidOrderStatement(_:)``): a table read
    /// from one end, without a lookup from the key's index per row. The rows read are the walk's
    /// first ones, in its order, when each follows the one before in the walk's order and the
    /// walk's row number `read` is the last of them (one count along the key's index, at the end
    /// and at a few row numbers on the way, so that the check costs O(rows read)); otherwise
    /// `.outOfOrder`, and the caller forgets the hits and scans by the index. Otherwise as
    /// ``scan(after:budget:)``: `stopped` is the position where the budget ran out, from which a
    /// later call goes on reading the same statement (the probe's rows are not read twice).
    private mutating func scanInRowidOrder(budget: Int?) throws -> RowidScan {
        if rowid == nil {
            // SQLite checks each row in the statement (``ScanFilter``) and sends those that may
            // match, and those where the order is checked or the budget runs out.
            let filter = ScanFilter(keyset, prefilter: query.isEmpty ? nil : prefilter)
            let texts = Self.searchedColumns(of: target).joined(separator: ", ")
            let stmt = try keyset.rowidOrderStatement(db, where: "nk_scan_row(?, \(keyset.id), \(keyset.key), \(texts))")
            stmt.bind(1, scanFilter: filter)
            rowid = RowidWalk(stmt: stmt, filter: filter)
        }
        guard var walk = rowid else { return .outOfOrder }
        defer { rowid = walk }
        let filter = walk.filter
        walk.stopped = nil
        let start = filter.read
        defer { scanned += filter.read - start }
        filter.stopAt = budget.map { $0 > Int.max - start ? Int.max : start + $0 } ?? Int.max
        while try walk.stmt.step() {
            if filter.outOfOrder { return .outOfOrder }
            let here = target.position(walk.stmt)
            check(walk.stmt)
            let full = sink.count > limit, out = filter.read >= filter.stopAt
            // Checked at the end, and early on (rows 16, 128, 1 024, …): ids that do not follow
            // the keys (records imported one conversation at a time) cost a few rows.
            if full || out || filter.read == filter.nextCheck {
                guard try idKeyset.id(ofRow: filter.read, db) == here.id else { return .outOfOrder }
                if full { return .inOrder(stopped: nil) }
                if out {
                    walk.stopped = here
                    return .inOrder(stopped: here)
                }
                while filter.nextCheck <= filter.read { filter.nextCheck *= 8 }
            }
        }
        return .inOrder(stopped: nil)  // every row, each after the one before
    }

    /// The rowid-order scan of a first page, kept open from the probe to the plan's scan.
    private struct RowidWalk {
        let stmt: Statement
        /// Counts the rows read and checks their order (see ``ScanFilter``).
        let filter: ScanFilter
        /// Where the last call's budget ran out.
        var stopped: CursorCodec.Position?
    }

    private enum RowidScan {
        case inOrder(stopped: CursorCodec.Position?)
        case outOfOrder
    }

    /// Checks the row `stmt` is on; appends a hit when the query matches one of the fields.
    /// Allocates nothing for a row that does not match.
    private mutating func check(_ stmt: Statement) {
        guard let ranges = match(stmt) else { return }
        sink.add(stmt, ranges)
    }

    /// The matches in each field of the row `stmt` is on, or nil when there is none.
    private mutating func match(_ stmt: Statement) -> [[Range<Int>]]? {
        var first: [Range<Int>] = [], second: [Range<Int>] = []
        var matched = query.isEmpty
        for (k, (_, column)) in fields.enumerated() {
            guard !query.isEmpty else { break }
            let found = stmt.withUTF8(column) { utf8 in
                k == 0 ? find(in: utf8, into: &first) : find(in: utf8, into: &second)
            }
            if found { matched = true }
        }
        guard matched else { return nil }
        return fields.count == 1 ? [first] : [first, second]
    }

    /// The matches of the query in one field's text, as code-point ranges of the text.
    private mutating func find(in utf8: UnsafeBufferPointer<UInt8>, into out: inout [Range<Int>]) -> Bool {
        // (A literal key rules a text out in one pass: the prefilter only goes before the key is built.)
        let literal = pattern.isLiteral(fold: !query.caseSensitive)
        if !literal, let prefilter, !prefilter.mayMatch(utf8) { return false }
        if let found = pattern.matches(utf8: utf8, fold: !query.caseSensitive, into: &out) { return found }
        if literal, let prefilter, !prefilter.mayMatch(utf8) { return false }
        // Text that is not plainly NFC: build its key segment by segment.
        builder.build(utf8, fold: !query.caseSensitive)
        let mark = out.count
        guard pattern.matches(in: builder.key, into: &out) else { return false }
        // Map back to the stored text. Matches that NFC's reordering made share a stored code
        // point (only possible inside one run of combining marks) become one span, so spans stay
        // disjoint and ascending.
        var kept = mark
        for k in mark..<out.count {
            var range = builder.originalRange(of: out[k])
            while kept > mark, range.lowerBound < out[kept - 1].upperBound {
                range = min(range.lowerBound, out[kept - 1].lowerBound)..<max(range.upperBound, out[kept - 1].upperBound)
                kept -= 1
            }
            out[kept] = range
            kept += 1
        }
        out.removeSubrange(kept...)
        return true
    }

    // MARK: - Index

    /// Begins the snapshot the index's reads share, unless it has begun.
    private mutating func beginSnapshot() throws {
        guard let snapshot, !snapshot.begun else { return }
        try snapshot.begin()
    }

    /// True when the ``frequencies`` were read in the snapshot the index's reads share: only then
    /// does a gram's df of 0 say that its postings are empty (read before it, a df only orders
    /// and bounds the work; the postings and pending records read in the snapshot decide).
    private var frequenciesInSnapshot: Bool { snapshot == nil || !frequenciesBeforeSnapshot }

    /// The pending records (not in the index yet, or changed since; see `SearchIndex+Pending`)
    /// that match, ascending: each one's text is checked, in one pass, once per search. (Records
    /// outside the search's scope may be among them: candidates are scoped when fetched.)
    private mutating func pendingMatches() throws -> [Int64] {
        if let pending { return pending }
        try beginSnapshot()
        let columns = target.index.columns
        let wanted = fields.compactMap { field in columns.firstIndex { $0.field == field.field }.map { Int32($0 + 1) } }
        var out: [Int64] = []
        var ranges: [Range<Int>] = []
        for stmt in try target.index.pendingRecords(db) {
            defer { stmt.reset() }
            while try stmt.step() {
                pendingChecked += 1
                for column in wanted {
                    ranges.removeAll(keepingCapacity: true)
                    if stmt.withUTF8(column, { find(in: $0, into: &ranges) }) {
                        out.append(stmt.int64(0))
                        break
                    }
                }
            }
        }
        pending = out
        return out
    }

    /// True when the search checked ``SearchIndex/foldCount`` pending records or more: its
    /// store then folds them into the index (``Store/foldAfterSearch(_:)``), so that the next
    /// searches do not check them again.
    var foldsPending: Bool { pendingChecked > 0 && pendingChecked >= SearchIndex.foldCount }

    private mutating func searchIndex(after position: CursorCodec.Position?) throws {
        let candidates = Postings.union(try self.candidates(), try pendingMatches())
        if candidates.isEmpty { return }
        let count = Double(max(try estimatedCount(), 1))
        let walk = Double(limit + 1) * count / Double(candidates.count) * SearchCost.walkRow
        if fewStatements {
            try checkInOrder(candidates, after: position, keyed: Double(candidates.count) * SearchCost.sortKey <= walk,
                             expectedWalk: Int(Double(limit + 1) * count / Double(candidates.count)))
        } else if Double(candidates.count) * SearchCost.sortKey <= walk {
            var keyed: [(key: Int64, id: Int64)] = []
            keyed.reserveCapacity(candidates.count)
            let order = keyset
            // Search order: `before(a, b)`: a comes first.
            func before(_ a: (key: Int64, id: Int64), _ b: (key: Int64, id: Int64)) -> Bool {
                order.precedes(.init(key: a.key, id: a.id), .init(key: b.key, id: b.id))
            }
            for id in candidates {
                guard let key = try target.sortKey(db, id) else { continue }
                if let position, !before((position.key, position.id), (key, id)) { continue }
                keyed.append((key, id))
            }
            keyed.sort(by: before)
            for (_, id) in keyed {
                guard let stmt = try target.row(db, id) else { continue }
                check(stmt)
                stmt.reset()
                if sink.count > limit { return }
            }
        } else {
            let maxId = candidates[candidates.count - 1]
            var bits = [UInt64](repeating: 0, count: Int(maxId >> 6) + 1)
            for id in candidates where id >= 0 { bits[Int(id >> 6)] |= 1 << UInt64(id & 63) }
            for walk in try idKeyset.statements(db, after: position) {
                defer { walk.reset() }
                while try walk.step() {
                    let id = walk.int64(0)
                    guard id >= 0, id <= maxId, bits[Int(id >> 6)] & (1 << UInt64(id & 63)) != 0 else { continue }
                    guard let stmt = try target.row(db, id) else { continue }
                    check(stmt)
                    stmt.reset()
                    if sink.count > limit { return }
                }
            }
        }
    }

    /// Checks the candidates' rows in search order after `position` in few statements: a few
    /// candidates' rows in one, in search order; more: their ids in search order (`keyed`: the
    /// candidates' own, in one statement; else the walk's ids, filtered here, in pages: twice the
    /// `expectedWalk` rows first, then four times more each time), then their rows 64 a statement,
    /// until the page of hits is full.
    private mutating func checkInOrder(_ candidates: [Int64], after position: CursorCodec.Position?, keyed: Bool,
                                       expectedWalk: Int) throws {
        // The candidates' rows that may match, checked on the server (``serverFilter``) and sent
        // up to the hits the page still needs (see ``scanFiltered(_:after:budget:)``).
        func rows(_ ids: some Sequence<Int64>, after position: CursorCodec.Position?) throws -> Bool {
            var walk = keyset
            walk.ids = ids.map(String.init).joined(separator: ",")
            walk.textFilter = serverFilter
            _ = try scanFiltered(walk, after: position, budget: nil)
            return sink.count > limit
        }
        func rows(inChunks ordered: [Int64]) throws -> Bool {
            var start = 0
            while start < ordered.count {
                if try rows(ordered[start..<min(start + 64, ordered.count)], after: nil) { return true }
                start += 64
            }
            return false
        }
        if candidates.count <= 64 {
            _ = try rows(candidates, after: position)
            return
        }
        if keyed {
            var ordered: [Int64] = []
            var walk = idKeyset
            walk.ids = candidates.map(String.init).joined(separator: ",")
            for stmt in try walk.statements(db, after: position) {
                defer { stmt.reset() }
                while try stmt.step() { ordered.append(stmt.int64(0)) }
            }
            _ = try rows(inChunks: ordered)
            return
        }
        let maxId = candidates[candidates.count - 1]
        var bits = [UInt64](repeating: 0, count: Int(maxId >> 6) + 1)
        for id in candidates where id >= 0 { bits[Int(id >> 6)] |= 1 << UInt64(id & 63) }
        // Each page reads the walk from `position` again (ids only) and skips the rows seen.
        var seen = 0
        var page = 2 * expectedWalk + 64
        while true {
            var ordered: [Int64] = []
            var read = 0, full = false
            for stmt in try idKeyset.statements(db, after: position, limit: page) {
                defer { stmt.reset() }
                var got = 0
                while try stmt.step() {
                    got += 1
                    read += 1
                    guard read > seen else { continue }
                    let id = stmt.int64(0)
                    if id >= 0, id <= maxId, bits[Int(id >> 6)] & (1 << UInt64(id & 63)) != 0 { ordered.append(id) }
                }
                if got == page {
                    full = true  // the next statement would skip the rest of this one: page again
                    break
                }
            }
            if try rows(inChunks: ordered) { return }
            guard full else { return }
            seen = read
            page *= 4
        }
    }

    /// Where the plan's statement read the postings the index plan starts from (each field's
    /// rarest gram: ``postingsInHand``), the plan goes on from them and the pending records read
    /// with them, in no transaction; else the snapshot begins, and the pending records and
    /// postings are read again in it (a df read before it only orders the work).
    private mutating func inHandOrSnapshot() throws {
        if let postingsInHand {
            let needed = query.foldedKey.count > 1 && fields.allSatisfy { field in
                let dfs = query.grams.map { (gram: $0 | field.field, df: frequencies?[$0 | field.field] ?? 0) }
                guard let rarest = dfs.min(by: { ($0.df, $0.gram) < ($1.df, $1.gram) }) else { return true }
                return rarest.df == 0 || postingsInHand[rarest.gram] != nil
            }
            if needed { return }
            self.postingsInHand = nil
            pending = nil
            pendingChecked = 0
            frequenciesBeforeSnapshot = true
        }
        try beginSnapshot()
    }

    /// The postings of `gram`: those in hand, else read (in the snapshot), else, when not
    /// `required` and the postings in hand are the plan's, nil.
    private func postings(_ gram: UInt64, required: Bool = true) throws -> [Int64]? {
        if let postingsInHand {
            if let ids = postingsInHand[gram] { return ids }
            if !required { return nil }
        }
        return try target.index.postings(db, gram)
    }

    /// The ids the index says may match, ascending: per field, the records that have every gram
    /// of the query in that field; the union over the fields. (Pending records are not in it.)
    private mutating func candidates() throws -> [Int64] {
        try inHandOrSnapshot()
        var result: [Int64] = []
        for (field, _) in target.fields {
            let ids: [Int64]
            if query.foldedKey.count == 1 {
                var all: [Int64] = []
                let rows = try target.index.grams(db, in: Gram.range(startingWith: query.foldedKey[0]))
                for row in rows where UInt64(Gram.field(of: Int64(row.gram))) == field {
                    all.append(contentsOf: try target.index.postings(db, row.gram))
                }
                all.sort()
                ids = Postings.unique(all)
            } else {
                var grams: [(gram: UInt64, df: Int64)] = []
                for gram in query.grams {
                    let df = try documentFrequency(gram | field)
                    grams.append((gram | field, df))
                }
                grams.sort { ($0.df, $0.gram) < ($1.df, $1.gram) }  // (as the plan statement ranks them)
                guard let rarest = grams.first, rarest.df > 0 || !frequenciesInSnapshot else { continue }
                var current = try postings(rarest.gram) ?? []
                for next in grams.dropFirst() {
                    if current.count <= 16 || next.df > 128 * Int64(current.count) { break }
                    // (Postings read with the plan: the others are not read. Fewer grams
                    // intersected leave more candidates, each checked all the same.)
                    guard let ids = try postings(next.gram, required: false) else { break }
                    current = Postings.intersect(current, ids)
                    if current.isEmpty { break }
                }
                ids = current
            }
            result = Postings.union(result, ids)
        }
        return result
    }
}

/// What a search's rowid-order scan has SQLite check on each row, in the statement, before the
/// row is sent (the SQL function `nk_scan_row`, see ``SQLiteConnection``): it counts the rows
/// read, checks that each follows the one before in the walk's order, and tells whether the row
/// may match (the query's ``Prefilter``, on each text searched; no prefilter: every row may).
/// Sent are the rows that may match, the row out of order (``outOfOrder``: the scan stops), and
/// the rows numbered ``nextCheck`` and ``stopAt``, where the scan checks its order against the
/// key's index and its budget runs out. Every other row costs a function call instead of its
/// columns and a step out of SQLite and back; the rows sent are checked in full as before.
final class ScanFilter {
    /// The walk whose order the rows must follow.
    let walk: Keyset
    let prefilter: Prefilter?
    /// Rows read so far, and the position (key, id) of the last one.
    private(set) var read = 0
    private var last: CursorCodec.Position?
    private(set) var outOfOrder = false
    /// The next row number at which the scan checks the order.
    var nextCheck = 16
    /// The row number at which the budget runs out.
    var stopAt = Int.max

    init(_ walk: Keyset, prefilter: Prefilter?) {
        self.walk = walk
        self.prefilter = prefilter
    }

    /// Whether the row with `id`, sort key `key` and the texts searched is sent.
    func keep(id: Int64, key: Int64, _ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>?) -> Bool {
        read += 1
        let here = CursorCodec.Position(key: key, id: id)
        if let last, !walk.precedes(last, here) {
            outOfOrder = true
            return true
        }
        last = here
        if read == nextCheck || read >= stopAt { return true }
        guard let prefilter else { return true }
        return prefilter.mayMatch(first) || (second.map { prefilter.mayMatch($0) } ?? false)
    }
}

/// Rough costs in microseconds, measured on the benchmark machine; only their ratios matter.
/// (Reading and checking a row depends on the length of the text: each target gives its own.)
enum SearchCost {
    /// Stepping one entry of the sort-order index (ids only).
    static let walkRow = 0.15
    /// Looking up one candidate's sort key.
    static let sortKey = 1.0
    /// Decoding and merging one posting; reading one gram row or block.
    static let posting = 0.01
    static let block = 1.0
}
