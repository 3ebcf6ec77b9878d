/// The character-bigram index of one kind of record (articles, messages), kept in SQLite.
///
/// For every field of every record, the index holds the *grams* of the field's search key (see
/// ``SearchText``): each pair of adjacent key code points, and the last code point followed by
/// `Gram.end`. A query of two or more code points can only match a record that has all of the
/// query's grams in one field, and a one-code-point query only a record with a gram that starts
/// with it; the candidates are then checked against the real text (codesearch and zoekt work
/// the same way), so the index only has to be a superset and never decides a match by itself.
///
/// Storage, per kind of record:
/// - `<kind>_grams(gram INTEGER PRIMARY KEY, df, tail BLOB)`: one row per gram with its document
///   frequency and its newest postings, as plain varint ids so that a new record's id is
///   *appended* by one statement, without reading the row (a rare gram lives entirely here);
/// - `<kind>_blocks(gram, first, ids BLOB, PRIMARY KEY(gram, first)) WITHOUT ROWID`: older
///   postings in blocks of at most ``Postings/blockBytes`` bytes, varint gaps, every block id below
///   every tail id. A tail that outgrows ``Postings/blockBytes`` moves into blocks whole.
///
/// A write does not touch these tables: it leaves its records to the pending set, which a later
/// search or write folds in by the batch, in a write transaction (see `SearchIndex+Pending.swift`).
struct SearchIndex: Sendable {
    let gramsTable: String
    let blocksTable: String
    /// The records' table, and its searched columns with their field bits.
    let recordsTable: String
    let columns: [(field: UInt64, name: String)]
    /// The kind's number in `search_pending`, and its `meta` key of the highest indexed id.
    let kind: Int64
    let throughKey: String
    /// How many times ``foldCount`` pending records a write leaves before it folds them itself
    /// (a search that checks ``foldCount`` of them folds them after its page: see `SearchIndex+Pending.swift`).
    /// Messages: 8, so that a run of sends with no search between pays one fold of 4 096 short
    /// texts instead of eight of 512 (a fold costs less per record the more it takes in).
    /// Articles: 1, their texts are long (a search checks pending texts directly).
    let writeFoldFactor: Int64
    /// What ``pendingState(_:)`` runs (made once: a write reads it before every commit, and text
    /// built at each call cost the statement cache a fresh string to hash).
    let pendingStateSQL: String
    /// The number of the kind's removed records in `search_pending`, and its `meta` key of how many
    /// there are (see `SearchIndex+Pending.swift`).
    var removedKind: Int64 { kind + 2 }
    let removedKey: String

    init(gramsTable: String, blocksTable: String, recordsTable: String, columns: [(field: UInt64, name: String)], kind: Int64,
         throughKey: String, writeFoldFactor: Int64 = 1) {
        (self.gramsTable, self.blocksTable, self.recordsTable, self.columns) = (gramsTable, blocksTable, recordsTable, columns)
        (self.kind, self.throughKey, self.writeFoldFactor) = (kind, throughKey, writeFoldFactor)
        removedKey = recordsTable == "articles" ? "article_search_removed" : "message_search_removed"
        pendingStateSQL = """
            SELECT coalesce((SELECT value FROM meta WHERE key = '\(throughKey)'), 0), (SELECT coalesce(max(id), 0) FROM \(recordsTable)),
                (SELECT count(*) FROM search_pending WHERE kind = \(kind)), coalesce((SELECT value FROM meta WHERE key = '\(removedKey)'), 0)
            """
    }

    static let articles = SearchIndex(gramsTable: "article_grams", blocksTable: "article_blocks", recordsTable: "articles",
                                      columns: [(title, "title"), (content, "content")], kind: 0, throughKey: "article_search_through")
    static let messages = SearchIndex(gramsTable: "message_grams", blocksTable: "message_blocks", recordsTable: "messages",
                                      columns: [(content, "content")], kind: 1, throughKey: "message_search_through",
                                      writeFoldFactor: 8)

    /// `SELECT id, <searched columns> FROM <records>`.
    var selectTexts: String { "SELECT id, \(columns.map(\.name).joined(separator: ", ")) FROM \(recordsTable)" }

    /// The field bits of a gram.
    static let title: UInt64 = 0
    static let content: UInt64 = 1

    /// One record's indexed text, field by field.
    struct Document {
        var id: Int64
        var fields: [(field: UInt64, text: String)]
    }

    // MARK: - Writing

    /// Indexes the records with ids above `through` (above every id already indexed, as new
    /// rows' ids are), read from their table in one pass. Returns the highest id indexed (or
    /// `through`). O(their text + grams touched · log g).
    func addRecords(_ db: Connection, after through: Int64, below end: Int64 = .max) throws -> Int64 {
        let stmt = try db.prepare("\(selectTexts) WHERE id > ? AND id < ? ORDER BY id")
        stmt.bind(1, through).bind(2, end)
        defer { stmt.reset() }
        var builder = KeyBuilder()
        defer { builder.release() }
        var accumulator = PostingAccumulator(expectedGrams: 1 << 12)
        defer { accumulator.release() }
        var last = through
        while try stmt.step() {
            last = stmt.int64(0)
            for (k, (field, _)) in columns.enumerated() {
                stmt.withUTF8(Int32(k + 1)) { builder.build($0, fold: true) }
                accumulator.add(key: builder.key, field: field, id: last)
            }
        }
        guard !accumulator.isEmpty else { return last }
        try write(db, accumulator, indexIsEmpty: try isEmpty(db))
        return last
    }

    /// True when the index holds no gram. O(1).
    func isEmpty(_ db: Connection) throws -> Bool {
        try Store.scalar(db, "SELECT count(*) FROM (SELECT 1 FROM \(gramsTable) LIMIT 1)") == 0
    }

    /// Removes many records' entries, given the grams the index holds for each: one by one for a
    /// few, else gram by gram in key order, each gram's blocks read once and only those holding a
    /// removed id written back. O(grams touched · their postings).
    func remove(_ db: Connection, _ records: [(id: Int64, grams: Set<UInt64>)]) throws {
        if records.count <= 8 {
            for record in records {
                for gram in record.grams.sorted() { try remove(db, record.id, gram: gram) }
            }
            return
        }
        var removed: [UInt64: [Int64]] = [:]
        for record in records {
            for gram in record.grams { removed[gram, default: []].append(record.id) }
        }
        for (gram, ids) in removed.sorted(by: { $0.key < $1.key }) {
            try remove(db, ids.sorted(), gram: gram)
        }
    }

    /// Removes the ascending `ids` from the postings of `gram`: the blocks holding one of them are
    /// rewritten (a block keeps its key while its first id stays), the others are not touched.
    private func remove(_ db: Connection, _ ids: [Int64], gram: UInt64) throws {
        guard var row = try gramRow(db, gram) else { return }
        var gone = 0
        var next = 0  // the first of `ids` not yet passed
        /// Drops the ids of `list` that are in `ids` (from `next` on), keeping `next` for the lists after it.
        func filter(_ list: inout [Int64]) -> Bool {
            guard let last = list.last else { return false }
            while next < ids.count && ids[next] < list[0] { next += 1 }
            guard next < ids.count && ids[next] <= last else { return false }
            var kept = 0
            for id in list {
                while next < ids.count && ids[next] < id { next += 1 }
                if next < ids.count && ids[next] == id { next += 1; continue }
                list[kept] = id
                kept += 1
            }
            gone += list.count - kept
            let changed = kept < list.count
            list.removeSubrange(kept...)
            return changed
        }
        if Int64(row.tail.count) < row.df {
            let blocks = try db.prepare("SELECT first, ids FROM \(blocksTable) WHERE gram = ? AND first <= ? ORDER BY first")
            blocks.bind(1, Int64(gram)).bind(2, ids[ids.count - 1])
            var rewritten: [(first: Int64, ids: [Int64])] = []
            var block: [Int64] = []
            while next < ids.count, try blocks.step() {
                block.removeAll(keepingCapacity: true)
                blocks.withBlob(1) { Postings.decode($0, into: &block) }
                if filter(&block) { rewritten.append((blocks.int64(0), block)) }
            }
            blocks.reset()
            for (first, kept) in rewritten {
                if kept.first != first { try deleteBlock(db, gram, first: first) }
                if let head = kept.first {
                    let put = try db.prepare("INSERT OR REPLACE INTO \(blocksTable)(gram, first, ids) VALUES (?, ?, ?)")
                    put.bind(1, Int64(gram)).bind(2, head).bind(3, blob: Postings.encode(kept))
                    try put.run()
                }
            }
        }
        _ = filter(&row.tail)
        guard gone > 0 else { return }
        if row.df - Int64(gone) <= 0 {
            try dropGram(db, gram)
        } else {
            try putGram(db, gram, df: row.df - Int64(gone), tail: row.tail)
        }
    }

    /// Moves record `id`'s entries from the grams `before` to the grams `after`: only grams that
    /// appear or disappear are touched.
    func replace(_ db: Connection, _ id: Int64, from before: Set<UInt64>, to after: Set<UInt64>) throws {
        for gram in before.subtracting(after).sorted() { try remove(db, id, gram: gram) }
        for gram in after.subtracting(before).sorted() { try insert(db, id, gram: gram) }
    }

    /// Drops the whole index and builds it again from the stored records. O(total text + postings).
    ///
    /// (Run by migration 0003 too, before `search_pending` exists: the caller clears that.)
    func rebuild(_ db: Connection) throws {
        try db.execute("DELETE FROM \(gramsTable); DELETE FROM \(blocksTable)")
        _ = try addRecords(db, after: Int64.min)
        try setIndexedThrough(db, try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM \(recordsTable)"))
    }

    static func grams(of document: Document) -> Set<UInt64> {
        var builder = KeyBuilder()
        defer { builder.release() }
        var grams: [UInt64] = []
        sortedGrams(of: document, builder: &builder, into: &grams)
        return Set(grams)
    }

    /// Replaces `grams` with the document's grams, ascending and each once (`builder` is scratch).
    static func sortedGrams(of document: Document, builder: inout KeyBuilder, into grams: inout [UInt64]) {
        grams.removeAll(keepingCapacity: true)
        for (field, text) in document.fields {
            var text = text
            text.withUTF8 { builder.build($0, fold: true) }
            let key = builder.key
            guard let last = key.last else { continue }
            for j in 0..<(key.count - 1) { grams.append(Gram.make(key[j], UInt64(key[j + 1]), field: field)) }
            grams.append(Gram.make(last, Gram.end, field: field))
        }
        grams.sort()
        var kept = 0
        for gram in grams where kept == 0 || grams[kept - 1] != gram {
            grams[kept] = gram
            kept += 1
        }
        grams.removeSubrange(kept...)
    }

    /// Writes accumulated postings in gram order. Into an empty index, plain inserts; otherwise
    /// each gram's new ids (above all its ids) are appended to its tail by an upsert, and a tail
    /// that grew too long is moved into blocks. The gram rows go the backend's
    /// ``StoreSQL/SearchTables/batch`` a statement. What each gram's rows hold is prepared a
    /// segment ahead on another thread (``GramRows``): this one only binds and steps.
    func write(_ db: Connection, _ accumulator: PostingAccumulator, indexIsEmpty: Bool) throws {
        let sql = kind == SearchIndex.articles.kind ? db.sql.articleIndex : db.sql.messageIndex
        var rows: [(gram: UInt64, df: Int64, tail: [UInt8])] = []
        rows.reserveCapacity(sql.batch)
        let prepared = GramRows(accumulator)
        defer { prepared.stop() }
        while let segment = prepared.next() {
            for gram in segment {
                if let blocks = gram.blocks {
                    // Too long for a tail: into blocks at once (appended to a tail, it would be
                    // written as a long row only to be read back and spilled).
                    guard indexIsEmpty else {
                        try appendBlocks(db, gram)
                        continue
                    }
                    for block in blocks { try putBlock(db, gram.gram, first: block.first, block.bytes) }
                }
                rows.append((gram.gram, Int64(gram.count), gram.tail))
                if rows.count == sql.batch {
                    try putGrams(db, sql, rows, append: !indexIsEmpty)
                    rows.removeAll(keepingCapacity: true)
                }
            }
        }
        try putGrams(db, sql, rows, append: !indexIsEmpty)
    }

    /// Inserts (or with `append`, appends to) gram rows: `sql.batch` a statement, the rest by
    /// powers of two. A tail an append made longer than a block is moved into blocks.
    private func putGrams(_ db: Connection, _ sql: StoreSQL.SearchTables, _ rows: [(gram: UInt64, df: Int64, tail: [UInt8])],
                          append: Bool) throws {
        var start = 0
        var spilled: [UInt64] = []
        while start < rows.count {
            var power = sql.insertGrams.count - 1
            while 1 << power > rows.count - start { power -= 1 }
            let stmt = try db.prepare(append ? sql.appendGrams[power] : sql.insertGrams[power])
            for k in 0..<(1 << power) {
                let row = rows[start + k], at = Int32(3 * k)
                stmt.bind(at + 1, Int64(bitPattern: row.gram)).bind(at + 2, row.df).bind(at + 3, blob: row.tail)
            }
            if append {
                while try stmt.step() {
                    if stmt.int64(1) > Int64(Postings.blockBytes) { spilled.append(UInt64(bitPattern: stmt.int64(0))) }
                }
                stmt.reset()
            } else {
                try stmt.run()
            }
            start += 1 << power
        }
        for gram in spilled { try spill(db, gram) }
    }

    /// Adds ascending `ids`, above every id `gram` has, as blocks after its blocks: its tail and
    /// then `ids` (what appending them to the tail and spilling it leaves, without writing the
    /// long tail first).
    private func appendBlocks(_ db: Connection, _ gram: UInt64, _ ids: [Int64]) throws {
        let row = try gramRow(db, gram)
        let all = (row?.tail ?? []) + ids
        guard !all.isEmpty else { return }
        try putBlocks(db, gram, all)
        try putGram(db, gram, df: (row?.df ?? 0) + Int64(ids.count), tail: [])
    }

    /// ``appendBlocks(_:_:_:)`` of a long list's new ids: its blocks as prepared when the gram
    /// has no tail (they are then cut as the tail and ids together would be), else cut here.
    private func appendBlocks(_ db: Connection, _ gram: GramRows.Gram) throws {
        let row = try gramRow(db, gram.gram)
        if let tail = row?.tail, !tail.isEmpty {
            try putBlocks(db, gram.gram, tail, gaps: gram.gaps)
        } else {
            for block in gram.blocks ?? [] { try putBlock(db, gram.gram, first: block.first, block.bytes) }
        }
        try putGram(db, gram.gram, df: (row?.df ?? 0) + Int64(gram.count), tail: [])
    }

    /// Writes the ascending ids `ids` and then those `gaps` holds (stored format, all above them)
    /// as new blocks of `gram`, cut where ``Postings/chunks(_:)`` cuts them.
    private func putBlocks(_ db: Connection, _ gram: UInt64, _ ids: [Int64], gaps: [UInt8] = []) throws {
        var cutter = BlockCutter()
        for id in ids { cutter.add(id) }
        gaps.withUnsafeBytes { cutter.add(stored: $0) }
        for block in cutter.finish() { try putBlock(db, gram, first: block.first, block.bytes) }
    }

    /// Moves a gram's whole tail into blocks.
    private func spill(_ db: Connection, _ gram: UInt64) throws { try appendBlocks(db, gram, []) }

    /// Adds `id` (of a record that already had postings elsewhere) to the postings of `gram`.
    func insert(_ db: Connection, _ id: Int64, gram: UInt64) throws {
        guard var row = try gramRow(db, gram) else {
            try putGram(db, gram, df: 1, tail: [id])
            return
        }
        if let tailFirst = row.tail.first, id > tailFirst {
            guard insertSorted(id, into: &row.tail) else { return }
            try putGram(db, gram, df: row.df + 1, tail: row.tail)
            if Postings.tailSize(row.tail) > Postings.blockBytes { try spill(db, gram) }
            return
        }
        guard var block = try blockAtOrBefore(db, gram, id) ?? firstBlock(db, gram) else {
            // No blocks: everything is in the tail.
            guard insertSorted(id, into: &row.tail) else { return }
            try putGram(db, gram, df: row.df + 1, tail: row.tail)
            if Postings.tailSize(row.tail) > Postings.blockBytes { try spill(db, gram) }
            return
        }
        let oldFirst = block[0]
        guard insertSorted(id, into: &block) else { return }
        try deleteBlock(db, gram, first: oldFirst)
        for chunk in Postings.chunks(block) { try putBlock(db, gram, Array(chunk)) }
        try putGram(db, gram, df: row.df + 1, tail: row.tail)
    }

    /// Removes `id` from the postings of `gram`.
    func remove(_ db: Connection, _ id: Int64, gram: UInt64) throws {
        guard var row = try gramRow(db, gram) else { return }
        if let k = row.tail.firstIndex(of: id) {
            row.tail.remove(at: k)
        } else {
            guard var block = try blockAtOrBefore(db, gram, id), let k = block.firstIndex(of: id) else { return }
            let oldFirst = block[0]
            block.remove(at: k)
            try deleteBlock(db, gram, first: oldFirst)
            if !block.isEmpty { try putBlock(db, gram, block) }
        }
        if row.df <= 1 {
            try dropGram(db, gram)
        } else {
            try putGram(db, gram, df: row.df - 1, tail: row.tail)
        }
    }

    private func insertSorted(_ id: Int64, into ids: inout [Int64]) -> Bool {
        var lo = 0, hi = ids.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids[mid] < id { lo = mid + 1 } else { hi = mid }
        }
        if lo < ids.count && ids[lo] == id { return false }
        ids.insert(id, at: lo)
        return true
    }

    /// Deletes `gram`'s row and its blocks: no record holds it any more.
    private func dropGram(_ db: Connection, _ gram: UInt64) throws {
        for table in [gramsTable, blocksTable] {
            let stmt = try db.prepare("DELETE FROM \(table) WHERE gram = ?")
            stmt.bind(1, Int64(gram))
            try stmt.run()
        }
    }

    private func putGram(_ db: Connection, _ gram: UInt64, df: Int64, tail: [Int64]) throws {
        let stmt = try db.prepare("INSERT OR REPLACE INTO \(gramsTable)(gram, df, tail) VALUES (?, ?, ?)")
        stmt.bind(1, Int64(gram)).bind(2, df).bind(3, blob: Postings.encodeTail(tail))
        try stmt.run()
    }

    private func putBlock(_ db: Connection, _ gram: UInt64, _ ids: [Int64]) throws {
        try putBlock(db, gram, first: ids[0], Postings.encode(ids))
    }

    /// Inserts a block whose first id is `first`, `encoded` in the stored format.
    private func putBlock(_ db: Connection, _ gram: UInt64, first: Int64, _ encoded: [UInt8]) throws {
        let stmt = try db.prepare("INSERT INTO \(blocksTable)(gram, first, ids) VALUES (?, ?, ?)")
        stmt.bind(1, Int64(gram)).bind(2, first).bind(3, blob: encoded)
        try stmt.run()
    }

    private func deleteBlock(_ db: Connection, _ gram: UInt64, first: Int64) throws {
        let stmt = try db.prepare("DELETE FROM \(blocksTable) WHERE gram = ? AND first = ?")
        stmt.bind(1, Int64(gram)).bind(2, first)
        try stmt.run()
    }

    private func blockAtOrBefore(_ db: Connection, _ gram: UInt64, _ id: Int64) throws -> [Int64]? {
        try db.prepare("SELECT ids FROM \(blocksTable) WHERE gram = ? AND first <= ? ORDER BY first DESC LIMIT 1")
            .bind(1, Int64(gram)).bind(2, id).first(Self.blockIDs)
    }

    private func firstBlock(_ db: Connection, _ gram: UInt64) throws -> [Int64]? {
        try db.prepare("SELECT ids FROM \(blocksTable) WHERE gram = ? ORDER BY first LIMIT 1").bind(1, Int64(gram)).first(Self.blockIDs)
    }

    /// The ids of a block row (its column 0).
    private static func blockIDs(_ stmt: Statement) -> [Int64] {
        var ids: [Int64] = []
        stmt.withBlob(0) { Postings.decode($0, into: &ids) }
        return ids
    }

    // MARK: - Reading

    struct GramRow {
        var df: Int64
        var tail: [Int64]
    }

    func gramRow(_ db: Connection, _ gram: UInt64) throws -> GramRow? {
        try db.prepare("SELECT df, tail FROM \(gramsTable) WHERE gram = ?").bind(1, Int64(gram)).first { stmt in
            var tail: [Int64] = []
            stmt.withBlob(1) { Postings.decodeTail($0, into: &tail) }
            return GramRow(df: stmt.int64(0), tail: tail)
        }
    }

    /// How many records have `gram`. O(log g).
    func documentFrequency(_ db: Connection, _ gram: UInt64) throws -> Int64 {
        let stmt = try db.prepare("SELECT df FROM \(gramsTable) WHERE gram = ?")
        stmt.bind(1, Int64(gram))
        defer { stmt.reset() }
        return try stmt.step() ? stmt.int64(0) : 0
    }

    /// The ids of the records that have `gram`, ascending. O(log g + df).
    func postings(_ db: Connection, _ gram: UInt64) throws -> [Int64] {
        guard let row = try gramRow(db, gram) else { return [] }
        if Int64(row.tail.count) >= row.df { return row.tail }
        var ids: [Int64] = []
        ids.reserveCapacity(Int(row.df))
        let stmt = try db.prepare("SELECT ids FROM \(blocksTable) WHERE gram = ? ORDER BY first")
        stmt.bind(1, Int64(gram))
        while try stmt.step() { stmt.withBlob(0) { Postings.decode($0, into: &ids) } }
        ids.append(contentsOf: row.tail)
        return ids
    }

    /// A statement over the grams in `range` and their document frequencies, in gram order.
    func gramsStatement(_ db: Connection, in range: Range<Int64>) throws -> Statement {
        let stmt = try db.prepare("SELECT gram, df FROM \(gramsTable) WHERE gram >= ? AND gram < ? ORDER BY gram")
        stmt.bind(1, range.lowerBound).bind(2, range.upperBound)
        return stmt
    }

    /// The grams in `range` with their document frequencies, in gram order.
    func grams(_ db: Connection, in range: Range<Int64>) throws -> [(gram: UInt64, df: Int64)] {
        let stmt = try gramsStatement(db, in: range)
        var out: [(gram: UInt64, df: Int64)] = []
        while try stmt.step() { out.append((UInt64(stmt.int64(0)), stmt.int64(1))) }
        return out
    }
}
