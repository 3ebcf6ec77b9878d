#if canImport(Glibc)
import Glibc
#endif

/// The pending set: records a write left for the index to take in later, in one batch.
///
/// Writing a record's grams into the index costs one upsert per distinct gram, scattered over
/// the grams table: dozens of pages for one chat message. So a write leaves the index alone and
/// the record becomes *pending*, which costs nothing or one small row:
/// - a new record is pending because its id is above the kind's *indexed-through* id (kept in
///   `meta`; ids only grow): no write at all;
/// - an indexed record that is changed gets a row in `search_pending` (under the kind's number)
///   holding the grams the index has for it (its text as indexed), unless it has one already;
/// - an indexed record that is removed gets a row under the kind's *removed* number
///   (``SearchIndex/removedKind``), numbered in the order of removal, holding its id and those
///   grams, and `meta` counts them (``SearchIndex/removedKey``).
///
/// A search checks the new and changed records against the query directly (they are few) and
/// adds the matches to the index's candidates; the index's stale entries of changed or removed
/// records only cost a check (every candidate is checked against the stored text, and a removed
/// record has none), so a search never reads the removed records.
///
/// The pending set is *folded* into the index in a write transaction: the new records in one
/// batch (grams together, each gram's new ids appended once), the changed ones gram by gram, then
/// the indexed-through id moves up and their `search_pending` rows are emptied. A fold of k records
/// pays about what one batch import of k records pays; a write that leaves its records pending
/// pays O(1) pages. Who folds:
/// - a search whose index plan checks at least ``foldCount`` pending records of its kind folds
///   them right after it has its page (its own write transaction; not on a read-only handle), so
///   the searches that follow check none, and the writes between searches (a run of sends) pay
///   no fold at all;
/// - a write whose transaction leaves at least ``writeFoldFactor`` × ``foldCount`` pending records
///   of a kind (4 096 messages, 512 articles; ``foldCount`` while removed records are due, which
///   no search reads), or that wrote more than ``foldBytes`` of text, folds them before it
///   commits: the pending set a search checks stays bounded when nothing searches (or only
///   read-only handles do).
///
/// Removed records are taken out of the index with a fold only while they are *due*
/// (``PendingState/removalsDue``): while they are few, or once they are at least an eighth of the records
/// the index took in. Taking ids out of posting lists rewrites every block holding one, and a few
/// thousand records scattered over a large index (a bulk delete) hold one in nearly every block
/// of the frequent grams: removing them one bulk delete at a time would rewrite most of the index
/// each time, while waiting until they are an eighth of it makes each rewrite remove many ids per
/// block. Due removals count as pending records; the others wait and cost writes nothing.
extension SearchIndex {
    /// Pending records past which a search folds them in (a write: ``writeFoldFactor`` times as
    /// many): 512, or `NOTESKIT_SEARCH_FOLD` when set (for tests: `0` folds at every write, as an
    /// index without a pending set would).
    static var foldCount: Int64 {
        getenv("NOTESKIT_SEARCH_FOLD").flatMap { Int64(String(cString: $0)) } ?? 512
    }
    /// Text written by one transaction past which it folds (long texts are indexed at once, so
    /// the pending set a search checks stays small in bytes too: under 512 × 16 KiB).
    static let foldBytes = 16_384
    /// A long transaction (an import, a bulk insert) folds as it goes each time it has written this
    /// much text, so that the postings built in memory by one fold stay bounded whatever its size.
    static let foldChunkBytes = 16 << 20

    /// The highest id of the records the index has taken in (changed ones with their old text).
    /// O(1).
    func indexedThrough(_ db: Connection) throws -> Int64 { try Self.meta(db, throughKey) }

    func setIndexedThrough(_ db: Connection, _ id: Int64) throws { try Self.setMeta(db, throughKey, id) }

    /// The `meta` value of `key`, 0 when unset. O(1).
    static func meta(_ db: Connection, _ key: String) throws -> Int64 {
        let stmt = try db.prepare(db.sql.meta.get)
        stmt.bind(1, key)
        defer { stmt.reset() }
        return try stmt.step() ? stmt.int64(0) : 0
    }

    static func setMeta(_ db: Connection, _ key: String, _ value: Int64) throws {
        let stmt = try db.prepare(db.sql.meta.put)
        stmt.bind(1, key).bind(2, value)
        try stmt.run()
    }

    /// Notes that record `id`, whose text was `old`, is about to change or go: if the index has
    /// it, its grams are kept in `search_pending` (once: the first change keeps what the index
    /// holds). O(text + log n).
    func willChange(_ db: Connection, _ old: Document) throws {
        guard old.id <= (try indexedThrough(db)) else { return }
        var builder = KeyBuilder()
        defer { builder.release() }
        var grams: [UInt64] = []
        Self.sortedGrams(of: old, builder: &builder, into: &grams)
        let stmt = try db.prepare("INSERT INTO search_pending(kind, id, grams) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        stmt.bind(1, kind).bind(2, old.id).bind(3, blob: Postings.encode(grams.lazy.map { Int64(bitPattern: $0) }))
        try stmt.run()
    }

    /// Notes that the records `old`, whose texts were those, are gone: those the index has (and that
    /// are not pending as changed already: the fold finds those gone) are kept among the kind's
    /// removed records, each in a row holding its id and grams, numbered on from the kind's last
    /// one (so that a bulk delete appends its rows, instead of spreading them over the table).
    /// Returns how many were added. O(their text + k log n).
    func willRemove(_ db: Connection, _ old: [Document]) throws -> Int {
        let through = try indexedThrough(db)
        let last = try db.prepare("SELECT coalesce(max(id), 0) FROM search_pending WHERE kind = ?")
        last.bind(1, removedKind)
        var number = try last.step() ? last.int64(0) : 0
        last.reset()
        let changed = try db.prepare("SELECT 1 FROM search_pending WHERE kind = ? AND id = ?")
        let insert = try db.prepare("INSERT INTO search_pending(kind, id, grams) VALUES (?, ?, ?)")
        var builder = KeyBuilder()
        defer { builder.release() }
        var grams: [UInt64] = []
        var bytes: [UInt8] = []
        var added = 0
        for document in old where document.id <= through {
            changed.reset()
            changed.bind(1, kind).bind(2, document.id)
            let isChanged = try changed.step()
            changed.reset()
            if isChanged { continue }
            Self.sortedGrams(of: document, builder: &builder, into: &grams)
            bytes.removeAll(keepingCapacity: true)
            Postings.append(UInt64(bitPattern: document.id), to: &bytes)
            var previous: UInt64 = 0
            for gram in grams {
                Postings.append(gram - previous, to: &bytes)
                previous = gram
            }
            number += 1
            insert.reset()
            insert.bind(1, removedKind).bind(2, number).bind(3, blob: bytes)
            try insert.run()
            added += 1
        }
        return added
    }

    /// The record of a removed record's row (see ``willRemove(_:_:)``): its id, then its grams.
    static func removedRecord(_ bytes: UnsafeRawBufferPointer) -> (id: Int64, grams: Set<UInt64>) {
        var values: [Int64] = []
        Postings.decode(bytes, into: &values)  // the id, then the grams' running sums from it
        guard let id = values.first else { return (0, []) }
        return (id, Set(values.dropFirst().map { UInt64(bitPattern: $0 &- id) }))
    }

    /// How many removed records are pending (see ``willRemove(_:_:)``). O(1).
    func removedCount(_ db: Connection) throws -> Int64 { try Self.meta(db, removedKey) }

    func setRemovedCount(_ db: Connection, _ count: Int64) throws { try Self.setMeta(db, removedKey, count) }

    /// What a write's fold decision needs, read in one statement. O(log n + changed).
    struct PendingState {
        var through: Int64
        var newest: Int64
        var changed: Int64
        var removed: Int64

        /// True when the removed records are to be taken out of the index with the next fold:
        /// while they are few (at most ``SearchIndex/foldCount``: each costs a few blocks), or once
        /// they are at least an eighth of the records it took in (see the type's comment).
        var removalsDue: Bool { removed > 0 && (removed <= SearchIndex.foldCount || removed * 8 >= through) }

        /// The pending new and changed records (an upper bound: deleted new ids count too), with
        /// the removed ones when due.
        var count: Int64 { max(newest - through, 0) + changed + (removalsDue ? removed : 0) }
    }

    func pendingState(_ db: Connection) throws -> PendingState {
        let stmt = try db.prepare(pendingStateSQL)
        defer { stmt.reset() }
        guard try stmt.step() else { throw NotesError(.internalError, "the search index's pending state could not be read") }
        return PendingState(through: stmt.int64(0), newest: stmt.int64(1), changed: stmt.int64(2), removed: stmt.int64(3))
    }

    /// Statements over the pending records that exist, ascending by id, each selecting `id` and
    /// then the searched columns (see ``selectTexts``): the changed ones, then the new ones.
    /// O(log n + pending).
    func pendingRecords(_ db: Connection) throws -> [Statement] {
        let texts = columns.map { "r.\($0.name)" }.joined(separator: ", ")
        let changed = try db.prepare("SELECT r.id, \(texts) FROM search_pending p JOIN \(recordsTable) r ON r.id = p.id WHERE p.kind = ? ORDER BY p.id")
        changed.bind(1, kind)
        let new = try db.prepare("\(selectTexts) WHERE id > ? ORDER BY id")
        new.bind(1, try indexedThrough(db))
        return [changed, new]
    }

    /// Takes every pending new and changed record into the index, the new ones from `pipeline`'s
    /// postings when it holds exactly the new records above those pending from before (else read
    /// back from their table); with `removals`, takes the removed records out of it too.
    /// O(their text + grams touched · log g).
    func fold(_ db: Connection, pipeline: GramPipeline? = nil, removals: Bool) throws {
        // Changed and removed records (all at or below indexed-through): old grams to current ones.
        let changed = try db.prepare("SELECT id, grams FROM search_pending WHERE kind = ? ORDER BY id")
        changed.bind(1, kind)
        var rows: [(id: Int64, grams: Set<UInt64>)] = []
        while try changed.step() {
            var grams: [Int64] = []
            changed.withBlob(1) { Postings.decode($0, into: &grams) }
            rows.append((changed.int64(0), Set(grams.map { UInt64(bitPattern: $0) })))
        }
        changed.reset()
        var removed: [(id: Int64, grams: Set<UInt64>)] = []
        let current = try db.prepare("\(selectTexts) WHERE id = ?")
        for row in rows {
            current.reset()
            current.bind(1, row.id)
            guard try current.step() else { removed.append(row); continue }
            let document = Document(id: row.id, fields: columns.enumerated().map { k, column in (column.field, current.text(Int32(k + 1))) })
            current.reset()
            try replace(db, row.id, from: row.grams, to: Self.grams(of: document))
        }
        current.reset()
        if removals {
            let gone = try db.prepare("SELECT grams FROM search_pending WHERE kind = ? ORDER BY id")
            gone.bind(1, removedKind)
            while try gone.step() { removed.append(gone.withBlob(0) { Self.removedRecord($0) }) }
            gone.reset()
        }
        try remove(db, removed)
        let clear = try db.prepare("DELETE FROM search_pending WHERE kind = ?")
        clear.bind(1, kind)
        try clear.run()
        if removals {
            clear.reset()
            clear.bind(1, removedKind)
            try clear.run()
            try setRemovedCount(db, 0)
        }
        // New records, in one batch.
        let through = try indexedThrough(db)
        let newest = try Store.scalar(db, "SELECT coalesce(max(id), 0) FROM \(recordsTable)")
        var last = through
        if let pipeline, pipeline.valid, let first = pipeline.firstId, first > through, pipeline.lastId == newest,
           try Store.scalar(db, "SELECT count(*) FROM \(recordsTable) WHERE id >= \(first)") == Int64(pipeline.count) {
            last = try addRecords(db, after: through, below: first)
            let empty = try isEmpty(db)
            _ = try pipeline.drain { try write(db, $0, indexIsEmpty: empty) }
            last = max(last, pipeline.lastId)
        } else {
            pipeline?.reset()
            last = try addRecords(db, after: through)
        }
        try setIndexedThrough(db, max(last, newest))
    }
}
