/// A bounded least-recently-used map from a cache key to what was measured for it.
///
/// Compact on purpose (a million entries fit in about 48 MB): entries live in one dense array
/// linked into an LRU list by index, and an open-addressing table of 32-bit indexes (linear
/// probing, load at most 3/4, backward-shift deletion) finds them. Lookups, inserts and removals
/// are O(1) on average. Not thread-safe: ``Layout`` keeps it behind a lock.
struct HeightCache {
    /// One measured row. `first`/`second` are the title and content heights of an article, or the
    /// text width and height of a bubble; `flag` is the bubble's `fromMe`.
    struct Entry {
        var key: UInt64
        var revision: Int64
        var first: Int32
        var second: Int32
        fileprivate var newer: Int32 = -1
        fileprivate var older: Int32 = -1
        var flag: Bool

        init(key: UInt64, revision: Int64, first: Int32, second: Int32, flag: Bool = false) {
            self.key = key
            self.revision = revision
            self.first = first
            self.second = second
            self.flag = flag
        }
    }

    static let entryBytes = MemoryLayout<Entry>.stride
    static let slotBytes = MemoryLayout<Int32>.stride

    private(set) var entries: [Entry] = []
    private var slots: [Int32]
    private var head: Int32 = -1
    private var tail: Int32 = -1
    /// How many entries fit in `capacityBytes`, table included.
    let maxEntries: Int
    let capacityBytes: Int

    private(set) var hits = 0
    private(set) var misses = 0
    private(set) var evictions = 0
    private(set) var invalidations = 0

    /// The smallest bound a cache takes (a layout's `cache_bytes`).
    static let minimumCapacityBytes = 1024

    /// An empty cache holding at most `capacityBytes`; `.validation` (naming `cache_bytes`) below
    /// ``minimumCapacityBytes``.
    init(capacityBytes: Int) throws {
        guard capacityBytes >= Self.minimumCapacityBytes else {
            throw NotesError.validation("cache_bytes", "cache_bytes must be at least \(Self.minimumCapacityBytes), got \(capacityBytes)")
        }
        self.capacityBytes = capacityBytes
        maxEntries = HeightCache.entriesFitting(capacityBytes)
        slots = [Int32](repeating: -1, count: 16)
    }

    /// The most entries whose array and table fit in `bytes` (at least 1).
    /// Any `bytes` up to `Int.max` (the table size stops doubling before it would overflow).
    static func entriesFitting(_ bytes: Int) -> Int {
        var best = 1
        var tableSize = 16
        while tableSize <= Int.max / 2 / slotBytes, tableSize * slotBytes < bytes {
            best = max(best, min((bytes - tableSize * slotBytes) / entryBytes, tableSize / 4 * 3))
            tableSize *= 2
        }
        return best
    }

    var count: Int { entries.count }

    /// The memory the cache holds now: its entry array and its table.
    var bytes: Int { entries.capacity * HeightCache.entryBytes + slots.count * HeightCache.slotBytes }

    // MARK: - Reading

    /// The entry for `key`, marked most recently used; counts a hit or a miss.
    mutating func lookup(_ key: UInt64) -> Entry? {
        guard let slot = find(key) else {
            misses += 1
            return nil
        }
        hits += 1
        let index = slots[slot]
        moveToFront(index)
        return entries[Int(index)]
    }

    /// The entry for `key`, without counting or reordering anything.
    func peek(_ key: UInt64) -> Entry? {
        find(key).map { entries[Int(slots[$0])] }
    }

    // MARK: - Writing

    /// Stores `entry` (replacing the one with its key), evicting the least recently used entry
    /// when full.
    mutating func insert(_ entry: Entry) {
        if let slot = find(entry.key) {
            let index = slots[slot]
            let (newer, older) = (entries[Int(index)].newer, entries[Int(index)].older)
            entries[Int(index)] = entry
            entries[Int(index)].newer = newer
            entries[Int(index)].older = older
            moveToFront(index)
            return
        }
        if entries.count >= maxEntries, tail >= 0 {
            remove(entries[Int(tail)].key)
            evictions += 1
        }
        if entries.count == entries.capacity {
            entries.reserveCapacity(min(max(16, entries.capacity * 2), maxEntries))
        }
        if (entries.count + 1) * 4 > slots.count * 3 { grow() }
        let index = Int32(entries.count)
        entries.append(entry)
        var slot = home(entry.key)
        while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = index
        linkAtFront(index)
    }

    /// Makes room for `count` more entries (up to the bound) in one allocation, so that filling a
    /// large cache does not copy its arrays again and again.
    mutating func reserve(_ count: Int) {
        let wanted = min(entries.count + count, maxEntries)
        if wanted > entries.capacity { entries.reserveCapacity(wanted) }
        while wanted * 4 > slots.count * 3 { grow() }
    }

    /// Removes the entry for `key`; false when there was none.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Bool {
        guard var hole = find(key) else { return false }
        let index = slots[hole]
        // Backward-shift deletion: pull later entries of the probe run into the hole.
        let mask = slots.count - 1
        var next = hole
        while true {
            next = (next + 1) & mask
            let moving = slots[next]
            if moving < 0 { break }
            let want = home(entries[Int(moving)].key)
            let stays = hole <= next ? (hole < want && want <= next) : (hole < want || want <= next)
            if stays { continue }
            slots[hole] = moving
            hole = next
        }
        slots[hole] = -1
        unlink(index)
        // Keep the array dense: the last entry takes the removed one's place.
        let last = Int32(entries.count - 1)
        if index != last {
            let moved = entries[Int(last)]
            entries[Int(index)] = moved
            if let slot = find(moved.key) { slots[slot] = index }
            if moved.newer >= 0 { entries[Int(moved.newer)].older = index } else { head = index }
            if moved.older >= 0 { entries[Int(moved.older)].newer = index } else { tail = index }
        }
        entries.removeLast()
        return true
    }

    /// Removes the entry for `key` because what it measured changed or went away.
    mutating func invalidate(_ key: UInt64) -> Bool {
        let removed = remove(key)
        if removed { invalidations += 1 }
        return removed
    }

    mutating func removeAll() {
        entries = []
        slots = [Int32](repeating: -1, count: 16)
        head = -1
        tail = -1
    }

    // MARK: - Table

    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slots.count.trailingZeroBitCount))
    }

    private func find(_ key: UInt64) -> Int? {
        var slot = home(key)
        let mask = slots.count - 1
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if entries[Int(index)].key == key { return slot }
            slot = (slot + 1) & mask
        }
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, entry) in entries.enumerated() {
            var slot = home(entry.key)
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }

    // MARK: - Recency list (head = most recent)

    private mutating func linkAtFront(_ index: Int32) {
        entries[Int(index)].newer = -1
        entries[Int(index)].older = head
        if head >= 0 { entries[Int(head)].newer = index }
        head = index
        if tail < 0 { tail = index }
    }

    private mutating func unlink(_ index: Int32) {
        let (newer, older) = (entries[Int(index)].newer, entries[Int(index)].older)
        if newer >= 0 { entries[Int(newer)].older = older } else { head = older }
        if older >= 0 { entries[Int(older)].newer = newer } else { tail = newer }
    }

    private mutating func moveToFront(_ index: Int32) {
        guard head != index else { return }
        unlink(index)
        linkAtFront(index)
    }
}
