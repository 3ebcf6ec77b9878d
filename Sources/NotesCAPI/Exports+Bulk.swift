import CArrow
import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// The bulk writes: records in as an Arrow stream (see ArrowImport.swift), what the store assigned
// out as one packed buffer (see `CreatedBuffer`).

public typealias OutBuffer = UnsafeMutablePointer<UnsafeMutableRawPointer?>

/// `flags` of the bulk writes: also hand back the texts stored (a caller that sent its own Python
/// strings has them already; one that sent Arrow columns does not).
let NK_CREATED_TEXT: Int32 = 1

/// Runs a bulk write: its out-parameter and store checked (the stream released if either is bad),
/// the records read into `make`'s values, `write` given them; what it assigned goes out.
private func callBulk<T>(_ handle: OpaquePointer?, _ records: UnsafeMutablePointer<ArrowArrayStream>?, _ out: OutBuffer?,
                         _ fields: [ArrowField], _ make: (Batch, Int) throws -> T,
                         _ write: (Store, [T]) throws -> CreatedBuffer) -> Int32 {
    call {
        let out = try ArrowImport.releasing(records) { try outPointer(out, "out_created") }
        let target = try ArrowImport.releasing(records) { try store(handle) }
        let input = try ArrowImport.read(records, name: "records", fields: fields, make)
        out.pointee = try write(target, input).handOut()
    }
}

private let articleFields = [
    ArrowField(name: "title", kind: .text, required: true), ArrowField(name: "content", kind: .text, required: true),
    ArrowField(name: "uid", kind: .text, required: false), ArrowField(name: "created_at", kind: .time, required: false),
    ArrowField(name: "updated_at", kind: .time, required: false),
]

@_cdecl("nk_article_create_many")
public func nk_article_create_many(_ handle: OpaquePointer?, _ records: UnsafeMutablePointer<ArrowArrayStream>?, _ flags: Int32,
                                   _ out: OutBuffer?) -> Int32 {
    callBulk(handle, records, out, articleFields, { (b: Batch, row: Int) throws -> NewArticle in
        NewArticle(title: try b.text(0, row), content: try b.text(1, row), uid: try b.optionalText(2, row),
                   createdAt: try b.optionalTime(3, row), updatedAt: try b.optionalTime(4, row))
    }) { target, input in
        let created = try target.articles.createMany(input)
        var buffer = try CreatedBuffer(count: created.count, times: 2, flags: false,
                                       texts: flags & NK_CREATED_TEXT != 0 ? [created.map(\.title), created.map(\.content)] : [])
        for (row, a) in created.enumerated() {
            buffer.set(row, id: a.id, uid: a.uid, time: a.createdAt, second: a.updatedAt)
        }
        return buffer
    }
}

private let messageFields = [
    ArrowField(name: "content", kind: .text, required: true), ArrowField(name: "from_me", kind: .flag, required: true),
    ArrowField(name: "uid", kind: .text, required: false), ArrowField(name: "sent_at", kind: .time, required: false),
    ArrowField(name: "sender", kind: .text, required: false),
]

@_cdecl("nk_message_insert_many")
public func nk_message_insert_many(_ handle: OpaquePointer?, _ conversationID: Int64, _ records: UnsafeMutablePointer<ArrowArrayStream>?,
                                   _ flags: Int32, _ out: OutBuffer?) -> Int32 {
    callBulk(handle, records, out, messageFields, { (b: Batch, row: Int) throws -> NewMessage in
        NewMessage(content: try b.text(0, row), fromMe: try b.flag(1, row), uid: try b.optionalText(2, row),
                   sentAt: try b.optionalTime(3, row), sender: try b.optionalText(4, row))
    }) { target, input in
        let created = try target.messages.insertMany(input, in: conversationID)
        var buffer = try CreatedBuffer(count: created.count, times: 1, flags: true,
                                       texts: flags & NK_CREATED_TEXT != 0 ? [created.map(\.content), created.map { $0.sender ?? "" }] : [])
        for (row, m) in created.enumerated() {
            buffer.set(row, id: m.id, uid: m.uid, time: m.sentAt, flag: m.fromMe)
        }
        return buffer
    }
}

/// What a bulk write assigned, packed column after column into one malloc'ed buffer (the layout
/// `include/noteskit.h` documents): fixed-width, so Python slices it with memoryviews.
///
///     int64 count; int64 id[count]; int64 time[times][count] (UTC ms); uint8 flag[count] (messages);
///     char uid[count][36]; then per text: int64 bytes, int64 offsets[count + 1] (in code points),
///     the UTF-8 bytes.
///
/// Each part starts on an 8-byte boundary.
struct CreatedBuffer {
    private let base: UnsafeMutableRawPointer
    private let count: Int, times: Int
    private let timesAt: Int, flagsAt: Int?, uidsAt: Int

    init(count: Int, times: Int, flags: Bool, texts: [[String]]) throws {
        func padded(_ n: Int) -> Int { (n + 7) & ~7 }
        self.count = count
        self.times = times
        timesAt = 8 + 8 * count
        var size = timesAt + 8 * times * count
        flagsAt = flags ? size : nil
        if flags { size += padded(count) }
        uidsAt = size
        size += padded(36 * count)
        let textsAt = size
        for column in texts {
            size += 8 * (count + 2)
            size += padded(column.reduce(0) { $0 + $1.utf8.count })
        }
        guard let memory = malloc(size) else { throw NotesError(.internalError, "out of memory (\(size) bytes for the result)") }
        base = memory
        base.storeBytes(of: Int64(count), as: Int64.self)
        var at = textsAt
        for column in texts {
            // The byte length, then offsets in code points (Python slices the decoded text by them),
            // then the UTF-8 bytes.
            let offsets = base + at + 8
            var used = 0, scalars = 0
            offsets.storeBytes(of: Int64(0), as: Int64.self)
            let data = base + at + 8 * (count + 2)
            for (row, text) in column.enumerated() {
                var text = text
                text.withUTF8 { utf8 in
                    if let source = utf8.baseAddress { memcpy(data + used, source, utf8.count) }
                    used += utf8.count
                    scalars += UTF8.codePoints(in: utf8)
                }
                (offsets + 8 * (row + 1)).storeBytes(of: Int64(scalars), as: Int64.self)
            }
            (base + at).storeBytes(of: Int64(used), as: Int64.self)
            at += 8 * (count + 2) + padded(used)
        }
    }

    mutating func set(_ row: Int, id: Int64, uid: String, time: Timestamp, second: Timestamp? = nil, flag: Bool = false) {
        (base + 8 + 8 * row).storeBytes(of: id, as: Int64.self)
        (base + timesAt + 8 * row).storeBytes(of: time.milliseconds, as: Int64.self)
        if let second { (base + timesAt + 8 * (count + row)).storeBytes(of: second.milliseconds, as: Int64.self) }
        if let flagsAt { (base + flagsAt + row).storeBytes(of: flag ? 1 : 0, as: UInt8.self) }
        var uid = uid
        uid.withUTF8 { utf8 in
            if let source = utf8.baseAddress { memcpy(base + uidsAt + 36 * row, source, min(36, utf8.count)) }
        }
    }

    /// The buffer, for the caller to release with `nk_free`.
    func handOut() -> UnsafeMutableRawPointer { base }
}
