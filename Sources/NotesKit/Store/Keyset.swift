/// The one keyset walk: rows in `(key, id)` order — newest first, or oldest first when
/// `ascending` — optionally narrowed by filters and a time range on `key`, strictly after a
/// position. Lists, history, both searches and `select` read through it.
///
/// A row-value predicate `(key, id) < (?, ?)` lets SQLite seek on `key` only and then walk every
/// row that shares it, so a page deep inside a run of equal keys (a bulk import writes thousands of
/// rows in one millisecond) costs O(depth). After a position the walk is two index seeks instead:
/// the rest of the current key (`key = ? AND id < ?`), then the keys beyond it (`key < ?`). Both
/// need an index on `(filter columns…, key, id)`; the range becomes `key >= ? AND key < ?` in the
/// same seek, so a week out of a million rows reads that week only. O(log n + rows read) at any depth.
struct Keyset: Sendable {
    /// `SELECT columns FROM table`, without WHERE.
    let select: String
    /// The sort key's column, e.g. `created_at`.
    let key: String
    /// The id column (the tie-breaker), e.g. `id`.
    var id: String = "id"
    /// Conditions with `?` parameters (e.g. `conversation_id = ?`), bound from `binds` in order.
    var filters: [String] = []
    var binds: [Int64] = []
    /// Oldest first (`key`, then `id`, ascending) instead of newest first.
    var ascending = false
    /// The range of `key` (milliseconds) walked.
    var range = TimeRange.all
    /// Only the rows with these ids (the search index's candidates), as decimal text joined by
    /// commas, bound to the backend's ``StoreSQL/SearchTables/idIn``; nil: every row.
    var ids: String?
    /// Only the rows that hold this condition, checked by the server before it sends a row: its
    /// `?` parameters bound from `texts` in order (a search's ``StoreSQL/SearchFilter``).
    var textFilter: (sql: String, texts: [String])?
    /// Conditions that split the table's rows in disjoint parts, each walked by an index of its
    /// own, merged in one statement (`… WHERE part1 … UNION ALL … WHERE part2 … ORDER BY key, id`;
    /// `key` and `id` are then columns of `select`); empty: one walk. Only without `ids`, a
    /// `textFilter` or a window (SQLite's conversation list: see ``HotConversations``).
    var parts: [String] = []

    /// The same walk selecting other columns (`select` is `SELECT columns FROM table`).
    func selecting(_ select: String) -> Keyset {
        Keyset(select: select, key: key, id: id, filters: filters, binds: binds, ascending: ascending, range: range, ids: ids,
               textFilter: textFilter, parts: parts)
    }

    /// How many columns `select` selects (a filtered window's verdict and row number follow them).
    var selectedColumns: Int32 {
        var depth = 0, count: Int32 = 1
        let list = select.dropFirst("SELECT ".count)
        for ch in list[..<(list.firstRange(of: " FROM ")?.lowerBound ?? list.endIndex)] {
            if ch == "(" { depth += 1 } else if ch == ")" { depth -= 1 } else if ch == ",", depth == 0 { count += 1 }
        }
        return count
    }

    /// The same walk in the given order.
    func ordered(ascending: Bool) -> Keyset {
        var walk = self
        walk.ascending = ascending
        return walk
    }

    /// Whether (key, id) `a` comes before `b` in the walk's order.
    func precedes(_ a: CursorCodec.Position, _ b: CursorCodec.Position) -> Bool {
        ascending ? (a.key, a.id) < (b.key, b.id) : (a.key, a.id) > (b.key, b.id)
    }

    fileprivate enum Seek: UInt8 { case all, sameKey, beyond, rowid }

    /// The walk's rows from the start, in rowid order instead (`id` descending, or ascending when
    /// the walk is), in the same range: the walk's own order when the table's ids follow its keys,
    /// as they do for records written in time order, read without a lookup from the key's index
    /// per row. The caller checks the order as it reads (see ``id(ofRow:_:)``). Only for a walk
    /// without filters, whose `id` is the rowid. With a `condition` (SQL whose one `?` parameter
    /// is parameter 1, bound by the caller), only the rows that hold it.
    func rowidOrderStatement(_ db: Connection, where condition: String? = nil) throws -> Statement {
        try statement(db, .rowid, nil, limit: nil, condition: condition)
    }

    /// The id of row `n` (1-based) of the walk from the start, or nil when it has fewer rows.
    /// O(log n + n) steps of the key's index (for a walk selecting only `id`, no row is read).
    func id(ofRow n: Int, _ db: Connection) throws -> Int64? {
        guard n > 0, !range.isEmpty else { return nil }
        let stmt = try statement(db, .all, nil, limit: 1, offset: n - 1)
        defer { stmt.reset() }
        return try stmt.step() ? stmt.int64(0) : nil
    }

    /// Statements that, stepped one after the other, give the rows in order strictly after
    /// `position` (from the start when nil), each at most `limit` rows (nil: no LIMIT, the caller
    /// stops stepping when it has enough; a backend that sends a statement's rows at once, as
    /// PostgreSQL's does, sends them all).
    ///
    /// With a ``textFilter`` and a `window`: of the walk's first `window` rows (of each statement),
    /// those that hold the filter, and the `window`-th row whatever it holds; each row then has
    /// two more columns, the filter's verdict and its row number in the walk (1-based). `limit`
    /// counts the rows sent.
    func statements(_ db: Connection, after position: CursorCodec.Position?, limit: Int? = nil,
                    window: Int? = nil) throws -> [Statement] {
        guard !range.isEmpty else { return [] }
        guard let position else { return [try statement(db, .all, position, limit: limit, window: window)] }
        return [try statement(db, .sameKey, position, limit: limit, window: window),
                try statement(db, .beyond, position, limit: limit, window: window)]
    }

    /// Up to `limit` rows after `position` (from the start when nil), each made by `row`.
    func rows<Row>(_ db: Connection, after position: CursorCodec.Position?, limit: Int, row: (Statement) throws -> Row) throws -> [Row] {
        var out: [Row] = []
        guard !range.isEmpty, limit > 0 else { return out }
        out.reserveCapacity(min(limit, 1_024))
        for seek in position == nil ? [Seek.all] : [.sameKey, .beyond] {
            guard out.count < limit else { break }
            let stmt = try statement(db, seek, position, limit: limit - out.count)
            defer { stmt.reset() }
            while try stmt.step() { out.append(try row(stmt)) }
        }
        return out
    }

    /// What a statement's SQL text depends on, and nothing else: the text is made once per shape
    /// and connection (``Connection/keysetText(_:)``), not again on every page (about 13 000
    /// instructions a page, twice that a search, callgrind), and the statement cache then finds it
    /// by the same string storage.
    struct Shape: Hashable {
        let select, key, id: String
        let filters: [String]
        let textFilter: String?
        let condition: String?
        let parts: [String]
        /// The seek, the order, which of range, ids, limit, offset and window are given.
        let flags: UInt16

        fileprivate init(_ walk: Keyset, _ seek: Seek, limit: Bool, offset: Bool, window: Bool, condition: String?) {
            select = walk.select
            key = walk.key
            id = walk.id
            filters = walk.filters
            textFilter = walk.textFilter?.sql
            self.condition = condition
            parts = walk.parts
            func bit(_ on: Bool, _ n: UInt16) -> UInt16 { on ? 4 << n : 0 }
            flags = UInt16(seek.rawValue) | bit(walk.ascending, 0) | bit(walk.range.since != nil, 1) | bit(walk.range.until != nil, 2)
                | bit(walk.ids != nil, 3) | bit(limit, 4) | bit(offset, 5) | bit(window, 6)
        }

        /// Hashes the few numbers that tell shapes apart (equality compares every field): hashing
        /// every text again would cost much of what the cache saves.
        func hash(into hasher: inout Hasher) {
            hasher.combine(flags)
            hasher.combine(select.utf8.count)
            hasher.combine(filters.count)
            hasher.combine(condition?.utf8.count ?? -1)
        }

        private var seek: Seek { Seek(rawValue: UInt8(flags & 3))! }
        private func has(_ bit: Int) -> Bool { flags & (4 << bit) != 0 }

        /// The statement's text; `idIn` is the backend's ``StoreSQL/SearchTables/idIn``.
        func sql(idIn: String) -> String {
            let ascending = has(0), since = has(1), until = has(2), ids = has(3), limit = has(4), offset = has(5), window = has(6)
            let order = ascending ? "ASC" : "DESC", beyond = ascending ? ">" : "<"
            var conditions = (condition.map { [$0] } ?? []) + filters
            if ids { conditions.append(id + idIn) }
            if since { conditions.append("\(key) >= ?") }
            if until { conditions.append("\(key) < ?") }
            let orderBy: String
            switch seek {
            case .all:
                orderBy = "\(key) \(order), \(id) \(order)"
            case .sameKey:
                conditions += ["\(key) = ?", "\(id) \(beyond) ?"]
                orderBy = "\(id) \(order)"
            case .beyond:
                conditions.append("\(key) \(beyond) ?")
                orderBy = "\(key) \(order), \(id) \(order)"
            case .rowid:
                orderBy = "\(id) \(order)"
            }
            let filter = textFilter.map { "(\($0))" }
            if let filter, !window { conditions.append(filter) }
            func whereSQL(_ conditions: [String]) -> String {
                conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            }
            var sql: String
            if parts.isEmpty {
                sql = "\(select)\(whereSQL(conditions)) ORDER BY \(orderBy)"
            } else {
                precondition(!ids && textFilter == nil && seek != .rowid, "a walk in parts has no ids, text filter or rowid order")
                sql = parts.map { "\(select)\(whereSQL([$0] + conditions))" }.joined(separator: " UNION ALL ") + " ORDER BY \(orderBy)"
            }
            if let filter, window, let from = select.firstRange(of: " FROM ") {
                // The walk's window with the filter's verdict, numbered as it comes, then filtered
                // (each step streams: the server stops reading once `limit` rows are sent).
                let walk = select[..<from.lowerBound] + ", \(filter) AS walk_hit" + select[from.lowerBound...]
                sql = "SELECT * FROM (SELECT w.*, row_number() OVER () AS walk_row FROM (\(walk)\(whereSQL(conditions)) ORDER BY \(orderBy) LIMIT ?) w) n "
                    + "WHERE walk_hit OR walk_row = ?"
            }
            return sql + "\(limit ? " LIMIT ?" : "")\(offset ? " OFFSET ?" : "")"
        }
    }

    private func statement(_ db: Connection, _ seek: Seek, _ position: CursorCodec.Position?, limit: Int?,
                           offset: Int? = nil, window: Int? = nil, condition: String? = nil) throws -> Statement {
        let shape = Shape(self, seek, limit: limit != nil, offset: offset != nil, window: window != nil, condition: condition)
        let stmt = try db.prepare(db.keysetText(shape))
        var i: Int32 = condition == nil ? 1 : 2
        func bind(_ value: Int64) {
            stmt.bind(i, value)
            i += 1
        }
        // In the statement's order: the filter in a window's select list, the walk's conditions
        // (once for each part), the filter as a condition, the window, the limit.
        func bindFilter() {
            for text in textFilter?.texts ?? [] {
                stmt.bind(i, text)
                i += 1
            }
        }
        let windowed = window != nil && textFilter != nil
        if windowed { bindFilter() }
        for _ in 0..<max(parts.count, 1) {
            binds.forEach(bind)
            if let ids {
                stmt.bind(i, ids)
                i += 1
            }
            if let since = range.since { bind(since.milliseconds) }
            if let until = range.until { bind(until.milliseconds) }
            if let position {
                bind(position.key)
                if seek == .sameKey { bind(position.id) }
            }
        }
        if windowed, let window {
            bind(Int64(window))
            bind(Int64(window))
        } else {
            bindFilter()
        }
        if let limit { bind(Int64(limit)) }
        if let offset { bind(Int64(offset)) }
        return stmt
    }

    /// The cursor kind of a walk of list `list`: the list, then its order and range when they are
    /// not the list's default, so a cursor is refused by the same list in another order or range.
    func cursorKind(_ list: String, defaultAscending: Bool = false) -> String {
        var parts = [list]
        if ascending != defaultAscending { parts.append(ascending ? "asc" : "desc") }
        if range != .all { parts.append(range.cursorTag) }
        return parts.joined(separator: "~")
    }
}

extension Store {
    /// The one page builder: the first `limit` of `rows` (read with one more than `limit`), and a
    /// cursor of kind `kind` at the last of them when more exist. `position` gives a row's place.
    func page<Row>(_ rows: [Row], limit: Int, kind: String, position: (Row) -> CursorCodec.Position) -> Page<Row> {
        guard rows.count > limit, let last = rows.prefix(limit).last else { return Page(items: rows, nextCursor: nil) }
        return Page(items: Array(rows.prefix(limit)), nextCursor: cursors.encode(kind: kind, position(last)))
    }

    /// The same for rows whose places are `positions` (as many).
    func page<Row>(_ rows: [Row], positions: [CursorCodec.Position], limit: Int, kind: String) -> Page<Row> {
        Page(items: Array(rows.prefix(limit)), nextCursor: nextCursor(positions, limit: limit, kind: kind))
    }

    /// The next page's cursor of a page read with one more row than `limit`, its rows at `positions`:
    /// at the last row shown, when more exist.
    func nextCursor(_ positions: [CursorCodec.Position], limit: Int, kind: String) -> String? {
        guard positions.count > limit, limit > 0 else { return nil }
        return cursors.encode(kind: kind, positions[limit - 1])
    }
}
