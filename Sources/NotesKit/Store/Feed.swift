/// The change feed as stored: table `feed` (migration `0005_compact_rows_and_feed`).
///
/// One row holds a run of changes of one kind (entity and operation), one revision and one
/// instant, made in one transaction: seqs `seq…last_seq`, records from `entity_id` on. A bulk
/// write (create_many, insert_many, an import, a conversation deleted with its messages) is
/// therefore a handful of rows, not one per record, while ``Store/changes(since:limit:)`` still
/// hands out one ``Change`` per record.
///
/// - `entries` NULL: the row's k-th change is seq `seq + k` of record `entity_id + k` (a
///   contiguous run, which bulk creates are: 0 bytes a record). Otherwise it lists each change as
///   two varints: the seq's distance from the previous change's (0 for the first) and the
///   zigzag-coded difference of its record id from the previous one's (from `entity_id`).
/// - `uids` holds the 16-byte uid of each change of a delete (the record is gone); creates and
///   updates read their uid from the record itself, or, when it was deleted since, from its
///   delete (the tombstone, which compaction never removes).
/// - `revision` is the articles' revision after the change (every change of the row has it).
enum Feed {
    static let entities = ["article", "conversation", "message"]
    static let operations: [Change.Operation] = [.create, .update, .delete]
    /// At most this many changes in a row with `entries` or `uids`, so that rewriting one during a
    /// compaction stays small.
    static let maxListedEntries = 65_536

    static func kind(_ entity: String, _ operation: Change.Operation) -> Int64? {
        guard let e = entities.firstIndex(of: entity), let o = operations.firstIndex(of: operation) else { return nil }
        return Int64(o * 3 + e)
    }

    /// The seq of the newest change, 0 for a store without any. O(log n).
    static func lastSeq(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, db.sql.feed.lazy?.lastSeq ?? db.sql.feed.lastSeq)
    }

    /// The last seq of the newest row: ``lastSeq(_:)`` where no run of sends is open (in a write
    /// transaction that closed it). O(log n).
    static func lastRowSeq(_ db: Connection) throws -> Int64 {
        try Store.scalar(db, db.sql.feed.lastSeq)
    }

    /// The changes after `since`, oldest first, at most `limit`. With `uids` false, each change's
    /// uid is left empty (for the layout, which needs only ids and revisions). O(log n + limit).
    /// Where the feed has a run of sends (``LazySends``), call it in one read snapshot.
    static func changes(_ db: Connection, since: Int64, limit: Int, uids: Bool) throws -> [Change] {
        var out: [Change] = []
        out.reserveCapacity(min(limit, 1_024))
        func take(_ row: FeedRow) throws {
            guard let entity = row.entity, let operation = row.operation else { throw damaged("an unknown kind \(row.kind)") }
            try row.forEach(after: since) { seq, id, index in
                out.append(Change(seq: seq, entity: entity, operation: operation, entityId: id, uid: row.uid(index) ?? "",
                                  revision: row.revision, at: Timestamp(milliseconds: row.at)))
                return out.count < limit
            }
        }
        // The row that starts at or before `since` may run past it.
        let before = try db.prepare(db.sql.feed.rowAtOrBefore)
        before.bind(1, since)
        if try before.step(), before.int64(1) > since { try take(FeedRow(before)) }
        before.reset()
        if out.count < limit {
            let after = try db.prepare(db.sql.feed.rowsAfter)
            after.bind(1, since)
            while out.count < limit, try after.step() { try take(FeedRow(after)) }
            after.reset()
        }
        // Then the open run of sends, whose changes are above every row's.
        if out.count < limit, since < .max, let lazy = db.sql.feed.lazy, let start = try LazySends.start(db, lazy) {
            let message = entities[2]
            try LazySends.forEach(db, lazy, start: start, from: since + 1) { seq, id, at in
                out.append(Change(seq: seq, entity: message, operation: .create, entityId: id, uid: "", revision: nil,
                                  at: Timestamp(milliseconds: at)))
                return out.count < limit
            }
        }
        if uids { try resolveUIDs(db, &out) }
        return out
    }

    /// Fills in the uid of each create and update: from its record (the records of an entity read
    /// in one statement per 1 000, not one per change: a statement may be a round trip to a
    /// server), or from the record's tombstone when it was deleted since.
    static func resolveUIDs(_ db: Connection, _ changes: inout [Change]) throws {
        var wanted: [Int: [Int]] = [:]  // entity index -> positions in `changes`
        for (n, change) in changes.enumerated() where change.operation != .delete {
            guard let e = entities.firstIndex(of: change.entity) else { continue }
            wanted[e, default: []].append(n)
        }
        var missing: [Int: [Int]] = [:]
        for (e, positions) in wanted.sorted(by: { $0.key < $1.key }) {
            var found: [Int64: String] = [:]
            let ids = Array(Set(positions.map { changes[$0].entityId })).sorted()
            var start = 0
            while start < ids.count {
                let stmt = try db.prepare(db.sql.feed.uidsByIDs[e])
                stmt.bind(1, ids[start..<min(start + 1_000, ids.count)].map(String.init).joined(separator: ","))
                while try stmt.step() { found[stmt.int64(0)] = stmt.uid(1) }
                stmt.reset()
                start += 1_000
            }
            for n in positions {
                if let uid = found[changes[n].entityId] {
                    changes[n].uid = uid
                } else {
                    missing[e, default: []].append(n)
                }
            }
        }
        for (e, positions) in missing {
            var needed = Set(positions.map { changes[$0].entityId })
            var found: [Int64: String] = [:]
            let deletes = try db.prepare(db.sql.feed.deletesAfter)
            deletes.bind(1, Int64(6 + e)).bind(2, changes[positions[0]].seq)
            while !needed.isEmpty, try deletes.step() {
                let row = FeedRow(deletes)
                try row.forEach(after: 0) { _, id, index in
                    if needed.remove(id) != nil, let uid = row.uid(index) { found[id] = uid }
                    return !needed.isEmpty
                }
            }
            deletes.reset()
            for n in positions {
                guard let uid = found[changes[n].entityId] else {
                    throw damaged("\(changes[n].entity) \(changes[n].entityId) is neither stored nor deleted")
                }
                changes[n].uid = uid
            }
        }
    }

    static func damaged(_ what: String) -> NotesError {
        NotesError(.corrupt, "the store's change feed is damaged (\(what)); restore the store from a backup")
    }
}

/// One stored feed row.
struct FeedRow {
    var seq: Int64
    var lastSeq: Int64
    var kind: Int64
    var entityId: Int64
    var at: Int64
    var revision: Int64?
    var entries: [UInt8]?
    var uids: [UInt8]?

    init(_ stmt: Statement) {
        seq = stmt.int64(0)
        lastSeq = stmt.int64(1)
        kind = stmt.int64(2)
        entityId = stmt.int64(3)
        at = stmt.int64(4)
        revision = stmt.optionalInt64(5)
        entries = stmt.optionalBlob(6)
        uids = stmt.optionalBlob(7)
    }

    var entity: String? { kind >= 0 && kind < 9 ? Feed.entities[Int(kind % 3)] : nil }
    var operation: Change.Operation? { kind >= 0 && kind < 9 ? Feed.operations[Int(kind / 3)] : nil }

    /// The uid of the row's `index`-th change, when the row stores it (deletes).
    func uid(_ index: Int) -> String? {
        guard let uids, uids.count >= (index + 1) * 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for k in 0..<8 {
            high = high << 8 | UInt64(uids[index * 16 + k])
            low = low << 8 | UInt64(uids[index * 16 + 8 + k])
        }
        return UID.text(high: high, low: low)
    }

    /// Calls `body(seq, id, index)` for each change with a seq above `since`, in order, until it
    /// returns false. A malformed `entries` list is `.corrupt`.
    func forEach(after since: Int64, _ body: (Int64, Int64, Int) throws -> Bool) throws {
        guard let entries else {
            guard lastSeq >= seq else { throw Feed.damaged("row \(seq) ends before it starts") }
            var k = since < seq ? 0 : since - seq + 1
            while seq + k <= lastSeq {
                guard try body(seq + k, entityId + k, Int(k)) else { return }
                k += 1
            }
            return
        }
        var reader = VarintReader(bytes: entries)
        var s = seq, id = entityId, index = 0
        while !reader.isAtEnd {
            guard let gap = reader.next(), let delta = reader.next() else { throw Feed.damaged("row \(seq) has a truncated list") }
            s &+= Int64(bitPattern: gap)
            id &+= Int64(bitPattern: delta >> 1) ^ -Int64(bitPattern: delta & 1)
            if s > since { guard try body(s, id, index) else { return } }
            index += 1
        }
    }

    /// Every change of the row: (seq, id, uid bytes or nil).
    func all() throws -> [FeedEntry] {
        var out: [FeedEntry] = []
        try forEach(after: .min) { seq, id, index in
            out.append(FeedEntry(seq: seq, id: id, uid: uids.map { Array($0[(index * 16)..<min($0.count, index * 16 + 16)]) }))
            return true
        }
        return out
    }
}

struct FeedEntry {
    var seq: Int64
    var id: Int64
    var uid: [UInt8]?
}

/// A run of changes being gathered into one feed row: same kind, revision and instant.
struct FeedRun {
    private(set) var kind: Int64 = -1
    private(set) var revision: Int64?
    private(set) var at: Int64 = 0
    private(set) var firstSeq: Int64 = 0
    private(set) var lastSeq: Int64 = 0
    private(set) var firstId: Int64 = 0
    private(set) var lastId: Int64 = 0
    private(set) var count = 0
    /// nil while the run is contiguous (seq and id both +1 each change).
    private var entries: [UInt8]?
    private var uids: [UInt8]?

    var isEmpty: Bool { count == 0 }

    /// Whether a change of this kind, revision and instant can join the run.
    func accepts(kind: Int64, revision: Int64?, at: Int64) -> Bool {
        guard count > 0 else { return true }
        guard kind == self.kind, revision == self.revision, at == self.at else { return false }
        return (entries == nil && uids == nil) || count < Feed.maxListedEntries
    }

    /// Whether the next change would keep the run contiguous.
    func continues(seq: Int64, id: Int64) -> Bool {
        count == 0 || (entries == nil && seq == lastSeq + 1 && id == lastId + 1)
    }

    /// Adds a change (call ``accepts(kind:revision:at:)`` first). `uid` is the 16 bytes of a
    /// delete's record, nil for creates and updates.
    mutating func append(kind: Int64, revision: Int64?, at: Int64, seq: Int64, id: Int64, uid: [UInt8]?) {
        if count == 0 {
            self.kind = kind
            self.revision = revision
            self.at = at
            firstSeq = seq
            firstId = id
        } else if !continues(seq: seq, id: id) {
            if entries == nil {
                // List the contiguous changes so far, then go on listing.
                var list: [UInt8] = []
                list.reserveCapacity(count * 2 + 16)
                for k in 0..<count { VarintReader.append(k == 0 ? 0 : 1, &list); VarintReader.append(k == 0 ? 0 : 2, &list) }
                entries = list
            }
            VarintReader.append(UInt64(bitPattern: seq &- lastSeq), &entries!)
            let delta = id &- lastId
            VarintReader.append(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)), &entries!)
        } else if entries != nil {
            VarintReader.append(1, &entries!)
            VarintReader.append(2, &entries!)
        }
        if let uid {
            if uids == nil { uids = [] }
            uids!.append(contentsOf: uid)
        }
        lastSeq = seq
        lastId = id
        count += 1
    }

    /// Writes the run as one row and empties it.
    mutating func write(_ db: Connection) throws {
        guard count > 0 else { return }
        let stmt = try db.prepare(db.sql.feed.insert)
        stmt.bind(1, firstSeq).bind(2, lastSeq).bind(3, kind).bind(4, firstId).bind(5, at).bind(6, revision)
        if let entries { stmt.bind(7, blob: entries) } else { stmt.bind(7, nil as Int64?) }
        if let uids { stmt.bind(8, blob: uids) } else { stmt.bind(8, nil as Int64?) }
        try stmt.run()
        self = FeedRun()
    }
}

/// Unsigned LEB128 varints, bounds-checked.
struct VarintReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func next() -> UInt64? {
        var value: UInt64 = 0, shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let b = bytes[offset]
            offset += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    static func append(_ value: UInt64, _ out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }
}

/// The 16 bytes of a uid as the feed's tombstones hold them (all zeros for a malformed one).
func uidBytes(_ uid: String) -> [UInt8] {
    let (high, low) = UID.halves(uid) ?? (0, 0)
    return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
}

/// The run of sends that the feed of a SQLite store does not write row by row (a send would
/// otherwise write a feed row: one more b-tree page in every send's commit).
///
/// While only messages are added at the time of their write (`send`, `receive` and `insertMany`
/// without `sentAt`), `meta` keeps where the run starts: its first seq `seq0` and first message id
/// `id0`. Message `id ≥ id0` is then the create of seq `seq0 + id − id0` at its `sent_at` (the
/// write's time, as a feed row's `at`): the run's ids are contiguous, because new ids follow the
/// highest ever given out (`MessageIDFloor`) and nothing deletes a message while the run is open.
/// Every other write closes the run first, before it changes a row: the run's changes become feed
/// rows (one per instant) and the keys go. ``Feed/lastSeq(_:)`` counts the run (one statement) and
/// ``Feed/changes(_:since:limit:uids:)`` hands its changes out after the rows (in one read
/// snapshot), so what the feed tells is the same as with every change written; compaction is a
/// write, so it works on rows only. Migration `0010_lazy_sends` keeps older libraries, which do
/// not know the run, from opening such a store.
enum LazySends {
    static let seqKey = "feed_lazy_seq"
    static let idKey = "feed_lazy_id"
    static let kind = Feed.kind("message", .create)!

    /// The open run's first seq and first message id, and the highest message id; nil when no
    /// run is open. O(log n).
    static func head(_ db: Connection, _ sql: StoreSQL.SendRun) throws -> (seq: Int64, id: Int64, maxId: Int64)? {
        let stmt = try db.prepare(sql.head)
        defer { stmt.reset() }
        guard try stmt.step() else { return nil }
        return (stmt.int64(0), stmt.int64(1), stmt.int64(2))
    }

    /// The open run's first seq and first message id, or nil.
    static func start(_ db: Connection, _ sql: StoreSQL.SendRun) throws -> (seq: Int64, id: Int64)? {
        try head(db, sql).map { ($0.seq, $0.id) }
    }

    /// Calls `body(seq, id, sentAt)` for each change of the run from seq `from` on, in order,
    /// until it returns false. A message missing from the run is `.corrupt`.
    static func forEach(_ db: Connection, _ sql: StoreSQL.SendRun, start: (seq: Int64, id: Int64), from: Int64,
                        _ body: (Int64, Int64, Int64) throws -> Bool) throws {
        // (Wrapping arithmetic: `meta` edited by hand must not crash the process.)
        let (first, overflow) = start.id.addingReportingOverflow(from > start.seq ? from &- start.seq : 0)
        guard !overflow else { return }
        var id = first
        let stmt = try db.prepare(sql.messagesFrom)
        defer { stmt.reset() }
        stmt.bind(1, id)
        while try stmt.step() {
            guard stmt.int64(0) == id else { throw Feed.damaged("message \(id) of the run of sends from seq \(start.seq) is missing") }
            guard try body(start.seq &+ (id &- start.id), id, stmt.int64(1)) else { return }
            id &+= 1
        }
    }

    /// Writes the open run's changes as feed rows and closes it; nothing when none is open.
    static func close(_ db: Connection) throws {
        guard let sql = db.sql.feed.lazy, let start = try start(db, sql) else { return }
        var run = FeedRun()
        try forEach(db, sql, start: start, from: start.seq) { seq, id, at in
            if !run.accepts(kind: kind, revision: nil, at: at) { try run.write(db) }
            run.append(kind: kind, revision: nil, at: at, seq: seq, id: id, uid: nil)
            return true
        }
        try run.write(db)
        try db.prepare(sql.close).run()
    }
}
