import CArrow
import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// Records out. Lists of records (pages, search pages, drafts, changes) leave as one Arrow record
// batch (ArrowArray + ArrowSchema), columns named as the record's fields; a single record leaves
// as a packed row (see include/noteskit.h, "Records"), measured faster than a batch of one.

public typealias OutArray = UnsafeMutablePointer<ArrowArray>
public typealias OutSchema = UnsafeMutablePointer<ArrowSchema>
public typealias OutCursor = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// Runs an export whose result is a batch: checks the out-parameters first (so a NULL one never
/// half-runs a call), then exports what `make` returns.
@inline(__always)
func callBatch(_ array: OutArray?, _ schema: OutSchema?, _ make: () throws -> ColumnBatch) -> Int32 {
    call {
        let array = try outPointer(array, "out_array"), schema = try outPointer(schema, "out_schema")
        try exportBatch(try make(), array: array, schema: schema)
    }
}

/// Runs an export whose result is a page: a batch and the next page's cursor (owned; NULL on the last page).
@inline(__always)
func callPage<T>(_ array: OutArray?, _ schema: OutSchema?, _ cursor: OutCursor?, _ batch: () -> ColumnBatch,
                 _ page: () throws -> Page<T>, _ append: (ColumnBatch, T) -> Void) -> Int32 {
    callPage(array, schema, cursor) {
        let page = try page()
        let columns = batch()
        columns.reserve(rows: page.items.count)
        for item in page.items {
            append(columns, item)
            columns.endRow()
        }
        return (columns, page.nextCursor)
    }
}

/// Runs an export whose result is a page the core read straight into columns.
@inline(__always)
func callPage(_ array: OutArray?, _ schema: OutSchema?, _ cursor: OutCursor?, _ page: () throws -> (ColumnBatch, String?)) -> Int32 {
    call {
        let array = try outPointer(array, "out_array"), schema = try outPointer(schema, "out_schema")
        let cursor = try outPointer(cursor, "out_cursor")
        var (columns, nextCursor) = try page()
        let next = try nextCursor.map { try ownedCString(Array($0.utf8)) }
        do {
            try exportBatch(columns, array: array, schema: schema)
        } catch {
            free(next)
            throw error
        }
        BatchPool.recycle(&columns)
        cursor.pointee = next
    }
}

// MARK: - Records as rows of a batch

extension ColumnBatch {
    func append(_ a: Article) {
        let c = columns
        c[0].append(a.id); c[1].append(a.uid); c[2].append(a.title); c[3].append(a.content)
        c[4].append(a.createdAt); c[5].append(a.updatedAt); c[6].append(a.revision)
    }

    func append(_ m: Message) {
        let c = columns
        c[0].append(m.id); c[1].append(m.uid); c[2].append(m.conversationId); c[3].append(m.content)
        c[4].append(m.fromMe); c[5].append(m.sentAt)
        if let sender = m.sender { c[6].append(sender) } else { c[6].appendNull() }
    }

    func append(_ v: Conversation) {
        let c = columns
        c[0].append(v.id); c[1].append(v.uid); c[2].append(v.title); c[3].append(v.createdAt); c[4].append(v.lastActivityAt)
    }

    static func drafts() -> ColumnBatch {
        ColumnBatch([Column("id", .int64), Column("uid", .string), Column("article_id", .int64, nullable: true),
                     Column("base_revision", .int64, nullable: true), Column("title", .string), Column("content", .string),
                     Column("created_at", .timestamp), Column("updated_at", .timestamp)])
    }

    func append(_ d: Draft) {
        let c = columns
        c[0].append(d.id); c[1].append(d.uid)
        if let v = d.articleId { c[2].append(v) } else { c[2].appendNull() }
        if let v = d.baseRevision { c[3].append(v) } else { c[3].appendNull() }
        c[4].append(d.title); c[5].append(d.content); c[6].append(d.createdAt); c[7].append(d.updatedAt)
    }

    static func changes() -> ColumnBatch {
        ColumnBatch([Column("seq", .int64), Column("entity", .string), Column("op", .string), Column("id", .int64),
                     Column("uid", .string), Column("revision", .int64, nullable: true), Column("at", .timestamp)])
    }

    func append(_ v: Change) {
        let c = columns
        c[0].append(v.seq); c[1].append(v.entity); c[2].append(v.operation.rawValue); c[3].append(v.entityId); c[4].append(v.uid)
        if let r = v.revision { c[5].append(r) } else { c[5].appendNull() }
        c[6].append(v.at)
    }
}

// MARK: - Packed rows

/// One record as a packed row: little-endian int64 total size, the record's integer fields
/// (times as UTC milliseconds, booleans 0/1, absent ids -1 ... see the header), the UTF-8 byte
/// length of each text field (-1 for null), then the texts' bytes.
struct PackedRow {
    var ints: [Int64] = []
    var texts: [String?] = []

    func owned() throws -> UnsafeMutablePointer<CChar> {
        var texts = texts
        let header = 8 * (1 + ints.count + texts.count)
        let size = header + texts.reduce(0) { $0 + ($1?.utf8.count ?? 0) }
        guard let memory = malloc(size) else { throw NotesError(.internalError, "out of memory") }
        memory.storeBytes(of: Int64(size).littleEndian, as: Int64.self)
        var at = 8
        for v in ints { (memory + at).storeBytes(of: v.littleEndian, as: Int64.self); at += 8 }
        for t in texts { (memory + at).storeBytes(of: Int64(t?.utf8.count ?? -1).littleEndian, as: Int64.self); at += 8 }
        for i in texts.indices where texts[i] != nil {
            texts[i]!.withUTF8 { bytes in
                if let base = bytes.baseAddress { memcpy(memory + at, base, bytes.count) }
                at += bytes.count
            }
        }
        return memory.assumingMemoryBound(to: CChar.self)
    }
}

extension PackedRow {
    init(_ a: Article) {
        ints = [a.id, a.createdAt.milliseconds, a.updatedAt.milliseconds, a.revision]
        texts = [a.uid, a.title, a.content]
    }

    init(_ m: Message) {
        ints = [m.id, m.conversationId, m.fromMe ? 1 : 0, m.sentAt.milliseconds]
        texts = [m.uid, m.content, m.sender]
    }

    init(_ c: Conversation) {
        ints = [c.id, c.createdAt.milliseconds, c.lastActivityAt.milliseconds]
        texts = [c.uid, c.title]
    }

    init(_ d: Draft) {
        ints = [d.id, d.articleId ?? -1, d.baseRevision ?? -1, d.createdAt.milliseconds, d.updatedAt.milliseconds]
        texts = [d.uid, d.title, d.content]
    }
}

extension PackedRow {
    /// A packed row straight from a stored row: the integer columns `ints`, then the text columns
    /// `texts` (the first is the uid, stored as 16 bytes; a NULL one is length -1), in one allocation
    /// (no `String` per field).
    static func owned(_ row: RawRow, ints: [Int], texts: [Int]) throws -> UnsafeMutablePointer<CChar> {
        try write(row, ints: ints, texts: texts, into: nil, capacity: 0)
    }

    /// The same row written into the caller's `buffer` when it fits in `capacity` bytes (no
    /// allocation, and nothing for the caller to free: the answer is `buffer` itself), else
    /// into new memory as ``owned(_:ints:texts:)``. The row is written as it is read (one pass
    /// over the columns); only one too long for the buffer is measured first.
    static func write(_ row: RawRow, ints: [Int], texts: [Int], into buffer: UnsafeMutableRawPointer?,
                      capacity: Int64) throws -> UnsafeMutablePointer<CChar> {
        if let buffer, let written = fill(row, ints: ints, texts: texts, into: buffer, capacity: Int(clamping: capacity)) {
            return written
        }
        var size = 8 * (1 + ints.count + texts.count)
        for k in texts.indices { size += withText(row, texts, k) { $0.count } }
        guard let memory = malloc(size) else { throw NotesError(.internalError, "out of memory") }
        guard let written = fill(row, ints: ints, texts: texts, into: memory, capacity: size) else {
            free(memory)
            throw NotesError(.internalError, "a packed row changed size while written")
        }
        return written
    }

    /// Text column `k` of `texts` in place (the first is the uid, stored as 16 bytes).
    @inline(__always)
    private static func withText<T>(_ row: RawRow, _ texts: [Int], _ k: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        k == 0 ? row.withUIDText(texts[k], body) : row.withUTF8(texts[k], body)
    }

    /// Writes the row into `memory`; nil (the memory's bytes past the header undefined) when it
    /// needs more than `capacity` bytes.
    private static func fill(_ row: RawRow, ints: [Int], texts: [Int], into memory: UnsafeMutableRawPointer,
                             capacity: Int) -> UnsafeMutablePointer<CChar>? {
        var at = 8
        var text = at + 8 * (ints.count + texts.count)
        guard text <= capacity else { return nil }
        for c in ints { (memory + at).storeBytes(of: row.int64(c).littleEndian, as: Int64.self); at += 8 }
        for k in texts.indices {
            if k > 0 && row.isNull(texts[k]) {
                (memory + at).storeBytes(of: Int64(-1).littleEndian, as: Int64.self)
                at += 8
                continue
            }
            let fits = withText(row, texts, k) { bytes -> Bool in
                guard bytes.count <= capacity - text else { return false }
                (memory + at).storeBytes(of: Int64(bytes.count).littleEndian, as: Int64.self)
                if let base = bytes.baseAddress, bytes.count > 0 { memcpy(memory + text, base, bytes.count) }
                text += bytes.count
                return true
            }
            guard fits else { return nil }
            at += 8
        }
        memory.storeBytes(of: Int64(text).littleEndian, as: Int64.self)
        return memory.assumingMemoryBound(to: CChar.self)
    }
}

/// Column numbers of the stored rows, in the packed row's order (see the header's "Records").
let articleRowInts = [0, 4, 5, 6], articleRowTexts = [1, 2, 3]
let messageRowInts = [0, 2, 4, 5], messageRowTexts = [1, 3, 6]

public typealias OutRow = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// Runs an export whose result is one record in `char **out_row`: checks `out` first, then hands
/// out the packed row.
@inline(__always)
func callRow(_ out: OutRow?, _ make: () throws -> PackedRow) -> Int32 {
    callRow(out, owned: { try make().owned() })
}

/// The same, for a row packed straight from the store's statement (``PackedRow/owned(_:ints:texts:)``).
@inline(__always)
func callRow(_ out: OutRow?, owned make: () throws -> UnsafeMutablePointer<CChar>) -> Int32 {
    call {
        let out = try outPointer(out, "out_row")
        out.pointee = try make()
    }
}
