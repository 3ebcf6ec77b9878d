/// Posting lists: the ids of the records that contain a gram, ascending, stored as LEB128 varints
/// of the first id and then of the gaps between ids (dense lists take one byte per id).
enum Postings {
    /// The largest encoded block written; it keeps a row inside one SQLite page.
    static let blockBytes = 900

    @inline(__always)
    static func append(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        var v = value, n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// The varint at `i` (advanced past it); a varint cut short by the end reads as its bytes so far.
    @inline(__always)
    static func next(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) -> UInt64 {
        var v: UInt64 = 0, shift: UInt64 = 0
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        return v
    }

    /// Decodes a list, appending its ids to `out`.
    static func decode(_ bytes: UnsafeRawBufferPointer, into out: inout [Int64]) {
        var previous: Int64 = 0
        var i = 0
        while i < bytes.count {
            previous &+= Int64(bitPattern: next(bytes, &i))
            out.append(previous)
        }
    }

    /// A tail: plain varint ids (no gaps), so that appending needs no knowledge of the last id.
    static func decodeTail(_ bytes: UnsafeRawBufferPointer, into out: inout [Int64]) {
        var i = 0
        while i < bytes.count { out.append(Int64(bitPattern: next(bytes, &i))) }
    }

    static func encodeTail(_ ids: some Collection<Int64>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(ids.count * 3)
        for id in ids { append(UInt64(bitPattern: id), to: &out) }
        return out
    }

    /// The encoded size of `ids` as a tail.
    static func tailSize(_ ids: some Collection<Int64>) -> Int {
        ids.reduce(0) { $0 + size(UInt64(bitPattern: $1)) }
    }

    static func decode(_ bytes: [UInt8]) -> [Int64] {
        var out: [Int64] = []
        bytes.withUnsafeBytes { decode($0, into: &out) }
        return out
    }

    static func encode(_ ids: some Collection<Int64>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(ids.count * 2)
        var previous: Int64 = 0
        for id in ids {
            append(UInt64(bitPattern: id &- previous), to: &out)
            previous = id
        }
        return out
    }

    /// Splits ascending `ids` into consecutive runs that each encode in at most `blockBytes`.
    static func chunks(_ ids: [Int64]) -> [ArraySlice<Int64>] {
        var out: [ArraySlice<Int64>] = []
        var start = 0, bytes = 0
        var previous: Int64 = 0
        for (k, id) in ids.enumerated() {
            let width = size(UInt64(bitPattern: id &- (k == start ? 0 : previous)))
            if k > start && bytes + width > blockBytes {
                out.append(ids[start..<k])
                start = k
                bytes = size(UInt64(bitPattern: id))
            } else {
                bytes += width
            }
            previous = id
        }
        if start < ids.count { out.append(ids[start...]) }
        return out
    }

    /// Sorted intersection of two ascending lists.
    static func intersect(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        var out: [Int64] = []
        out.reserveCapacity(min(a.count, b.count))
        var i = 0, j = 0
        while i < a.count && j < b.count {
            let x = a[i], y = b[j]
            if x == y { out.append(x); i += 1; j += 1 } else if x < y { i += 1 } else { j += 1 }
        }
        return out
    }

    /// A sorted list without its repeats.
    static func unique(_ sorted: [Int64]) -> [Int64] {
        var out: [Int64] = []
        out.reserveCapacity(sorted.count)
        for id in sorted where out.last != id { out.append(id) }
        return out
    }

    /// Sorted union (without duplicates) of two ascending lists.
    static func union(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [Int64] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) { out.append(a[i]); i += 1 }
            else if i == a.count || b[j] < a[i] { out.append(b[j]); j += 1 }
            else { out.append(a[i]); i += 1; j += 1 }
        }
        return out
    }
}

/// Cuts ascending ids, given one at a time, into blocks of at most ``Postings/blockBytes``
/// encoded bytes (the first id, then gaps), where ``Postings/chunks(_:)`` cuts them, encoding
/// each id once.
struct BlockCutter {
    /// The blocks cut so far: first id and encoded bytes.
    private(set) var blocks: [(first: Int64, bytes: [UInt8])] = []
    private var block: [UInt8] = []
    private var first: Int64 = 0
    private var last: Int64 = 0

    @inline(__always)
    mutating func add(_ id: Int64) {
        if !block.isEmpty {
            let gap = UInt64(bitPattern: id &- last)
            if block.count + Postings.size(gap) <= Postings.blockBytes {
                Postings.append(gap, to: &block)
                last = id
                return
            }
            blocks.append((first, block))
            block = []
        }
        if block.capacity < Postings.blockBytes { block.reserveCapacity(Postings.blockBytes) }
        first = id
        last = id
        Postings.append(UInt64(bitPattern: id), to: &block)
    }

    /// Adds the ids of `bytes`, a list in the stored format (first id, then gaps).
    ///
    /// The first id goes through ``add(_:)``; the gaps after it are already what a block stores,
    /// so each run of them that fits the block is copied as it is (one `memcpy`, not a decode and
    /// an encode an id: this is most of a bulk fold's cutting).
    mutating func add(stored bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return }
        var i = 0
        var id = Int64(bitPattern: Postings.next(bytes, &i))
        add(id)
        // `block` plus the gaps from `run` to `i`, not copied yet, is the block so far.
        var run = i, size = block.count
        while i < bytes.count {
            let start = i
            id &+= Int64(bitPattern: Postings.next(bytes, &i))
            if size + (i - start) <= Postings.blockBytes {
                size += i - start
                continue
            }
            block.append(contentsOf: UnsafeBufferPointer(start: base + run, count: start - run))
            blocks.append((first, block))
            block = []
            block.reserveCapacity(Postings.blockBytes)
            first = id
            Postings.append(UInt64(bitPattern: id), to: &block)
            run = i
            size = block.count
        }
        block.append(contentsOf: UnsafeBufferPointer(start: base + run, count: bytes.count - run))
        last = id
    }

    /// Every block, the last one included.
    mutating func finish() -> [(first: Int64, bytes: [UInt8])] {
        if !block.isEmpty { blocks.append((first, block)) }
        block = []
        return blocks
    }
}

/// A gram of the index: two key code points (or one and `end`) and the field they were seen in.
///
/// Laid out as `first << 22 | second << 1 | field`, so the grams that start with one code point
/// are one range of keys (a one-character query reads that range).
enum Gram {
    /// The "second code point" after the last code point of a field.
    static let end: UInt64 = 0x1F_FFFF

    @inline(__always)
    static func make(_ first: UInt32, _ second: UInt64, field: UInt64) -> UInt64 {
        UInt64(first) << 22 | second << 1 | field
    }

    /// Every gram key that starts with `first`, in `field` or in both (`nil`).
    static func range(startingWith first: UInt32) -> Range<Int64> {
        Int64(first) << 22..<(Int64(first) + 1) << 22
    }

    static func field(of gram: Int64) -> Int { Int(gram & 1) }
}

/// Collects the postings of many records in memory, grouped by gram, for one bulk write.
/// Records must be added in increasing id order.
///
/// Each gram's postings are appended, already in the stored format (varint first id, then gaps),
/// to its record: the first 32 bytes inline (enough for most grams, which are rare), the rest in
/// a chain of 32-byte chunks in one arena. Grams are found through an open-addressing hash table.
/// A posting costs a hash probe, a record and (for frequent grams) a chunk: a few cache lines.
///
/// It owns raw memory: call `release()` when done (and do not copy it).
struct PostingAccumulator {
    private static let chunkSize = 32
    private static let chunkData = 28 // the last 4 bytes of a chunk link to the next one
    private static let inlineBytes = 32

    /// One gram, on one cache line.
    struct Record {
        var gram: UInt64
        var lastId: Int64
        var count: Int32
        var byteCount: Int32
        var head: Int32 = -1 // first chunk, after the inline bytes
        var tail: Int32 = -1
        var inline: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }

    // Hash table: per slot, gram + 1 (0 = empty) and the gram's record index.
    private var slots: UnsafeMutablePointer<UInt64>
    private var slotCount: Int
    private(set) var records = RawArray<Record>()
    private var arena = RawArray<UInt8>()

    init(expectedGrams: Int = 1 << 12) {
        slotCount = 1 << 12
        while slotCount < expectedGrams * 2 { slotCount <<= 1 }
        slots = .allocate(capacity: slotCount * 2)
        slots.initialize(repeating: 0, count: slotCount * 2)
    }

    mutating func release() {
        slots.deallocate()
        records.free()
        arena.free()
    }

    /// Forgets every posting, keeping the memory for the next ones.
    mutating func clear() {
        slots.update(repeating: 0, count: slotCount * 2)
        records.removeAll()
        arena.removeAll()
    }

    var isEmpty: Bool { records.count == 0 }

    func gram(_ g: Int) -> UInt64 { records[g].gram }
    func count(_ g: Int) -> Int32 { records[g].count }
    /// The size of gram `g`'s postings in the stored format (see ``bytes(of:into:)``).
    func byteCount(_ g: Int) -> Int { Int(records[g].byteCount) }

    /// Records that `id` contains `gram` (repeats of the same gram and id are ignored).
    @inline(__always)
    mutating func add(_ gram: UInt64, _ id: Int64) {
        let tag = gram &+ 1
        let mask = slotCount - 1
        var h = Int(truncatingIfNeeded: (tag &* 0x9E37_79B9_7F4A_7C15) >> 29) & mask
        while true {
            let s = slots[2 * h]
            if s == tag {
                let record = records.base.unsafelyUnwrapped + Int(slots[2 * h + 1])
                let last = record.pointee.lastId
                if last == id { return }
                record.pointee.lastId = id
                record.pointee.count += 1
                append(UInt64(bitPattern: id &- last), to: record)
                return
            }
            if s == 0 {
                let g = records.count
                slots[2 * h] = tag
                slots[2 * h + 1] = UInt64(g)
                records.append(Record(gram: gram, lastId: id, count: 1, byteCount: 0))
                append(UInt64(bitPattern: id), to: records.base.unsafelyUnwrapped + g)
                if records.count * 2 > slotCount { grow() }
                return
            }
            h = (h + 1) & mask
        }
    }

    /// Adds the grams of one field's key.
    mutating func add(key: UnsafeBufferPointer<UInt32>, field: UInt64, id: Int64) {
        let n = key.count
        guard n > 0 else { return }
        for j in 0..<(n - 1) { add(Gram.make(key[j], UInt64(key[j + 1]), field: field), id) }
        add(Gram.make(key[n - 1], Gram.end, field: field), id)
    }

    @inline(__always)
    private mutating func append(_ value: UInt64, to record: UnsafeMutablePointer<Record>) {
        var v = value
        while true {
            let byte = v < 0x80 ? UInt8(v) : UInt8(truncatingIfNeeded: v) | 0x80
            let n = Int(record.pointee.byteCount)
            if n < Self.inlineBytes {
                withUnsafeMutableBytes(of: &record.pointee.inline) { $0[n] = byte }
            } else {
                let used = (n - Self.inlineBytes) % Self.chunkData
                if used == 0 {
                    let chunk = newChunk()
                    if record.pointee.tail >= 0 { setNext(of: record.pointee.tail, chunk) } else { record.pointee.head = chunk }
                    record.pointee.tail = chunk
                }
                arena[Int(record.pointee.tail) * Self.chunkSize + used] = byte
            }
            record.pointee.byteCount += 1
            if v < 0x80 { return }
            v >>= 7
        }
    }

    private mutating func newChunk() -> Int32 {
        let index = arena.count / Self.chunkSize
        arena.appendZeros(Self.chunkSize)
        return Int32(index)
    }

    private func setNext(of chunk: Int32, _ next: Int32) {
        let base = Int(chunk) * Self.chunkSize + Self.chunkData
        withUnsafeBytes(of: next.littleEndian) { for k in 0..<4 { arena[base + k] = $0[k] } }
    }

    private func next(of chunk: Int) -> Int {
        let base = chunk * Self.chunkSize + Self.chunkData
        var v: UInt32 = 0
        for k in 0..<4 { v |= UInt32(arena[base + k]) << (8 * UInt32(k)) }
        return Int(Int32(bitPattern: v))
    }

    /// The stored-format bytes of gram `g`'s postings (varint first id, then gaps).
    func bytes(of g: Int, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        var record = records[g]
        var remaining = Int(record.byteCount)
        withUnsafeBytes(of: &record.inline) { out.append(contentsOf: $0.prefix(min(remaining, Self.inlineBytes))) }
        remaining -= min(remaining, Self.inlineBytes)
        var chunk = Int(record.head)
        while remaining > 0 {
            let take = min(remaining, Self.chunkData)
            out.append(contentsOf: UnsafeBufferPointer(start: arena.base.unsafelyUnwrapped + chunk * Self.chunkSize, count: take))
            remaining -= take
            if remaining > 0 { chunk = next(of: chunk) }
        }
    }

    private mutating func grow() {
        let newCount = slotCount * 2
        let fresh = UnsafeMutablePointer<UInt64>.allocate(capacity: newCount * 2)
        fresh.initialize(repeating: 0, count: newCount * 2)
        let mask = newCount - 1
        for g in 0..<records.count {
            let tag = records[g].gram &+ 1
            var h = Int(truncatingIfNeeded: (tag &* 0x9E37_79B9_7F4A_7C15) >> 29) & mask
            while fresh[2 * h] != 0 { h = (h + 1) & mask }
            fresh[2 * h] = tag
            fresh[2 * h + 1] = UInt64(g)
        }
        slots.deallocate()
        slots = fresh
        slotCount = newCount
    }

    /// The gram indexes in ascending gram order.
    func sortedOrder() -> [Int] {
        var keyed = (0..<records.count).map { (records[$0].gram, $0) }
        keyed.sort { $0.0 < $1.0 }
        return keyed.map(\.1)
    }
}

/// A growable array of plain values behind a raw pointer: no copy-on-write or uniqueness checks
/// in hot loops. Owned by one accumulator; freed with it.
struct RawArray<T: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<T>? = nil
    private(set) var count = 0
    private var capacity = 0

    @inline(__always)
    subscript(i: Int) -> T {
        get { base.unsafelyUnwrapped[i] }
        nonmutating set { base.unsafelyUnwrapped[i] = newValue }
    }

    @inline(__always)
    mutating func append(_ value: T) {
        if count == capacity { reserve(max(16, capacity * 2)) }
        (base.unsafelyUnwrapped + count).initialize(to: value)
        count += 1
    }

    mutating func removeAll() { count = 0 }

    mutating func removeLast() { count -= 1 }

    var last: T? { count > 0 ? base.unsafelyUnwrapped[count - 1] : nil }

    var buffer: UnsafeBufferPointer<T> { UnsafeBufferPointer(start: base, count: count) }

    mutating func appendZeros(_ n: Int) {
        if count + n > capacity { reserve(max(count + n, capacity * 2, 1024)) }
        let raw = UnsafeMutableRawPointer(base.unsafelyUnwrapped + count)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: n * MemoryLayout<T>.stride)
        count += n
    }

    private mutating func reserve(_ n: Int) {
        let fresh = UnsafeMutablePointer<T>.allocate(capacity: n)
        if let base {
            fresh.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = fresh
        capacity = n
    }

    mutating func free() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}
