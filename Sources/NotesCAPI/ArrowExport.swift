import CArrow
import NotesKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The producer side of the Arrow C Data / C Stream Interface: finished column batches (see
// NotesKit's Arrow/ColumnBatch.swift) handed out as ArrowArray / ArrowSchema / ArrowArrayStream
// structs, with the specification's ownership: the consumer calls each struct's release exactly
// once; a released struct has release == NULL. Every struct handed out (children included) is
// counted until released, so tests can see that nothing leaks (nk_arrow_outstanding).

enum ArrowLive {
    static let count = Atomic<Int64>(0)
    static func made() { count.wrappingAdd(1, ordering: .relaxed) }
    static func released() { count.wrappingSubtract(1, ordering: .relaxed) }
}

// MARK: - Arrays and schemas alike

/// The memory of one exported tree of structs (a batch's arrays, or its schema's fields) in one
/// allocation: every struct of the tree but the root (which is the consumer's), their children
/// lists and buffer lists. Each struct of the tree holds a reference to it (its private data), so a
/// child the consumer moved out keeps it alive after the parent is released.
private typealias Block = ManagedBuffer<Void, UInt64>

/// A block of `bytes` bytes (8-byte aligned) and where they start (stable: the block never moves).
private func makeBlock(bytes: Int) -> (Block, UnsafeMutableRawPointer) {
    let block = Block.create(minimumCapacity: max((bytes + 7) / 8, 1)) { _ in () }
    return (block, UnsafeMutableRawPointer(block.withUnsafeMutablePointerToElements { $0 }))
}

/// Hands out the room of a block in order: structs, then pointer lists.
private struct BlockSpace {
    var next: UnsafeMutableRawPointer

    mutating func take<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
        let p = next.bindMemory(to: T.self, capacity: count)
        next += MemoryLayout<T>.stride * count
        return p
    }
}

// MARK: - Arrays

/// The release callback of every array made here: its children not released (or moved) yet, then
/// its own buffers; its reference to the block is dropped last (the block may hold `p` itself).
private let releaseArray: @convention(c) (UnsafeMutablePointer<ArrowArray>?) -> Void = { p in
    guard let p, p.pointee.release != nil, let data = p.pointee.private_data else { return }
    let array = p.pointee
    for i in 0..<Int(array.n_children) {
        if let child = array.children[i], let release = child.pointee.release { release(child) }
    }
    for i in 0..<Int(array.n_buffers) { free(UnsafeMutableRawPointer(mutating: array.buffers[i])) }
    p.pointee.release = nil
    p.pointee.private_data = nil
    ArrowLive.released()
    Unmanaged<Block>.fromOpaque(data).release()
}

/// The arrays of `columns` and below (list items), and the pointer slots they need.
private func arraySize(_ columns: [FinishedColumn]) -> (arrays: Int, slots: Int) {
    columns.reduce((0, 0)) { sum, column in
        let n = arraySize(column.child)
        return (sum.arrays + 1 + n.arrays, sum.slots + column.buffers.count + column.child.count + n.slots)
    }
}

/// Fills `out` with an array of `buffers` (taken over) and `children`, made in `space` of `block`.
private func fill(_ out: UnsafeMutablePointer<ArrowArray>, length: Int, nullCount: Int, buffers: [UnsafeMutableRawPointer?],
                  children: [FinishedColumn], _ block: Block, _ arrays: inout BlockSpace, _ slots: inout BlockSpace) {
    let bufferList = slots.take(UnsafeRawPointer?.self, buffers.count)
    for (i, b) in buffers.enumerated() { bufferList[i] = UnsafeRawPointer(b) }
    var childList: UnsafeMutablePointer<UnsafeMutablePointer<ArrowArray>?>?
    if !children.isEmpty {
        let list = slots.take(UnsafeMutablePointer<ArrowArray>?.self, children.count)
        for (i, child) in children.enumerated() {
            let p = arrays.take(ArrowArray.self, 1)
            fill(p, length: child.length, nullCount: child.nullCount, buffers: child.buffers, children: child.child, block, &arrays, &slots)
            list[i] = p
        }
        childList = list
    }
    out.initialize(to: ArrowArray(
        length: Int64(length), null_count: Int64(nullCount), offset: 0, n_buffers: Int64(buffers.count),
        n_children: Int64(children.count), buffers: bufferList, children: childList, dictionary: nil,
        release: releaseArray, private_data: Unmanaged.passRetained(block).toOpaque()))
    ArrowLive.made()
}

/// Fills `out` with a record batch (a struct array of the columns), taking over their buffers: the
/// arrays and their lists in one block.
func exportBatch(_ rows: Int, _ columns: [FinishedColumn], to out: UnsafeMutablePointer<ArrowArray>) {
    let size = arraySize(columns)
    let structBytes = size.arrays * MemoryLayout<ArrowArray>.stride
    let (block, memory) = makeBlock(bytes: structBytes + (size.slots + 1 + columns.count) * 8)  // (+ the batch's own lists)
    var arrays = BlockSpace(next: memory), slots = BlockSpace(next: memory + structBytes)
    fill(out, length: rows, nullCount: 0, buffers: [nil], children: columns, block, &arrays, &slots)
}

// MARK: - Schemas

/// Format strings and field names as C strings made once and kept for the life of the process:
/// the library uses a few dozen, and a consumer may cache what it decoded by address.
private enum InternedStrings {
    /// Each text's C string, as its address (0 when memory ran out), and the last few lists of
    /// texts looked up with their answers: pages ask for the same lists again and again (a
    /// `store.search` page for two in turn, its message hits' and its article hits'), each found
    /// by comparing it (the same string storage: a compare each) before a text is hashed.
    static let table = Mutex<(strings: [String: UInt], recent: [(texts: [String], found: [UInt])])>(([:], []))

    /// How many lists ``table`` remembers.
    static let recentLists = 4

    /// The C strings of `texts`, in order, looked up (and made when new) under one lock.
    static func get(_ texts: [String]) -> [UnsafeMutablePointer<CChar>?] {
        table.withLock { t in
            if let hit = t.recent.firstIndex(where: { $0.texts == texts }) { return t.recent[hit].found }
            let found = texts.map { text -> UInt in
                if let p = t.strings[text] { return p }
                let p = UInt(bitPattern: strdup(text))
                if p != 0 { t.strings[text] = p }
                return p
            }
            if !found.contains(0) {
                if t.recent.count == recentLists { t.recent.removeFirst() }
                t.recent.append((texts, found))
            }
            return found
        }.map { UnsafeMutablePointer<CChar>(bitPattern: $0) }
    }
}

/// The release callback of every schema made here: its children not released (or moved) yet; its
/// reference to the block is dropped last. (Formats and names are interned: nothing else to free.)
private let releaseSchema: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { p in
    guard let p, p.pointee.release != nil, let data = p.pointee.private_data else { return }
    let schema = p.pointee
    for i in 0..<Int(schema.n_children) {
        if let child = schema.children[i], let release = child.pointee.release { release(child) }
    }
    p.pointee.release = nil
    p.pointee.private_data = nil
    ArrowLive.released()
    Unmanaged<Block>.fromOpaque(data).release()
}

/// What one field of a schema says.
struct FieldType {
    var name: String
    var format: String
    var nullable: Bool
    var children: [FieldType] = []

    init(name: String, format: String, nullable: Bool, children: [FieldType] = []) {
        self.name = name
        self.format = format
        self.nullable = nullable
        self.children = children
    }

    init(_ column: Column) {
        name = column.name
        nullable = column.nullable
        switch column.kind {
        case .int64: format = "l"
        case .timestamp: format = "tsm:UTC"
        case .bool: format = "b"
        case .string: format = "u"
        case .int32List:
            format = "+l"
            children = [FieldType(name: "item", format: "i", nullable: false)]
        }
    }

    init(_ column: FinishedColumn) {
        self.init(name: column.name, format: column.format, nullable: column.nullable, children: column.child.map(FieldType.init))
    }
}

/// The format and name of `field` and of its children, depth first: the order `fill` takes them in.
private func texts(_ field: FieldType, into out: inout [String]) {
    out.append(field.format)
    out.append(field.name)
    for child in field.children { texts(child, into: &out) }
}

/// The fields below `field`, all depths.
private func fieldCount(_ field: FieldType) -> Int { field.children.reduce(0) { $0 + 1 + fieldCount($1) } }

private func fill(_ out: UnsafeMutablePointer<ArrowSchema>, _ field: FieldType, _ strings: [UnsafeMutablePointer<CChar>?],
                  _ next: inout Int, _ block: Block, _ space: inout BlockSpace) {
    let format = strings[next], name = strings[next + 1]
    next += 2
    var childList: UnsafeMutablePointer<UnsafeMutablePointer<ArrowSchema>?>?
    if !field.children.isEmpty {
        let list = space.take(UnsafeMutablePointer<ArrowSchema>?.self, field.children.count)
        for (i, child) in field.children.enumerated() {
            let p = space.take(ArrowSchema.self, 1)
            fill(p, child, strings, &next, block, &space)
            list[i] = p
        }
        childList = list
    }
    out.initialize(to: ArrowSchema(
        format: UnsafePointer(format), name: UnsafePointer(name), metadata: nil,
        flags: field.nullable ? Int64(ARROW_FLAG_NULLABLE) : 0, n_children: Int64(field.children.count), children: childList,
        dictionary: nil, release: releaseSchema, private_data: Unmanaged.passRetained(block).toOpaque()))
    ArrowLive.made()
}

/// Fills `out` with the schema of a record batch: a struct of `fields`, its fields and their lists in one block.
func exportSchema(_ fields: [FieldType], to out: UnsafeMutablePointer<ArrowSchema>) {
    let root = FieldType(name: "", format: "+s", nullable: false, children: fields)
    var all: [String] = []
    texts(root, into: &all)
    let n = fieldCount(root)
    let (block, memory) = makeBlock(bytes: n * (MemoryLayout<ArrowSchema>.stride + 8))
    var space = BlockSpace(next: memory)
    var next = 0
    fill(out, root, InternedStrings.get(all), &next, block, &space)
}

/// Exports a batch and its schema (the schema from the finished columns: `large_string` where a
/// column's text passed 2 GiB), its `string` columns with code-point offsets after their byte
/// offsets (include/noteskit.h, "Records": the calls' batches, not the streams').
func exportBatch(_ batch: ColumnBatch, array: UnsafeMutablePointer<ArrowArray>, schema: UnsafeMutablePointer<ArrowSchema>) throws {
    let (rows, columns) = try batch.finish(codePointOffsets: true)
    exportSchema(columns.map(FieldType.init), to: schema)
    exportBatch(rows, columns, to: array)
}

// MARK: - Streams

/// What a stream reads from: the next batch, or nil at the end.
protocol BatchSource: AnyObject {
    var fields: [FieldType] { get }
    func next() throws -> ColumnBatch?
}

private final class StreamPrivate {
    let source: BatchSource
    var lastError: UnsafeMutablePointer<CChar>?

    init(_ source: BatchSource) { self.source = source }

    func fail(_ error: Error) -> Int32 {
        let message = (error as? NotesError).map { "\($0.kind): \($0.message)" } ?? "\(error)"
        free(lastError)
        lastError = strdup(message)
        return (error as? NotesError)?.kind == .invalidArgument ? EINVAL : EIO
    }

    deinit { free(lastError) }
}

private func streamData(_ stream: UnsafeMutablePointer<ArrowArrayStream>?) -> StreamPrivate? {
    guard let stream, stream.pointee.release != nil, let data = stream.pointee.private_data else { return nil }
    return Unmanaged<StreamPrivate>.fromOpaque(data).takeUnretainedValue()
}

private let streamGetSchema: @convention(c) (UnsafeMutablePointer<ArrowArrayStream>?, UnsafeMutablePointer<ArrowSchema>?) -> Int32 = { stream, out in
    guard let data = streamData(stream) else { return EINVAL }
    guard let out else { return data.fail(NotesError(.invalidArgument, "get_schema was given a NULL ArrowSchema")) }
    exportSchema(data.source.fields, to: out)
    return 0
}

private let streamGetNext: @convention(c) (UnsafeMutablePointer<ArrowArrayStream>?, UnsafeMutablePointer<ArrowArray>?) -> Int32 = { stream, out in
    guard let data = streamData(stream) else { return EINVAL }
    guard let out else { return data.fail(NotesError(.invalidArgument, "get_next was given a NULL ArrowArray")) }
    do {
        guard let batch = try data.source.next() else {
            out.initialize(to: ArrowArray(length: 0, null_count: 0, offset: 0, n_buffers: 0, n_children: 0, buffers: nil,
                                          children: nil, dictionary: nil, release: nil, private_data: nil))
            return 0
        }
        let (rows, columns) = try batch.finish()
        exportBatch(rows, columns, to: out)
        return 0
    } catch {
        return data.fail(error)
    }
}

private let streamLastError: @convention(c) (UnsafeMutablePointer<ArrowArrayStream>?) -> UnsafePointer<CChar>? = { stream in
    guard let data = streamData(stream) else { return nil }
    return UnsafePointer(data.lastError)
}

private let releaseStream: @convention(c) (UnsafeMutablePointer<ArrowArrayStream>?) -> Void = { stream in
    guard let stream, stream.pointee.release != nil, let data = stream.pointee.private_data else { return }
    Unmanaged<StreamPrivate>.fromOpaque(data).release()
    stream.pointee.release = nil
    stream.pointee.private_data = nil
    ArrowLive.released()
}

/// Fills `out` with a stream over `source`.
func exportStream(_ source: BatchSource, to out: UnsafeMutablePointer<ArrowArrayStream>) {
    let data = StreamPrivate(source)
    out.initialize(to: ArrowArrayStream(get_schema: streamGetSchema, get_next: streamGetNext, get_last_error: streamLastError,
                                        release: releaseStream, private_data: Unmanaged.passRetained(data).toOpaque()))
    ArrowLive.made()
}

/// A selection's batches, read when the consumer asks for them.
final class SelectionSource: BatchSource {
    let reader: SelectionReader
    let fields: [FieldType]

    init(_ selection: Selection, threads: Int) throws {
        reader = try selection.reader(threads: threads)
        fields = selection.schema.map(FieldType.init)
    }

    func next() throws -> ColumnBatch? { try reader.next() }
}

// MARK: - Exports

@_cdecl("nk_arrow_outstanding")
public func nk_arrow_outstanding(_ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_count")
        out.pointee = ArrowLive.count.load(ordering: .relaxed)
    }
}
