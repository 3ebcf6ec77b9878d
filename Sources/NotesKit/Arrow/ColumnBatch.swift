import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The producer side of the Arrow transport: records appended row by row into columns laid out as
// Arrow arrays (validity bitmap, int64 values, bit-packed booleans, UTF-8 with offsets, lists of
// int32). Buffers are malloc'ed, so the C ABI hands them out as they are (no copy) and frees
// them with `free` when the consumer releases the array. The core knows nothing of the C structs.

/// A growable malloc'ed buffer. `take()` hands its memory over to a new owner (who frees it with
/// `free`); otherwise it is freed with the buffer.
public final class ByteBuffer {
    // Appended to once per value of a million-row scan: the run-time exclusivity checks of class
    // properties cost a tenth of it, and a buffer is only ever used by one thread at a time.
    @exclusivity(unchecked) public private(set) var base: UnsafeMutableRawPointer?
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 0
    /// Set when memory ran out: appends are dropped from then on and the producer reports it.
    /// (Read for each of a page's 21 buffers when it is finished and again when it is recycled.)
    @exclusivity(unchecked) public private(set) var failed = false

    public init(capacity: Int = 0) { if capacity > 0 { _ = grow(to: capacity) } }

    deinit { free(base) }

    /// Makes room for `extra` more bytes; false (and `failed`) when memory ran out.
    @inline(__always)
    @discardableResult
    func reserve(_ extra: Int) -> Bool {
        count + extra <= capacity || grow(to: Swift.max(count + extra, capacity * 2, 256))
    }

    private func grow(to wanted: Int) -> Bool {
        guard !failed, let memory = realloc(base, wanted) else {
            failed = true
            return false
        }
        base = memory
        capacity = wanted
        return true
    }

    @inline(__always)
    func append<T>(_ value: T) {
        guard reserve(MemoryLayout<T>.size), let base else { return }
        (base + count).storeBytes(of: value, as: T.self)
        count += MemoryLayout<T>.size
    }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0, reserve(bytes.count), let base else { return }
        memcpy(base + count, source, bytes.count)
        count += bytes.count
    }

    /// Counts `n` more bytes as appended and returns where they go, for the caller to write
    /// (nil, and nothing counted, when memory ran out).
    @inline(__always)
    func appendUninitialized(_ n: Int) -> UnsafeMutableRawPointer? {
        guard reserve(n), let base else { return nil }
        count += n
        return base + count - n
    }

    /// Empties the buffer, keeping its memory.
    func reset() { count = 0 }

    /// Keeps the first `n` bytes.
    func truncate(_ n: Int) { count = Swift.min(count, Swift.max(n, 0)) }

    /// Sets bit `index` of a bitmap whose byte `index / 8` exists.
    @inline(__always)
    func setBit(_ index: Int) {
        guard let base, index / 8 < count else { return }
        base.assumingMemoryBound(to: UInt8.self)[index / 8] |= UInt8(1 << (index % 8))
    }

    /// Hands the memory over (at least one byte; NULL only when memory ran out) and leaves this buffer empty.
    public func take() -> UnsafeMutableRawPointer? {
        if base == nil { _ = grow(to: 1) }
        let memory = base
        base = nil
        count = 0
        capacity = 0
        return memory
    }
}

/// The Arrow types the library produces.
public enum ColumnKind: Sendable {
    /// `int64`
    case int64
    /// `timestamp[ms, tz=UTC]`, stored as int64 milliseconds
    case timestamp
    /// `bool`, bit-packed
    case bool
    /// `string` (`large_string` once a batch's text passes 2 GiB)
    case string
    /// `list<int32>`: match spans as flat start, end pairs
    case int32List
}

/// One column of a batch, appended to row by row.
public final class Column {
    public let name: String
    public let kind: ColumnKind
    /// Declared nullable in the schema (a null appended to another column makes it nullable too).
    public let nullable: Bool
    /// The text bytes a row usually holds (string columns): what a page makes room for at once
    /// (``ColumnBatch/reservePage(rows:)``), so that its buffer is not grown by copying.
    public let bytesPerRow: Int
    @exclusivity(unchecked) public private(set) var length = 0
    @exclusivity(unchecked) public private(set) var nullCount = 0
    /// Values: int64s, the boolean bitmap, UTF-8 bytes, or a list's int32 items.
    let values = ByteBuffer()
    /// String and list offsets (one more than the rows), written as Arrow has them: int32, or int64
    /// once a string column's text passes 2 GiB (`wide`: the column is then a `large_string`).
    let offsets = ByteBuffer()
    @exclusivity(unchecked) private(set) var wide = false
    /// The validity bitmap, kept from the first null on (`hasNulls`). The buffers are `let`s, made
    /// with the column: a value appended to a million-row scan reaches them without a retain.
    let validity = ByteBuffer()
    @exclusivity(unchecked) private(set) var hasNulls = false

    public init(_ name: String, _ kind: ColumnKind, nullable: Bool = false, bytesPerRow: Int = 256) {
        self.name = name
        self.kind = kind
        self.nullable = nullable
        self.bytesPerRow = bytesPerRow
        if kind == .string || kind == .int32List { offsets.append(Int32(0)) }
    }

    /// Appends the offset where the next row starts.
    @inline(__always)
    private func appendOffset(_ end: Int) {
        if !wide && end <= Int(Int32.max) {
            offsets.append(Int32(truncatingIfNeeded: end))
        } else {
            widen()
            offsets.append(Int64(end))
        }
    }

    /// Rewrites the int32 offsets as int64 (a string column whose text passed 2 GiB).
    private func widen() {
        guard !wide else { return }
        let old = ByteBuffer(capacity: offsets.count)
        if let base = offsets.base { old.append(UnsafeRawBufferPointer(start: base, count: offsets.count)) }
        offsets.reset()
        offsets.reserve(old.count * 2)
        if let base = old.base {
            for i in 0..<old.count / 4 { offsets.append(Int64(base.load(fromByteOffset: 4 * i, as: Int32.self))) }
        }
        wide = true
    }

    /// The offset of row `row` (0 ... length).
    func offset(_ row: Int) -> Int {
        guard let base = offsets.base else { return 0 }
        return wide ? Int(base.load(fromByteOffset: 8 * row, as: Int64.self)) : Int(base.load(fromByteOffset: 4 * row, as: Int32.self))
    }

    func reserve(rows: Int, bytes: Int = 0) {
        switch kind {
        case .int64, .timestamp: values.reserve(rows * 8)
        case .bool: values.reserve(rows / 8 + 1)
        case .string: offsets.reserve(rows * (wide ? 8 : 4)); values.reserve(bytes)
        case .int32List: offsets.reserve(rows * 4)
        }
    }

    @inline(__always)
    private func valid() {
        if hasNulls { setBit(validity, length, true) }
        length += 1
    }

    @inline(__always)
    private func setBit(_ buffer: ByteBuffer, _ index: Int, _ on: Bool) {
        if index % 8 == 0 { buffer.append(UInt8(0)) }
        if on { buffer.setBit(index) }
    }

    @inline(__always)
    public func append(_ value: Int64) {
        values.append(value)
        valid()
    }

    @inline(__always)
    public func append(_ value: Timestamp) { append(value.milliseconds) }

    @inline(__always)
    public func append(_ value: Bool) {
        setBit(values, length, value)
        valid()
    }

    @inline(__always)
    public func append(utf8 bytes: UnsafeRawBufferPointer) {
        values.append(bytes)
        appendOffset(values.count)
        valid()
    }

    /// Appends the text of a UUID given as its two big-endian halves, formatted in place.
    @inline(__always)
    public func append(uidHigh high: UInt64, low: UInt64) {
        if let out = values.appendUninitialized(UID.textCount) { UID.write(high: high, low: low, to: out) }
        appendOffset(values.count)
        valid()
    }

    public func append(_ text: String) {
        var text = text
        text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0)) }
    }

    public func append(pairs: [Range<Int>]) {
        for r in pairs {
            values.append(Int32(clamping: r.lowerBound))
            values.append(Int32(clamping: r.upperBound))
        }
        appendOffset(values.count / 4)
        valid()
    }

    /// A null in this row (the column is then nullable in its schema).
    public func appendNull() {
        if !hasNulls {
            for i in 0..<length { setBit(validity, i, true) }
            hasNulls = true
        }
        switch kind {
        case .int64, .timestamp: values.append(Int64(0))
        case .bool: setBit(values, length, false)
        case .string: appendOffset(values.count)
        case .int32List: appendOffset(values.count / 4)
        }
        setBit(validity, length, false)
        nullCount += 1
        length += 1
    }

    /// Appends to a `string` column's offsets, after its `length + 1` byte offsets, `length + 1`
    /// int32 code-point offsets (where each row's text starts and ends in characters): a reader
    /// that decodes the whole text at once slices it by them. Arrow readers read only the byte
    /// offsets (a buffer may be longer than its array needs). Nothing for other columns and for a
    /// `large_string` one. O(text bytes / 8).
    func appendCodePointOffsets() {
        guard kind == .string, !wide, offsets.reserve((length + 1) * 4) else { return }
        let data = values.base?.assumingMemoryBound(to: UInt8.self)
        var characters = 0, start = 0
        offsets.append(Int32(0))
        for row in 0..<length {
            let end = offset(row + 1)
            characters += UTF8.codePoints(in: UnsafeBufferPointer(start: data.map { $0 + start }, count: end - start))
            offsets.append(Int32(truncatingIfNeeded: characters))
            start = end
        }
    }

    /// Bytes of text so far (string columns), to keep a batch under the 2 GiB of `string`.
    public var textBytes: Int { kind == .string ? values.count : 0 }

    /// True when memory ran out while appending.
    public var failed: Bool { values.failed || offsets.failed || validity.failed }
}

/// One finished column, its buffers handed over: what the C ABI wraps as an Arrow array.
public struct FinishedColumn {
    public var name: String
    /// The Arrow format string: `l`, `tsm:UTC`, `b`, `u`, `U`, `+l`.
    public var format: String
    public var nullable: Bool
    public var length: Int
    public var nullCount: Int
    /// The array's buffers in Arrow order (validity first; NULL when no row is null); each
    /// malloc'ed, to be released with `free`.
    public var buffers: [UnsafeMutableRawPointer?]
    /// The items of a list.
    public var child: [FinishedColumn]
}

extension FinishedColumn {
    /// True when a buffer that must exist could not be allocated.
    var hasMissingBuffer: Bool {
        buffers.dropFirst().contains { $0 == nil } || child.contains { $0.hasMissingBuffer }
    }

    /// Frees every buffer (when the array is never handed out).
    public func free() {
        for buffer in buffers { Glibc.free(buffer) }
        child.forEach { $0.free() }
    }
}

extension Column {
    /// Hands the buffers over as an Arrow array; the column is empty afterwards.
    public func finish() -> FinishedColumn {
        let validityBuffer = hasNulls ? validity.take() : nil
        let rows = length, nulls = nullCount
        let isNullable = nullable || nulls > 0
        defer {
            length = 0; nullCount = 0; hasNulls = false; wide = false
            validity.reset()
            if kind == .string || kind == .int32List { offsets.append(Int32(0)) }
        }
        switch kind {
        case .int64, .timestamp, .bool:
            let format = kind == .int64 ? "l" : kind == .timestamp ? "tsm:UTC" : "b"
            return FinishedColumn(name: name, format: format, nullable: isNullable, length: rows, nullCount: nulls,
                                  buffers: [validityBuffer, values.take()], child: [])
        case .string:
            let data = values.take()
            return FinishedColumn(name: name, format: wide ? "U" : "u", nullable: isNullable, length: rows, nullCount: nulls,
                                  buffers: [validityBuffer, offsets.take(), data], child: [])
        case .int32List:
            let items = offset(rows)
            let item = FinishedColumn(name: "item", format: "i", nullable: false, length: items, nullCount: 0,
                                      buffers: [nil, values.take()], child: [])
            return FinishedColumn(name: name, format: "+l", nullable: isNullable, length: rows, nullCount: nulls,
                                  buffers: [validityBuffer, offsets.take()], child: [item])
        }
    }
}

/// Rows of one kind of record as columns: one Arrow record batch once finished.
public final class ColumnBatch {
    public let columns: [Column]
    @exclusivity(unchecked) public private(set) var count = 0
    /// The pool this batch goes back to once its columns were handed over (``BatchPool/recycle(_:)``).
    @exclusivity(unchecked) fileprivate var pool: BatchPool?

    public init(_ columns: [Column]) { self.columns = columns }

    /// Counts a row whose columns were all appended to.
    @inline(__always)
    public func endRow() { count += 1 }

    /// Makes room for `rows` rows, each string column for `textBytes` bytes of text (a page read
    /// into buffers sized once, not grown by copying as its rows arrive).
    public func reserve(rows: Int, textBytes: Int = 0) {
        for column in columns { column.reserve(rows: rows, bytes: textBytes) }
    }

    /// Makes room for a page of `rows` rows, each string column for its ``Column/bytesPerRow`` a row.
    public func reservePage(rows: Int) {
        for column in columns { column.reserve(rows: rows, bytes: rows * column.bytesPerRow) }
    }

    /// Makes room for `rows` rows, each string column for an eighth more bytes than the same column
    /// of `model` holds: a scan's next batch sized like its last, so its buffers are not copied
    /// again and again as they grow.
    public func reserve(rows: Int, like model: ColumnBatch) {
        for (column, other) in zip(columns, model.columns) { column.reserve(rows: rows, bytes: other.textBytes + other.textBytes / 8) }
    }

    /// True when memory ran out while appending (the batch is then incomplete).
    public var failed: Bool { columns.contains { $0.failed } }

    /// The text bytes of the largest string column so far.
    public var largestText: Int { columns.reduce(0) { Swift.max($0, $1.textBytes) } }

    /// Hands every column over; the batch is empty afterwards. Fails when memory ran out.
    /// `codePointOffsets`: each `string` column's offsets go on with its code-point offsets
    /// (``Column/appendCodePointOffsets()``), for a batch read by the library's own binding.
    public func finish(codePointOffsets: Bool = false) throws -> (rows: Int, columns: [FinishedColumn]) {
        if codePointOffsets { columns.forEach { $0.appendCodePointOffsets() } }
        if failed { throw NotesError(.internalError, "out of memory while building a batch of \(count) rows") }
        let rows = count
        count = 0
        let finished = columns.map { $0.finish() }
        if finished.contains(where: { $0.hasMissingBuffer }) {
            finished.forEach { $0.free() }
            throw NotesError(.internalError, "out of memory while building a batch of \(rows) rows")
        }
        return (rows, finished)
    }
}

extension Column {
    /// Reverses the order of the rows (a page read newest first and shown oldest first).
    func reverse() {
        let n = length
        guard n > 1 else { return }
        switch kind {
        case .int64, .timestamp:
            guard let base = values.base else { return }
            let p = base.assumingMemoryBound(to: Int64.self)
            var i = 0, j = n - 1
            while i < j { let t = p[i]; p[i] = p[j]; p[j] = t; i += 1; j -= 1 }
        case .bool:
            let bits = (0..<n).map { bit(values, $0) }
            rebuildBits(values, bits.reversed())
        case .string, .int32List:
            let unit = kind == .string ? 1 : 4
            let old = ByteBuffer(capacity: values.count)
            if let base = values.base { old.append(UnsafeRawBufferPointer(start: base, count: values.count)) }
            let oldStarts = (0...n).map { offset($0) }
            values.reset()
            offsets.reset()
            offsets.append(Int32(0))
            let wasWide = wide
            wide = false
            if wasWide { widen() }
            for row in stride(from: n - 1, through: 0, by: -1) {
                let start = oldStarts[row] * unit, end = oldStarts[row + 1] * unit
                if let base = old.base { values.append(UnsafeRawBufferPointer(start: base + start, count: end - start)) }
                appendOffset(values.count / unit)
            }
        }
        if hasNulls {
            let bits = (0..<n).map { bit(validity, $0) }
            rebuildBits(validity, bits.reversed())
        }
    }

    private func bit(_ buffer: ByteBuffer, _ index: Int) -> Bool {
        guard let base = buffer.base else { return false }
        return base.load(fromByteOffset: index / 8, as: UInt8.self) & UInt8(1 << (index % 8)) != 0
    }

    private func rebuildBits(_ buffer: ByteBuffer, _ bits: ReversedCollection<[Bool]>) {
        buffer.reset()
        for (i, on) in bits.enumerated() {
            if i % 8 == 0 { buffer.append(UInt8(0)) }
            if on { buffer.setBit(i) }
        }
    }
}

extension ColumnBatch {
    /// Reverses the order of the rows.
    public func reverse() { columns.forEach { $0.reverse() } }

    /// Keeps the first `rows` rows.
    public func truncate(rows: Int) {
        guard rows < count else { return }
        columns.forEach { $0.truncate(rows: rows) }
        count = rows
    }
}

extension Column {
    /// Keeps the first `n` rows.
    func truncate(rows n: Int) {
        guard n < length else { return }
        let bitmapBytes = (n + 7) / 8
        switch kind {
        case .int64, .timestamp: values.truncate(n * 8)
        case .bool: values.truncate(bitmapBytes)
        case .string: values.truncate(offset(n)); offsets.truncate((n + 1) * (wide ? 8 : 4))
        case .int32List: values.truncate(offset(n) * 4); offsets.truncate((n + 1) * 4)
        }
        if hasNulls {
            validity.truncate(bitmapBytes)
            nullCount = (0..<n).reduce(0) { $0 + (bit(validity, $1) ? 0 : 1) }
        }
        length = n
    }
}

/// Empty batches of one shape, kept for the next page: a page's batch is finished (its buffers
/// handed over) and then made again for the next call — seven columns, their 21 buffers, the batch:
/// about 30 objects allocated and freed per page. A finished batch is as empty as a new one
/// (``ColumnBatch/finish(codePointOffsets:)``), so the next call takes it from here instead.
public final class BatchPool: @unchecked Sendable {
    private let make: @Sendable () -> ColumnBatch
    private let lock = Mutex<Void>(())
    /// Guarded by `lock`.
    private var idle: [ColumnBatch] = []
    /// How many batches are kept: one per thread that pages at the same time, up to this.
    static let capacity = 4

    public init(_ make: @escaping @Sendable () -> ColumnBatch) { self.make = make }

    /// An empty batch of the pool's shape: one handed back, or a new one.
    public func take() -> ColumnBatch {
        if let batch = lock.withLock({ _ in idle.popLast() }) { return batch }
        let batch = make()
        batch.pool = self
        return batch
    }

    /// Hands `batch` back to its pool after a successful ``ColumnBatch/finish(codePointOffsets:)``,
    /// when nothing else holds it (a batch still referenced elsewhere, or one that ran out of
    /// memory, is left alone).
    public static func recycle(_ batch: inout ColumnBatch) {
        guard let pool = batch.pool, batch.count == 0, !batch.failed, isKnownUniquelyReferenced(&batch) else { return }
        pool.lock.withLock { _ in
            if pool.idle.count < capacity { pool.idle.append(batch) }
        }
    }
}
