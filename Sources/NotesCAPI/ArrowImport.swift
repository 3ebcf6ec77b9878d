import CArrow
import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// Records in as Arrow: the bulk writes take an `ArrowArrayStream` (the C Stream Interface) of
// struct batches, one column per record field, and read the caller's buffers directly. This file
// only reads: it checks the structure of what a producer handed over (formats, buffer counts,
// lengths, offsets, dictionary indices, that the memory is mapped) and turns each row into the
// core's input values; the core validates the values and stores them.
//
// Ownership (the spec's): the library takes the stream over and calls its `release` exactly once,
// on success and on every failure; it releases the schema and every batch it obtains from it.

/// What a record field accepts.
enum ArrowFieldKind {
    /// `string`, `large_string`, `string_view`, or a dictionary of one of them.
    case text
    /// `bool`, or an integer column holding 0 and 1.
    case flag
    /// A timestamp of any unit, with or without a time zone (naive = UTC); an integer column of
    /// milliseconds since 1970-01-01 UTC; or ISO-8601 text.
    case time
    /// An integer column of any width (an id, a revision).
    case integer
}

struct ArrowField {
    let name: String
    let kind: ArrowFieldKind
    let required: Bool
}

enum ArrowImport {
    /// The most text one column of one batch may hold: 2 GiB. Larger inputs are refused before any
    /// of their bytes is read; a producer can always send them in smaller batches.
    static let maxColumnBytes: Int64 = 1 << 31

    /// Where an empty buffer given as NULL points instead (never read).
    nonisolated(unsafe) static let nowhere = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16))

    /// Runs `body` (the checks an export makes before it reads), releasing `stream` if they fail: the
    /// stream is the library's from the moment the export is called.
    static func releasing<T>(_ stream: UnsafeMutablePointer<ArrowArrayStream>?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            if let stream, let release = stream.pointee.release { release(stream) }
            throw error
        }
    }

    /// Reads every batch of `stream` (taking it over, see above) with the columns `fields`, making
    /// one `T` per row (see ``Reader``).
    static func read<T>(_ stream: UnsafeMutablePointer<ArrowArrayStream>?, name: String, fields: [ArrowField],
                        _ make: (Batch, Int) throws -> T) throws -> [T] {
        let reader = try Reader(stream, name: name, fields: fields)
        defer { reader.close() }
        var out: [T] = []
        while let batch = try reader.next(make) { out += batch }
        return out
    }

    /// Reads `stream` (taking it over, see above) a batch at a time with the columns `fields`. An
    /// unknown or duplicate column, a missing required one, a column of the wrong type, a malformed
    /// buffer or a failing producer are errors naming the column (and the record where there is
    /// one). The stream and its schema are released by ``close()`` (or when the reader goes).
    ///
    /// `@unchecked Sendable`: one thread at a time reads it (the table import's reading threads,
    /// each joined before the next starts, see `TableReadAhead`).
    final class Reader: @unchecked Sendable {
        private let name: String
        private let fields: [ArrowField]
        private var stream: UnsafeMutablePointer<ArrowArrayStream>?
        private var schema = ArrowSchema()
        private var columns: [Int?] = []
        private var getNext: (@convention(c) (UnsafeMutablePointer<ArrowArrayStream>?, UnsafeMutablePointer<ArrowArray>?) -> Int32)?
        /// Records and batches read so far; true once the stream ended.
        private var records = 0
        private var batches = 0
        private var ended = false

        init(_ stream: UnsafeMutablePointer<ArrowArrayStream>?, name: String, fields: [ArrowField]) throws {
            self.name = name
            self.fields = fields
            guard let stream else { throw NotesError(.invalidArgument, "\(name) is NULL", field: name) }
            guard stream.pointee.release != nil else {
                throw NotesError(.invalidArgument, "\(name) was already released (an Arrow stream can be read once)", field: name)
            }
            self.stream = stream
            do {
                guard let getSchema = stream.pointee.get_schema, let getNext = stream.pointee.get_next else {
                    throw NotesError(.invalidArgument, "\(name) has no get_schema or get_next callback", field: name)
                }
                let status = getSchema(stream, &schema)
                guard status == 0 else {
                    schema = ArrowSchema()  // not the producer's to release: it failed to make one
                    throw ArrowImport.producerError(stream, name, status, "get_schema")
                }
                guard schema.release != nil else {
                    throw NotesError(.invalidArgument, "\(name): get_schema returned a released schema", field: name)
                }
                columns = try ArrowImport.columns(of: schema, fields: fields)
                self.getNext = getNext
            } catch {
                close()
                throw error
            }
        }

        deinit { close() }

        /// The next batch, one `T` per row made by `make` (which gets the batch and the row within
        /// it; `Batch.record` is the row's index in the whole stream); nil at the end of the stream.
        func next<T>(_ make: (Batch, Int) throws -> T) throws -> [T]? {
            guard !ended, let stream, let getNext else { return nil }
            var array = ArrowArray()
            let status = getNext(stream, &array)
            guard status == 0 else {
                throw ArrowImport.producerError(stream, name, status, "get_next, after \(batches) batches (\(records) records)")
            }
            guard let releaseArray = array.release else {  // the end of the stream
                ended = true
                return nil
            }
            defer { releaseArray(&array) }
            let batch = try Batch(schema: schema, array: array, columns: columns, fields: fields, first: records)
            var out: [T] = []
            out.reserveCapacity(batch.count)
            for row in 0..<batch.count { out.append(try make(batch, row)) }
            records += batch.count
            batches += 1
            return out
        }

        /// Releases the schema and the stream (once).
        func close() {
            if let release = schema.release { release(&schema) }
            if let stream, let release = stream.pointee.release { release(stream) }
            stream = nil
        }
    }

    /// Which field each child of the schema is: an unknown or repeated column is an error, and so is
    /// a missing required one.
    private static func columns(of schema: ArrowSchema, fields: [ArrowField]) throws -> [Int?] {
        guard let format = schema.format, strcmp(format, "+s") == 0 else {
            let got = schema.format.map { String(cString: $0) } ?? "NULL"
            throw NotesError(.invalidArgument, "the records must be a struct (a table or record batch), got Arrow format \"\(got.prefix(40))\"")
        }
        guard schema.n_children >= 0, schema.n_children <= 1024, schema.n_children == 0 || schema.children != nil else {
            throw NotesError(.invalidArgument, "the records' schema has a malformed list of columns")
        }
        var slots = [Int?](repeating: nil, count: fields.count)  // field -> child
        for child in 0..<Int(schema.n_children) {
            guard let c = schema.children[child], let namePointer = c.pointee.name else {
                throw NotesError(.invalidArgument, "column \(child) of the records has no name")
            }
            let name = String(decoding: UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer)), as: UTF8.self)
            guard let field = fields.firstIndex(where: { $0.name == name }) else {
                throw NotesError(.validation, "unknown column \"\(NotesError.shown(name, limit: 60))\" (the columns are \(fields.map(\.name).joined(separator: ", ")))",
                                 field: name)
            }
            guard slots[field] == nil else { throw NotesError(.validation, "column \"\(name)\" is given twice", field: name) }
            slots[field] = child
        }
        for (field, slot) in zip(fields, slots) where field.required && slot == nil {
            throw NotesError(.validation, "the records have no \(field.name) column", field: field.name)
        }
        return slots
    }

    private static func producerError(_ stream: UnsafeMutablePointer<ArrowArrayStream>, _ name: String, _ status: Int32,
                                      _ what: String) -> NotesError {
        var detail = "error \(status)"
        if let lastError = stream.pointee.get_last_error, let text = lastError(stream) {
            detail = String(decoding: UnsafeRawBufferPointer(start: text, count: min(strlen(text), 500)), as: UTF8.self)
        }
        return NotesError(.invalidArgument, "\(name): the producer failed in \(what): \(detail)", field: name)
    }
}

/// One batch: its columns by field, each checked and ready to read row by row.
struct Batch {
    let count: Int
    /// The index of the batch's first row in the whole stream.
    let first: Int
    private let columns: [ArrowColumn?]

    init(schema: ArrowSchema, array: ArrowArray, columns slots: [Int?], fields: [ArrowField], first: Int) throws {
        self.first = first
        guard array.length >= 0, array.offset >= 0, array.length <= Int64(Int32.max), array.offset <= Int64(Int32.max) else {
            throw NotesError(.invalidArgument, "a batch has a negative or impossible length (\(array.length)) or offset (\(array.offset))")
        }
        count = Int(array.length)
        guard array.n_children == schema.n_children, array.n_children == 0 || array.children != nil else {
            throw NotesError(.invalidArgument, "a batch has \(array.n_children) columns, its schema \(schema.n_children)")
        }
        if array.null_count != 0, array.n_buffers >= 1, let buffers = array.buffers, let validity = buffers[0] {
            try ArrowColumn.checkReadable(validity, (Int(array.offset) + count + 7) / 8, "the records' validity")
            let bits = validity.assumingMemoryBound(to: UInt8.self)
            for row in 0..<count {
                let i = Int(array.offset) + row
                if bits[i >> 3] & (1 << (i & 7)) == 0 {
                    throw NotesError(.validation, "record \(first + row) is null", line: first + row)
                }
            }
        }
        var made: [ArrowColumn?] = []
        for (field, slot) in zip(fields, slots) {
            guard let slot else { made.append(nil); continue }
            guard let childSchema = schema.children[slot], let childArray = array.children[slot] else {
                throw NotesError(.invalidArgument, "column \(field.name) of a batch is NULL", field: field.name)
            }
            let column = try ArrowColumn(name: field.name, schema: childSchema.pointee, array: childArray.pointee,
                                         parentOffset: Int(array.offset), rows: count)
            try column.check(accepts: field.kind)
            made.append(column)
        }
        columns = made
    }

    private func fail(_ field: String, _ row: Int, _ message: String) -> NotesError {
        NotesError(.validation, "record \(first + row): \(field) \(message)", field: field, line: first + row)
    }

    /// The value of a required field, read by `read`: a null is refused.
    @inline(__always)
    private func required<T>(_ field: Int, _ row: Int, _ read: (ArrowColumn) throws -> T?) throws -> T {
        guard let column = columns[field] else { throw NotesError(.internalError, "a required column is absent") }
        guard let value = try read(column) else { throw fail(column.name, row, "is missing (null)") }
        return value
    }

    /// The text of a required text field.
    func text(_ field: Int, _ row: Int) throws -> String {
        try required(field, row) { try $0.text(row, record: first + row) }
    }

    func optionalText(_ field: Int, _ row: Int) throws -> String? {
        try columns[field]?.text(row, record: first + row)
    }

    func flag(_ field: Int, _ row: Int) throws -> Bool {
        try required(field, row) { try $0.flag(row, record: first + row) }
    }

    func integer(_ field: Int, _ row: Int) throws -> Int64 {
        guard let column = columns[field] else { throw NotesError(.internalError, "a required column is absent") }
        guard let value = try column.integer(row, record: first + row) else { throw fail(column.name, row, "is missing (null)") }
        return value
    }

    func optionalInteger(_ field: Int, _ row: Int) throws -> Int64? {
        try columns[field]?.integer(row, record: first + row)
    }

    func optionalTime(_ field: Int, _ row: Int) throws -> Timestamp? {
        try columns[field]?.time(row, record: first + row)
    }
}

/// One column of a batch: its layout, where its values start, and (for a dictionary) its values.
struct ArrowColumn {
    enum Layout {
        case utf8(offsets: UnsafeRawPointer, large: Bool, data: UnsafePointer<UInt8>?)
        case view(views: UnsafeRawPointer, buffers: [UnsafePointer<UInt8>?], sizes: [Int64])
        case integer(UnsafeRawPointer, width: Int, signed: Bool)
        case bool(UnsafePointer<UInt8>)
        /// Values in `unit`s: 1 s, 1_000 ms, 1_000_000 µs, 1_000_000_000 ns per second.
        case timestamp(UnsafePointer<Int64>, perSecond: Int64)
        case dictionary(indices: UnsafeRawPointer, width: Int, signed: Bool, values: DictionaryValues)
    }

    let name: String
    let layout: Layout
    let validity: UnsafePointer<UInt8>?
    /// The index of the column's first value of this batch in its buffers.
    let start: Int
    /// How many values the batch reads.
    let rows: Int

    /// Reads and checks a column's structure: `rows` values from the array's own offset plus the
    /// batch's (`parentOffset`).
    init(name: String, schema: ArrowSchema, array: ArrowArray, parentOffset: Int, rows: Int) throws {
        self.name = name
        self.rows = rows
        func bad(_ message: String) -> NotesError {
            NotesError(.invalidArgument, "column \(name): \(message)", field: name)
        }
        guard let formatPointer = schema.format else { throw bad("its schema has no format") }
        let format = String(cString: formatPointer)
        guard array.length >= 0, array.offset >= 0, array.offset <= Int64(Int32.max), array.length <= Int64(Int32.max) else {
            throw bad("negative or impossible length (\(array.length)) or offset (\(array.offset))")
        }
        guard Int(array.length) >= parentOffset + rows else {
            throw bad("it has \(array.length) values, the batch has \(parentOffset + rows) records (the columns' lengths differ)")
        }
        start = Int(array.offset) + parentOffset
        let end = start + rows
        guard array.n_buffers >= 0, array.n_buffers <= 1 << 20, array.n_buffers == 0 || array.buffers != nil else {
            throw bad("malformed list of buffers")
        }
        let buffers = UnsafeBufferPointer(start: array.buffers, count: Int(array.n_buffers))
        func need(_ n: Int) throws {
            guard buffers.count == n else { throw bad("Arrow format \"\(format.prefix(20))\" has \(n) buffers, the array \(buffers.count)") }
        }
        func buffer(_ i: Int, _ bytes: Int, _ what: String) throws -> UnsafeRawPointer? {
            guard let pointer = buffers[i] else {
                if bytes == 0 { return nil }
                throw bad("its \(what) buffer is NULL")
            }
            try Self.checkReadable(pointer, bytes, "column \(name)'s \(what)", field: name)
            return pointer
        }
        func required(_ i: Int, _ bytes: Int, _ what: String) throws -> UnsafeRawPointer {
            // A zero-length buffer may be NULL; it is then never read.
            try buffer(i, bytes, what) ?? ArrowImport.nowhere
        }
        // Validity: absent means no nulls, unless the array says it has some.
        if buffers.count > 0, array.null_count != 0, let pointer = buffers[0] {
            try Self.checkReadable(pointer, (end + 7) / 8, "column \(name)'s validity", field: name)
            validity = pointer.assumingMemoryBound(to: UInt8.self)
        } else {
            guard array.null_count <= 0 || format == "n" else { throw bad("it has \(array.null_count) nulls and no validity buffer") }
            validity = nil
        }

        if let dictionarySchema = schema.dictionary {
            guard let width = Self.integerWidth(format) else { throw bad("dictionary indices must be integers, got \"\(format.prefix(20))\"") }
            guard let dictionaryArray = array.dictionary else { throw bad("it is dictionary-encoded and has no dictionary") }
            try need(2)
            let values = try ArrowColumn(name: name, schema: dictionarySchema.pointee, array: dictionaryArray.pointee, parentOffset: 0,
                                         rows: Int(dictionaryArray.pointee.length))
            switch values.layout {
            case .utf8, .view: break
            default: throw bad("only dictionaries of strings are read, this one holds \(values.layoutName)")
            }
            layout = .dictionary(indices: try required(1, end * width.bytes, "indices"), width: width.bytes, signed: width.signed,
                                 values: DictionaryValues(values, count: Int(dictionaryArray.pointee.length)))
            return
        }

        switch format {
        case "u", "U":
            try need(3)
            let large = format == "U", width = large ? 8 : 4
            let offsets = try required(1, (end + 1) * width, "offsets")
            func offset(_ i: Int) -> Int64 {
                large ? offsets.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self)
                      : Int64(offsets.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))
            }
            var previous = offset(start)
            guard previous >= 0 else { throw bad("its offsets are negative") }
            for i in (start + 1)..<(end + 1) {
                let next = offset(i)
                guard next >= previous else { throw bad("its offsets decrease at value \(i - start) (malformed)") }
                previous = next
            }
            let first = offset(start)
            guard previous - first <= ArrowImport.maxColumnBytes, previous <= Int64(Int.max / 2) else {
                throw NotesError(.validation, "column \(name) holds \(previous - first) bytes of text in one batch; the limit is "
                                 + "\(ArrowImport.maxColumnBytes) bytes (2 GiB) a batch: send it in smaller batches", field: name)
            }
            // Offsets past the data buffer: the bytes they name (and only those) must be mapped memory.
            var data: UnsafeRawPointer?
            if previous > first {
                guard let pointer = buffers[2] else { throw bad("its data buffer is NULL") }
                try Self.checkReadable(pointer, Int(previous - first), "column \(name)'s data", field: name, from: Int(first))
                data = pointer
            }
            layout = .utf8(offsets: offsets, large: large, data: data?.assumingMemoryBound(to: UInt8.self))
        case "vu":
            guard buffers.count >= 3 else { throw bad("Arrow format \"vu\" needs at least 3 buffers, the array has \(buffers.count)") }
            let views = try required(1, end * 16, "views")
            let dataCount = buffers.count - 3
            let sizesPointer = try required(buffers.count - 1, dataCount * 8, "variadic sizes")
            var sizes: [Int64] = []
            var data: [UnsafePointer<UInt8>?] = []
            var total: Int64 = 0
            for k in 0..<dataCount {
                let size = sizesPointer.loadUnaligned(fromByteOffset: 8 * k, as: Int64.self)
                guard size >= 0, size <= ArrowImport.maxColumnBytes else { throw bad("variadic buffer \(k) has an impossible size \(size)") }
                total += size
                sizes.append(size)
            }
            guard total <= ArrowImport.maxColumnBytes else {
                throw NotesError(.validation, "column \(name) holds \(total) bytes of text in one batch; the limit is "
                                 + "\(ArrowImport.maxColumnBytes) bytes (2 GiB) a batch: send it in smaller batches", field: name)
            }
            for (k, size) in sizes.enumerated() {
                data.append(try buffer(2 + k, Int(size), "data \(k)")?.assumingMemoryBound(to: UInt8.self))
            }
            for i in start..<end {
                let length = views.loadUnaligned(fromByteOffset: 16 * i, as: Int32.self)
                guard length >= 0 else { throw bad("value \(i - start) has a negative length") }
                guard length > 12 else { continue }
                let index = views.loadUnaligned(fromByteOffset: 16 * i + 8, as: Int32.self)
                let offset = views.loadUnaligned(fromByteOffset: 16 * i + 12, as: Int32.self)
                guard index >= 0, Int(index) < dataCount, offset >= 0, Int64(offset) + Int64(length) <= sizes[Int(index)] else {
                    throw bad("value \(i - start) points past its data buffer (malformed string_view)")
                }
            }
            layout = .view(views: views, buffers: data, sizes: sizes)
        case "b":
            try need(2)
            layout = .bool(try required(1, (end + 7) / 8, "values").assumingMemoryBound(to: UInt8.self))
        default:
            if let width = Self.integerWidth(format) {
                try need(2)
                layout = .integer(try required(1, end * width.bytes, "values"), width: width.bytes, signed: width.signed)
            } else if format.hasPrefix("ts"), format.count >= 4, format.dropFirst(3).first == ":" {
                let perSecond: Int64
                switch format.dropFirst(2).first {
                case "s": perSecond = 1
                case "m": perSecond = 1_000
                case "u": perSecond = 1_000_000
                case "n": perSecond = 1_000_000_000
                default: throw bad("unknown timestamp unit in \"\(format.prefix(20))\"")
                }
                try need(2)
                layout = .timestamp(try required(1, end * 8, "values").assumingMemoryBound(to: Int64.self), perSecond: perSecond)
            } else {
                throw NotesError(.validation, "column \(name) has Arrow type \"\(format.prefix(20))\", which NotesKit does not read "
                                 + "(strings, integers, booleans and timestamps are read)", field: name)
            }
        }

    }

    static func integerWidth(_ format: String) -> (bytes: Int, signed: Bool)? {
        switch format {
        case "c": (1, true)
        case "C": (1, false)
        case "s": (2, true)
        case "S": (2, false)
        case "i": (4, true)
        case "I": (4, false)
        case "l": (8, true)
        case "L": (8, false)
        default: nil
        }
    }

    /// Refuses memory that is not mapped (a buffer shorter than its array claims, a forged pointer)
    /// before it is read: the process must not crash on a malformed input.
    static func checkReadable(_ pointer: UnsafeRawPointer, _ bytes: Int, _ what: String, field: String? = nil, from offset: Int = 0) throws {
        guard bytes > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let (address, past) = UInt(bitPattern: pointer).addingReportingOverflow(UInt(max(offset, 0)))
        let (end, overflow) = address.addingReportingOverflow(UInt(bytes))
        guard !overflow, !past else { throw NotesError(.invalidArgument, "\(what) runs past the end of memory", field: field) }
        let first = address & ~UInt(page - 1)
        let length = Int(end - first)
        var pages = [UInt8](repeating: 0, count: (length + page - 1) / page)
        let ok = pages.withUnsafeMutableBufferPointer { vector in
            mincore(UnsafeMutableRawPointer(bitPattern: first), length, vector.baseAddress) == 0
        }
        guard ok else {
            throw NotesError(.invalidArgument, "\(what) runs past its buffer (\(bytes) bytes from \(pointer) are not all readable memory)",
                             field: field)
        }
    }

    /// Refuses a column whose type the field does not read, and dictionary indices out of range.
    func check(accepts kind: ArrowFieldKind) throws {
        if case let .dictionary(_, _, _, values) = layout {
            for row in 0..<rows where validity.map({ $0[(start + row) >> 3] & (1 << ((start + row) & 7)) != 0 }) ?? true {
                let index = dictionaryIndex(row)
                guard index >= 0, index < values.count else {
                    throw NotesError(.invalidArgument, "column \(name): dictionary index \(index) of value \(row) is out of range "
                                     + "(the dictionary has \(values.count) values)", field: name)
                }
            }
        }
        let ok: Bool
        switch (kind, layout) {
        case (.text, .utf8), (.text, .view), (.text, .dictionary): ok = true
        case (.flag, .bool), (.flag, .integer): ok = true
        case (.time, .timestamp), (.time, .integer), (.time, .utf8), (.time, .view), (.time, .dictionary): ok = true
        case (.integer, .integer): ok = true
        default: ok = false
        }
        guard ok else {
            let expected = switch kind {
            case .text: "strings"
            case .flag: "booleans (or integers 0 and 1)"
            case .time: "timestamps (or integer milliseconds since 1970, or ISO-8601 strings)"
            case .integer: "integers"
            }
            throw NotesError(.validation, "column \(name) must hold \(expected), got \(layoutName)", field: name)
        }
    }

    var layoutName: String {
        switch layout {
        case .utf8: "strings"
        case .view: "strings"
        case .dictionary: "strings"
        case .integer: "integers"
        case .bool: "booleans"
        case .timestamp: "timestamps"
        }
    }

    func isNull(_ row: Int) -> Bool {
        if let validity {
            let i = start + row
            if validity[i >> 3] & (1 << (i & 7)) == 0 { return true }
        }
        if case let .dictionary(_, _, _, values) = layout {
            let index = dictionaryIndex(row)
            return values.column.isNull(index)
        }
        return false
    }

    private func dictionaryIndex(_ row: Int) -> Int {
        guard case let .dictionary(indices, width, signed, _) = layout else { return 0 }
        return Self.integer(indices, start + row, width, signed)
    }

    private static func integer(_ p: UnsafeRawPointer, _ i: Int, _ width: Int, _ signed: Bool) -> Int {
        switch (width, signed) {
        case (1, true): Int(p.load(fromByteOffset: i, as: Int8.self))
        case (1, false): Int(p.load(fromByteOffset: i, as: UInt8.self))
        case (2, true): Int(p.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
        case (2, false): Int(p.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
        case (4, true): Int(p.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))
        case (4, false): Int(p.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
        case (_, true): Int(p.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self))
        default: Int(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))
        }
    }

    private func fail(_ record: Int, _ message: String) -> NotesError {
        NotesError(.validation, "record \(record): \(name) \(message)", field: name, line: record)
    }

    /// Invalid UTF-8 is an invalid argument, as for every string across the ABI.
    private func notUTF8(_ record: Int) -> NotesError {
        NotesError(.invalidArgument, "record \(record): \(name) is not valid UTF-8", field: name, line: record)
    }

    /// The text of `row` (nil when null), its UTF-8 checked.
    func text(_ row: Int, record: Int) throws -> String? {
        if isNull(row) { return nil }
        let bytes: UnsafeBufferPointer<UInt8>
        switch layout {
        case let .utf8(offsets, large, data):
            let i = start + row
            let (from, to) = large
                ? (Int(offsets.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self)), Int(offsets.loadUnaligned(fromByteOffset: 8 * i + 8, as: Int64.self)))
                : (Int(offsets.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self)), Int(offsets.loadUnaligned(fromByteOffset: 4 * i + 4, as: Int32.self)))
            bytes = UnsafeBufferPointer(start: data.map { $0 + from }, count: to - from)
        case let .view(views, buffers, _):
            let at = views + 16 * (start + row)
            let length = Int(at.loadUnaligned(as: Int32.self))
            if length <= 12 {
                // Inline: the text is in the view itself.
                guard let text = Self.string(UnsafeBufferPointer(start: (at + 4).assumingMemoryBound(to: UInt8.self), count: length)) else {
                    throw notUTF8(record)
                }
                return text
            }
            let index = Int(at.loadUnaligned(fromByteOffset: 8, as: Int32.self))
            let offset = Int(at.loadUnaligned(fromByteOffset: 12, as: Int32.self))
            bytes = UnsafeBufferPointer(start: buffers[index].map { $0 + offset }, count: length)
        case let .dictionary(_, _, _, values):
            return try values.text(dictionaryIndex(row), record: record)
        default:
            throw fail(record, "must be a string, got \(layoutName)")
        }
        guard let text = Self.string(bytes) else { throw notUTF8(record) }
        return text
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.isEmpty { return "" }
        return String.validatingUTF8(bytes)
    }

    func flag(_ row: Int, record: Int) throws -> Bool? {
        if isNull(row) { return nil }
        switch layout {
        case let .bool(values):
            let i = start + row
            return values[i >> 3] & (1 << (i & 7)) != 0
        case let .integer(values, width, signed):
            switch Self.integer(values, start + row, width, signed) {
            case 0: return false
            case 1: return true
            case let other: throw fail(record, "must be true or false (1 or 0), got \(other)")
            }
        default:
            throw fail(record, "must be true or false, got \(layoutName)")
        }
    }

    func integer(_ row: Int, record: Int) throws -> Int64? {
        if isNull(row) { return nil }
        guard case let .integer(values, width, signed) = layout else { throw fail(record, "must be an integer, got \(layoutName)") }
        if width == 8 && !signed {
            let value = values.loadUnaligned(fromByteOffset: 8 * (start + row), as: UInt64.self)
            guard value <= UInt64(Int64.max) else { throw fail(record, "is out of range (\(value) is past 2^63 - 1)") }
        }
        return Int64(Self.integer(values, start + row, width, signed))
    }

    func time(_ row: Int, record: Int) throws -> Timestamp? {
        if isNull(row) { return nil }
        switch layout {
        case let .timestamp(values, perSecond):
            let v = values[start + row]
            let ms: Int64
            if perSecond <= 1_000 {
                let (product, overflow) = v.multipliedReportingOverflow(by: 1_000 / perSecond)
                guard !overflow else { throw fail(record, "is out of range (years 0001 to 9999)") }
                ms = product
            } else {
                let divisor = perSecond / 1_000
                ms = v >= 0 ? v / divisor : -((-(v + 1)) / divisor) - 1  // floor: before 1970 too
            }
            return Timestamp(milliseconds: ms)
        case let .integer(values, width, signed):
            return Timestamp(milliseconds: Int64(Self.integer(values, start + row, width, signed)))
        default:
            guard let text = try text(row, record: record) else { return nil }
            guard let t = Timestamp(iso8601: text) else {
                throw fail(record, "must be an ISO-8601 time like 2026-11-29T15:28:06.123Z, got \"\(text.prefix(40))\"")
            }
            return t
        }
    }
}

/// The values of a dictionary-encoded column, each decoded once however many rows use it.
final class DictionaryValues {
    let column: ArrowColumn
    let count: Int
    private var decoded: [String?]
    private var done: [Bool]

    init(_ column: ArrowColumn, count: Int) {
        self.column = column
        self.count = count
        decoded = [String?](repeating: nil, count: count)
        done = [Bool](repeating: false, count: count)
    }

    func text(_ index: Int, record: Int) throws -> String? {
        if done[index] { return decoded[index] }
        let value = try column.text(index, record: record)
        decoded[index] = value
        done[index] = true
        return value
    }
}
