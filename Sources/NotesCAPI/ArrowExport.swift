import CArrow
import NotesKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The producer side of the Arrow C Data / C Stream Interface: finished column batches (see
// NotesKit's Arrow/ColumnBatch.swift) handed out as ArrowArray / ArrowSchema / ArrowArrayStream
// structs, with the specification's ownership: the consumer calls each struct's release exactly
// once; a released struct has release == NULL. Every struct handed out (an array's children
// included; a schema's fields are the library's own, static: see StaticSchema) is counted until
// released, so tests can see that nothing leaks (nk_arrow_outstanding).

enum ArrowLive {
    static let count = Atomic<Int64>(0)
    static func made() { count.wrappingAdd(1, ordering: .relaxed) }
    static func released() { count.wrappingSubtract(1, ordering: .relaxed) }
}

// MARK: - Arrays

/// The memory of one exported batch's arrays in one allocation: every struct of the tree but the
/// root (which is the consumer's), their children lists and buffer lists. Each struct of the tree
/// holds a reference to it (its private data), so a child the consumer moved out keeps it alive
/// after the parent is released.
private typealias Block = ManagedBuffer<Void, UInt64>

/// A block of `bytes` bytes (8-byte aligned) and where they start (stable: the block never moves).
private func makeBlock(bytes: Int) -> (Block, UnsafeMutableRawPointer) {
    let block = Block.create(minimumCapacity: max((bytes + 7) / 8, 1)) { _ in () }
    return (block, UnsafeMutableRawPointer(block.withUnsafeMutablePointerToElements { $0 }))
}

/// Hands out the room of a part of a block in order.
private struct BlockSpace {
    var next: UnsafeMutableRawPointer

    mutating func take<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
        let p = next.bindMemory(to: T.self, capacity: count)
        next += MemoryLayout<T>.stride * count
        return p
    }
}

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

/// The arrays of `columns` and below (list items), and the pointer slots of their buffer lists and
/// of their children lists.
private func arraySize(_ columns: [FinishedColumn]) -> (arrays: Int, buffers: Int, lists: Int) {
    columns.reduce((0, 0, 0)) { sum, column in
        let n = arraySize(column.child)
        return (sum.arrays + 1 + n.arrays, sum.buffers + column.buffers.count + n.buffers, sum.lists + column.child.count + n.lists)
    }
}

/// Fills `out` with an array of `buffers` (taken over) and `children`, made in `space` of `block`:
/// the structs in `arrays`, the buffer lists in `buffers` (in order, depth first: every list of a
/// batch follows the one before), the children lists in `lists`.
private func fill(_ out: UnsafeMutablePointer<ArrowArray>, length: Int, nullCount: Int, buffers: [UnsafeMutableRawPointer?],
                  children: [FinishedColumn], _ block: Block, _ space: inout (arrays: BlockSpace, buffers: BlockSpace, lists: BlockSpace)) {
    let bufferList = space.buffers.take(UnsafeRawPointer?.self, buffers.count)
    for (i, b) in buffers.enumerated() { bufferList[i] = UnsafeRawPointer(b) }
    var childList: UnsafeMutablePointer<UnsafeMutablePointer<ArrowArray>?>?
    if !children.isEmpty {
        let list = space.lists.take(UnsafeMutablePointer<ArrowArray>?.self, children.count)
        for (i, child) in children.enumerated() {
            let p = space.arrays.take(ArrowArray.self, 1)
            fill(p, length: child.length, nullCount: child.nullCount, buffers: child.buffers, children: child.child, block, &space)
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
/// arrays and their lists in one block, every buffer list after the batch's own (one NULL validity)
/// in column order, a list column's followed by its items' (include/noteskit.h, "Records").
func exportBatch(_ rows: Int, _ columns: [FinishedColumn], to out: UnsafeMutablePointer<ArrowArray>) {
    let size = arraySize(columns)
    let structBytes = size.arrays * MemoryLayout<ArrowArray>.stride
    let bufferBytes = (1 + size.buffers) * 8  // (+ the batch's own validity)
    let (block, memory) = makeBlock(bytes: structBytes + bufferBytes + (size.lists + columns.count) * 8)
    var space = (arrays: BlockSpace(next: memory), buffers: BlockSpace(next: memory + structBytes),
                 lists: BlockSpace(next: memory + structBytes + bufferBytes))
    fill(out, length: rows, nullCount: 0, buffers: [nil], children: columns, block, &space)
}

// MARK: - Schemas

/// What one field of a schema says.
struct FieldType: Equatable {
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

    /// True when `column` has this field's name, format, nullability and children.
    func describes(_ column: FinishedColumn) -> Bool {
        name == column.name && format == column.format && nullable == column.nullable
            && children.count == column.child.count && zip(children, column.child).allSatisfy { $0.describes($1) }
    }
}

/// The release callback of a schema's root: it only marks it released (its children are static).
private let releaseSchemaRoot: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { p in
    guard let p, p.pointee.release != nil else { return }
    p.pointee.release = nil
    ArrowLive.released()
}

/// The release callback of a static field, called only on a copy a consumer moved out of its parent:
/// marks the copy released (the static field is the library's, never freed).
private let releaseStaticField: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { p in
    p?.pointee.release = nil
}

/// The schemas of the library's batches, each made once and kept for the life of the process: a
/// handed-out schema is a root of the consumer's whose children are a static list of static fields
/// (their formats and names C strings of their own), so a consumer may know a schema by the address
/// of its children list and decode it once (include/noteskit.h, "Records"). The library has a few
/// dozen shapes of batch, all named in its code.
private final class StaticSchema: @unchecked Sendable {
    let fields: [FieldType]
    /// The root's children list: `fields.count` static fields, their own lists below them.
    let children: UnsafeMutablePointer<UnsafeMutablePointer<ArrowSchema>?>

    init(_ fields: [FieldType]) {
        self.fields = fields
        children = StaticSchema.fieldList(fields)
    }

    private static func fieldList(_ fields: [FieldType]) -> UnsafeMutablePointer<UnsafeMutablePointer<ArrowSchema>?> {
        let list = UnsafeMutablePointer<UnsafeMutablePointer<ArrowSchema>?>.allocate(capacity: max(fields.count, 1))
        for (i, field) in fields.enumerated() {
            let p = UnsafeMutablePointer<ArrowSchema>.allocate(capacity: 1)
            p.initialize(to: ArrowSchema(
                format: UnsafePointer(strdup(field.format)), name: UnsafePointer(strdup(field.name)), metadata: nil,
                flags: field.nullable ? Int64(ARROW_FLAG_NULLABLE) : 0, n_children: Int64(field.children.count),
                children: field.children.isEmpty ? nil : fieldList(field.children), dictionary: nil, release: releaseStaticField,
                private_data: nil))
            list[i] = p
        }
        return list
    }

    /// Marks live again a field a consumer moved out (the specification lets it move a child: it
    /// copies it and marks the original released), so the next consumer finds every field live.
    func revive() {
        StaticSchema.revive(children, fields.count)
    }

    private static func revive(_ list: UnsafeMutablePointer<UnsafeMutablePointer<ArrowSchema>?>, _ n: Int) {
        for i in 0..<n {
            guard let field = list[i] else { continue }
            if field.pointee.release == nil { field.pointee.release = releaseStaticField }
            if let below = field.pointee.children { revive(below, Int(field.pointee.n_children)) }
        }
    }

    /// Fills `out` with a root of this schema: a struct of its fields.
    func export(to out: UnsafeMutablePointer<ArrowSchema>) {
        revive()
        out.initialize(to: ArrowSchema(
            format: StaticSchema.structFormat, name: StaticSchema.noName, metadata: nil, flags: 0,
            n_children: Int64(fields.count), children: children, dictionary: nil, release: releaseSchemaRoot, private_data: nil))
        ArrowLive.made()
    }

    nonisolated(unsafe) private static let structFormat = UnsafePointer(strdup("+s")!)
    nonisolated(unsafe) private static let noName = UnsafePointer(strdup("")!)

    /// The schemas made so far, the one found last first (a page asks for the same one again and
    /// again; a `store.search` page for two in turn).
    private static let made = Mutex<[StaticSchema]>([])

    /// The schema of `fields`, made when new.
    static func of(_ fields: [FieldType]) -> StaticSchema {
        find { $0.fields == fields } ?? make(fields)
    }

    /// The schema of finished columns, compared without a `FieldType` made per column.
    static func of(_ columns: [FinishedColumn]) -> StaticSchema {
        find { $0.fields.count == columns.count && zip($0.fields, columns).allSatisfy { $0.describes($1) } }
            ?? make(columns.map(FieldType.init))
    }

    private static func find(_ matches: (StaticSchema) -> Bool) -> StaticSchema? {
        made.withLock { all in
            guard let i = all.lastIndex(where: matches) else { return nil }
            let found = all[i]
            if i < all.count - 4 { all.append(all.remove(at: i)) }  // (kept among the last few looked at)
            return found
        }
    }

    private static func make(_ fields: [FieldType]) -> StaticSchema {
        made.withLock { all in
            if let same = all.last(where: { $0.fields == fields }) { return same }  // (made by another thread meanwhile)
            let schema = StaticSchema(fields)
            all.append(schema)
            return schema
        }
    }
}

/// Fills `out` with the schema of a record batch: a struct of `fields` (static: see ``StaticSchema``).
func exportSchema(_ fields: [FieldType], to out: UnsafeMutablePointer<ArrowSchema>) {
    StaticSchema.of(fields).export(to: out)
}

/// Fills `out` with the schema of a record batch of `columns`.
func exportSchema(_ columns: [FinishedColumn], to out: UnsafeMutablePointer<ArrowSchema>) {
    StaticSchema.of(columns).export(to: out)
}

/// Exports a batch and its schema (the schema from the finished columns: `large_string` where a
/// column's text passed 2 GiB), its `string` columns with code-point offsets after their byte
/// offsets (include/noteskit.h, "Records": the calls' batches, not the streams').
func exportBatch(_ batch: ColumnBatch, array: UnsafeMutablePointer<ArrowArray>, schema: UnsafeMutablePointer<ArrowSchema>) throws {
    let (rows, columns) = try batch.finish(codePointOffsets: true)
    exportSchema(columns, to: schema)
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
