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

/// The release callback's work for a struct made here (an array or a schema): drops its private
/// data (retained when the struct was filled) and marks it released. A released struct is left alone.
private func releaseMade<T, Release>(_ p: UnsafeMutablePointer<T>?, _ release: WritableKeyPath<T, Release?>,
                                     _ privateData: WritableKeyPath<T, UnsafeMutableRawPointer?>) {
    guard let p, p.pointee[keyPath: release] != nil, let data = p.pointee[keyPath: privateData] else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
    p.pointee[keyPath: release] = nil
    p.pointee[keyPath: privateData] = nil
    ArrowLive.released()
}

/// A struct's children as C lists them (NULL when there are none), owned by its private data:
/// each child the consumer did not release (or move) is released, and each is freed, with it.
private final class Children<T> {
    let list: UnsafeMutablePointer<UnsafeMutablePointer<T>?>?
    private let count: Int
    private let release: (UnsafeMutablePointer<T>) -> Void

    init(_ children: [UnsafeMutablePointer<T>], release: @escaping (UnsafeMutablePointer<T>) -> Void) {
        count = children.count
        self.release = release
        if children.isEmpty {
            list = nil
        } else {
            let list = UnsafeMutablePointer<UnsafeMutablePointer<T>?>.allocate(capacity: children.count)
            for (i, c) in children.enumerated() { list[i] = c }
            self.list = list
        }
    }

    deinit {
        guard let list else { return }
        for i in 0..<count {
            guard let child = list[i] else { continue }
            release(child)
            child.deallocate()
        }
        list.deallocate()
    }
}

// MARK: - Arrays

private final class ArrayPrivate {
    let buffers: UnsafeMutablePointer<UnsafeRawPointer?>
    let bufferCount: Int
    /// Nil for a leaf (a column of values): one object fewer per column of every batch.
    let children: Children<ArrowArray>?

    init(buffers: [UnsafeMutableRawPointer?], children: [UnsafeMutablePointer<ArrowArray>]) {
        bufferCount = buffers.count
        self.buffers = .allocate(capacity: max(buffers.count, 1))
        for (i, b) in buffers.enumerated() { self.buffers[i] = UnsafeRawPointer(b) }
        self.children = children.isEmpty ? nil : Children(children) { child in child.pointee.release?(child) }
    }

    deinit {
        for i in 0..<bufferCount { free(UnsafeMutableRawPointer(mutating: buffers[i])) }
        buffers.deallocate()
    }
}

private let releaseArray: @convention(c) (UnsafeMutablePointer<ArrowArray>?) -> Void = { releaseMade($0, \.release, \.private_data) }

/// Fills `out` with `column`'s array, taking over its buffers.
private func fill(_ out: UnsafeMutablePointer<ArrowArray>, _ column: FinishedColumn) {
    let children = column.child.map { child -> UnsafeMutablePointer<ArrowArray> in
        let p = UnsafeMutablePointer<ArrowArray>.allocate(capacity: 1)
        fill(p, child)
        return p
    }
    fill(out, length: column.length, nullCount: column.nullCount, buffers: column.buffers, children: children)
}

private func fill(_ out: UnsafeMutablePointer<ArrowArray>, length: Int, nullCount: Int, buffers: [UnsafeMutableRawPointer?],
                  children: [UnsafeMutablePointer<ArrowArray>]) {
    let data = ArrayPrivate(buffers: buffers, children: children)
    out.initialize(to: ArrowArray(
        length: Int64(length), null_count: Int64(nullCount), offset: 0, n_buffers: Int64(buffers.count),
        n_children: Int64(children.count), buffers: data.buffers, children: data.children?.list, dictionary: nil,
        release: releaseArray, private_data: Unmanaged.passRetained(data).toOpaque()))
    ArrowLive.made()
}

/// Fills `out` with a record batch (a struct array of the columns), taking over their buffers.
func exportBatch(_ rows: Int, _ columns: [FinishedColumn], to out: UnsafeMutablePointer<ArrowArray>) {
    let children = columns.map { column -> UnsafeMutablePointer<ArrowArray> in
        let p = UnsafeMutablePointer<ArrowArray>.allocate(capacity: 1)
        fill(p, column)
        return p
    }
    fill(out, length: rows, nullCount: 0, buffers: [nil], children: children)
}

// MARK: - Schemas

/// Format strings and field names as C strings made once and kept for the life of the process:
/// the library uses a few dozen, and a consumer may cache what it decoded by address.
private enum InternedStrings {
    /// Each text's C string, as its address (0 when memory ran out), and the last list of texts
    /// looked up with its answer: a page of one kind after another asks for the same list, found by
    /// comparing it (the same string storage: a compare each) before a text is hashed.
    static let table = Mutex<(strings: [String: UInt], lastTexts: [String], last: [UInt])>(([:], [], []))

    /// The C strings of `texts`, in order, looked up (and made when new) under one lock.
    static func get(_ texts: [String]) -> [UnsafeMutablePointer<CChar>?] {
        table.withLock { t in
            if texts == t.lastTexts { return t.last }
            let found = texts.map { text -> UInt in
                if let p = t.strings[text] { return p }
                let p = UInt(bitPattern: strdup(text))
                if p != 0 { t.strings[text] = p }
                return p
            }
            if !found.contains(0) { (t.lastTexts, t.last) = (texts, found) }
            return found
        }.map { UnsafeMutablePointer<CChar>(bitPattern: $0) }
    }
}

private final class SchemaPrivate {
    let format: UnsafeMutablePointer<CChar>?
    let name: UnsafeMutablePointer<CChar>?
    let children: Children<ArrowSchema>

    init(format: UnsafeMutablePointer<CChar>?, name: UnsafeMutablePointer<CChar>?, children: [UnsafeMutablePointer<ArrowSchema>]) {
        self.format = format
        self.name = name
        self.children = Children(children) { child in child.pointee.release?(child) }
    }
}

private let releaseSchema: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { releaseMade($0, \.release, \.private_data) }

/// The release callback of a leaf field (no children): its format and name are interned, so it
/// owns nothing and needs no private data (one object fewer per column of every batch).
private let releaseLeafSchema: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { p in
    guard let p, p.pointee.release != nil else { return }
    p.pointee.release = nil
    ArrowLive.released()
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

private func fill(_ out: UnsafeMutablePointer<ArrowSchema>, _ field: FieldType, _ strings: [UnsafeMutablePointer<CChar>?],
                  _ next: inout Int) {
    let format = strings[next], name = strings[next + 1]
    next += 2
    let flags = field.nullable ? Int64(ARROW_FLAG_NULLABLE) : 0
    if field.children.isEmpty, format != nil, name != nil {
        out.initialize(to: ArrowSchema(format: UnsafePointer(format), name: UnsafePointer(name), metadata: nil, flags: flags,
                                       n_children: 0, children: nil, dictionary: nil, release: releaseLeafSchema, private_data: nil))
        ArrowLive.made()
        return
    }
    let children = field.children.map { child -> UnsafeMutablePointer<ArrowSchema> in
        let p = UnsafeMutablePointer<ArrowSchema>.allocate(capacity: 1)
        fill(p, child, strings, &next)
        return p
    }
    let data = SchemaPrivate(format: format, name: name, children: children)
    out.initialize(to: ArrowSchema(
        format: UnsafePointer(data.format), name: UnsafePointer(data.name), metadata: nil,
        flags: flags, n_children: Int64(children.count), children: data.children.list,
        dictionary: nil, release: releaseSchema, private_data: Unmanaged.passRetained(data).toOpaque()))
    ArrowLive.made()
}

/// Fills `out` with the schema of a record batch: a struct of `fields`.
func exportSchema(_ fields: [FieldType], to out: UnsafeMutablePointer<ArrowSchema>) {
    let root = FieldType(name: "", format: "+s", nullable: false, children: fields)
    var all: [String] = []
    texts(root, into: &all)
    var next = 0
    fill(out, root, InternedStrings.get(all), &next)
}

/// Exports a batch and its schema (the schema from the finished columns: `large_string` where a
/// column's text passed 2 GiB). Frees the batch's buffers when an out-parameter is missing.
func exportBatch(_ batch: ColumnBatch, array: UnsafeMutablePointer<ArrowArray>, schema: UnsafeMutablePointer<ArrowSchema>) throws {
    let (rows, columns) = try batch.finish()
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
