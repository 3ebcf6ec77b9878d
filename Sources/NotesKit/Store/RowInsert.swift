/// The one way new articles and messages reach their tables: `create_many`, `insert_many`, a send,
/// a saved draft's first save and every import go through ``WriteContext/insertRows``, so each new
/// row is written, recorded in the change feed and handed to the search index the same way.
/// A record that ``WriteContext/insertRecords(_:_:announce:bind:)`` inserts: an article or a message.
protocol InsertedRecord {
    var id: Int64 { get set }
    var uid: String { get }
}

extension Article: InsertedRecord {}
extension Message: InsertedRecord {}

extension WriteContext {
    /// Rows inserted and then announced at a time by ``insertRecords(_:_:announce:bind:)``: a bulk
    /// write's observers take each chunk while the rows after it are inserted (the search index's
    /// ``GramPipeline`` builds its postings on the other core meanwhile, instead of after the
    /// last insert). A multiple of every backend's rows a statement.
    static let announcedRows = 1_024

    /// Inserts `records` through ``insertRows(count:_:bind:uid:)`` (`bind(statement,
    /// firstParameter, record)` binds one), and announces the ones written, with their new ids, as
    /// `announce`, ``announcedRows`` at a time. Returns each record's new id, or nil when one with
    /// its uid was there already (or earlier in `records`).
    func insertRecords<Record: InsertedRecord>(_ records: [Record], _ sql: StoreSQL.RowInserts,
                                               announce: ([Record]) -> RecordChange,
                                               bind: (Statement, Int32, Record) -> Void) throws -> [Int64?] {
        var ids: [Int64?] = []
        ids.reserveCapacity(records.count)
        repeat {
            let start = ids.count, end = min(start + Self.announcedRows, records.count)
            let chunk = try insertRows(count: end - start, sql, bind: { bind($0, $1, records[start + $2]) },
                                       uid: { records[start + $0].uid })
            var created: [Record] = []
            created.reserveCapacity(chunk.count)
            for (k, id) in chunk.enumerated() {
                guard let id else { continue }
                var record = records[start + k]
                record.id = id
                created.append(record)
            }
            moreRowsComing = end < records.count
            defer { moreRowsComing = false }
            try self.announce(announce(created))
            ids += chunk
        } while ids.count < records.count
        return ids
    }

    /// Inserts `count` rows with the backend's `sql` (see ``StoreSQL/RowInserts``), `sql.many.rows`
    /// rows per statement (one, `sql.lone`, outside a bulk write when `sql.manyOnlyInBulk`);
    /// `bind(statement, firstParameter, row)` binds row `row`'s values from parameter
    /// `firstParameter` on. A row whose uid the table has already (or an earlier row of
    /// the same call has) is not written.
    ///
    /// Returns each row's new id, or nil for a row not written. The write lock numbers one
    /// statement's rows consecutively, so a chunk without a conflict needs no lookup;
    /// a chunk with one looks its uids up once. O(count · log n).
    func insertRows(count: Int, _ sql: StoreSQL.RowInserts, bind: (Statement, Int32, Int) -> Void,
                    uid: (Int) -> String) throws -> [Int64?] {
        var ids = [Int64?](repeating: nil, count: count)
        let batch = sql.manyOnlyInBulk && !bulk ? sql.lone : sql.many
        let perStatement = batch.rows
        // Every id above `floor` is a row of this call (nil until a chunk needs it).
        var floor: Int64?
        // True while the table's highest id is below ids given out before (deleted since): rows
        // then go one at a time, each numbered above those, until one is written.
        var belowFloor = false
        // Each statement is prepared once a call and rewound for its next run: preparing it again
        // looked its SQL up among the cached statements every time, and a reset's clearing of the
        // bindings freed the text parameters' buffers that the next row's binds then allocated again.
        var many: Statement?, one: Statement?
        func statement(_ whole: Bool) throws -> Statement {
            if let made = whole ? many : one {
                made.rewind()
                return made
            }
            let made = try prepare(whole ? batch.sql : sql.one)
            if whole { many = made } else { one = made }
            return made
        }
        var start = 0
        while start < count {
            // `many` (numbered after the highest stored id) for whole statements, `one` for the rest.
            // (A lone row, a send's, numbers itself in `one`'s own SQL: reading the highest id and
            // the floor first would be two statements more.)
            var whole = count - start >= perStatement && count > 1
            if whole && floor == nil {
                let highest = try Store.scalar(connection, sql.maxID)
                floor = highest
                if let idFloor = sql.idFloor { belowFloor = try Store.scalar(connection, idFloor) > highest }
            }
            if belowFloor { whole = false }
            let n = whole ? perStatement : 1
            let stmt = try statement(whole)
            for k in 0..<n { bind(stmt, Int32(sql.perRow * k + 1), start + k) }
            try stmt.run()
            let written = connection.changes
            let last = connection.lastInsertRowID
            if written == n {
                for k in 0..<n { ids[start + k] = last - Int64(n - 1 - k) }
            } else if written > 0, let below = floor {
                // Some rows conflicted (and left gaps in the numbering): look the uids up.
                let lookup = try prepare(sql.idByUID)
                for k in 0..<n {
                    lookup.reset()
                    lookup.bind(1, uid: uid(start + k))
                    if try lookup.step() {
                        let id = lookup.int64(0)
                        if id > below && !ids[start..<(start + k)].contains(id) { ids[start + k] = id }
                    }
                    lookup.reset()
                }
            }
            if written > 0 {
                floor = last
                belowFloor = false
            }
            start += n
        }
        return ids
    }
}
