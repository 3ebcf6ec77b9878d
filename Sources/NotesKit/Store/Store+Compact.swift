/// What ``Store/compact(retainMilliseconds:)`` did.
public struct CompactReport: Equatable, Sendable {
    /// Changes removed from the feed: each was superseded by a newer change of the same record.
    public var changesRemoved: Int
    /// Changes the feed holds after the compaction.
    public var changesKept: Int
    /// Bytes of the store file given back (freed pages times the page size): 0 when the free pages
    /// were under a quarter of the file and stay for later writes. In WAL mode the file itself
    /// shrinks at the next checkpoint.
    public var bytesFreed: Int64
    /// The compaction horizon: a superseded change with a seq up to this one was removed. A
    /// reader whose `since` is below it reads the compacted feed (each record's latest change).
    public var horizon: Int64

    public init(changesRemoved: Int, changesKept: Int, bytesFreed: Int64, horizon: Int64) {
        self.changesRemoved = changesRemoved
        self.changesKept = changesKept
        self.bytesFreed = bytesFreed
        self.horizon = horizon
    }
}

extension Store {
    /// Compacts the change feed and gives the freed pages back to the file system.
    ///
    /// Removes every change that a newer change of the same record supersedes — as CouchDB's feed
    /// keeps only each document's latest change — except those that a commit still being handed to
    /// a subscriber needs, and those recorded within the last `retainMilliseconds` (a retention
    /// window; 0 keeps none of them). The latest change of every record stays, deletes included
    /// (tombstones), so a reader at any `since` gets every record changed after it: one whose
    /// `since` is older than the removed changes reads the compacted feed (the latest change of
    /// each such record, e.g. an `update` without its `create`), never a silent gap.
    ///
    /// Then gives freed pages back to the file system when they are at least a quarter of the file:
    /// by a `VACUUM` after the transaction, which rewrites the file (and needs as much free disk
    /// again); below that they stay in the file for later writes to reuse, and `bytesFreed` is 0.
    /// (A store made in incremental auto-vacuum mode, before NotesKit stopped making them so, runs
    /// `PRAGMA incremental_vacuum` in the transaction instead, whatever it freed.) One write
    /// transaction, O(n) in the feed's changes, plus the `VACUUM` when one is due.
    public func compact(retainMilliseconds: Int64 = 0) throws -> CompactReport {
        guard retainMilliseconds >= 0 else {
            throw NotesError.validation("retain", "the retention window must be 0 or more, got \(retainMilliseconds) ms")
        }
        let pinned = oldestPinnedSeq
        var report = try write { tx -> CompactReport in
            let db = tx.connection
            let last = try Feed.lastSeq(db)
            var horizon = last
            if let pinned { horizon = min(horizon, pinned - 1) }
            if retainMilliseconds > 0 {
                let cutoff = tx.now.milliseconds - min(retainMilliseconds, tx.now.milliseconds - Timestamp.range.lowerBound)
                let stmt = try db.prepare(db.sql.feed.firstSeqSince)
                stmt.bind(1, cutoff)
                if try stmt.step() { horizon = min(horizon, stmt.int64(0) - 1) }
                stmt.reset()
            }
            let (removed, kept) = try Store.compactFeed(db, through: horizon)
            let meta = try db.prepare(db.sql.meta.raise)
            meta.bind(1, "feed_horizon").bind(2, horizon)
            try meta.run()
            let freed = try db.database.reclaimSpace()
            return CompactReport(changesRemoved: removed, changesKept: kept, bytesFreed: freed ?? -1, horizon: horizon)
        }
        if report.bytesFreed < 0 {  // -1: the backend frees space only outside a transaction
            report.bytesFreed = try read { db in try db.database.reclaimSpaceOutsideTransaction() }
        }
        return report
    }

    /// Removes each change with a seq up to `horizon` that a newer change of the same record
    /// supersedes. Walks the feed newest first, remembering the records seen; a row that loses
    /// changes is written again (its contiguous stretches as rows of their own). Returns the
    /// changes removed and kept.
    static func compactFeed(_ db: Connection, through horizon: Int64) throws -> (removed: Int, kept: Int) {
        var seen: [Set<Int64>] = [[], [], []]
        var removed = 0, kept = 0
        var emptied: [Int64] = []
        var rewritten: [(row: FeedRow, keep: [FeedEntry])] = []
        let walk = try db.prepare(db.sql.feed.rowsNewestFirst)
        while try walk.step() {
            let row = FeedRow(walk)
            guard row.kind >= 0 && row.kind < 9 else { throw Feed.damaged("an unknown kind \(row.kind)") }
            let e = Int(row.kind % 3)
            var dropped = Set<Int64>()  // seqs of superseded changes that may go
            if row.entries == nil {
                // A contiguous run (a bulk write): looked at without listing it.
                guard row.lastSeq >= row.seq else { throw Feed.damaged("row \(row.seq) ends before it starts") }
                for k in stride(from: row.lastSeq - row.seq, through: 0, by: -1) {
                    if !seen[e].insert(row.entityId + k).inserted && row.seq + k <= horizon { dropped.insert(row.seq + k) }
                }
                if dropped.isEmpty {
                    kept += Int(row.lastSeq - row.seq + 1)
                    continue
                }
            }
            let entries = try row.all()
            var keep: [FeedEntry] = []
            keep.reserveCapacity(entries.count)
            for entry in entries.reversed() {
                if row.entries == nil {
                    if dropped.contains(entry.seq) { continue }
                } else if !seen[e].insert(entry.id).inserted && entry.seq <= horizon {
                    continue
                }
                keep.append(entry)
            }
            removed += entries.count - keep.count
            kept += keep.count
            if keep.isEmpty {
                emptied.append(row.seq)
            } else if keep.count < entries.count {
                rewritten.append((row, keep.reversed()))
            }
        }
        walk.reset()
        let delete = try db.prepare(db.sql.feed.delete)
        try delete.run(eachBinding: emptied)
        for (row, keep) in rewritten {
            delete.bind(1, row.seq)
            try delete.run()
            delete.reset()
            try writeRows(db, like: row, keep)
        }
        return (removed, kept)
    }

    /// Writes `entries` (in seq order) as feed rows of `row`'s kind, revision and instant: each
    /// contiguous stretch of 16 or more changes as a row of its own, the others listed.
    static func writeRows(_ db: Connection, like row: FeedRow, _ entries: [FeedEntry]) throws {
        var run = FeedRun()
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count, entries[end].seq == entries[end - 1].seq + 1, entries[end].id == entries[end - 1].id + 1 { end += 1 }
            let stretch = entries[start..<end]
            if stretch.count >= 16 { try run.write(db) }
            for entry in stretch {
                if !run.accepts(kind: row.kind, revision: row.revision, at: row.at) { try run.write(db) }
                run.append(kind: row.kind, revision: row.revision, at: row.at, seq: entry.seq, id: entry.id, uid: entry.uid)
            }
            if stretch.count >= 16 { try run.write(db) }
            start = end
        }
        try run.write(db)
    }
}
