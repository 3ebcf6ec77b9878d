import CArrow
import NotesKit

// Counts, per-conversation figures, lookups and bulk edits by id. Ids go in as a C array of
// int64 (no JSON), records out as Arrow batches, rows of an update in as an Arrow stream.

/// The most ids one call takes (80 MB of them).
let maxIds: Int64 = 10_000_000

/// `count` ids at `ids`, copied out (NULL is allowed only for none).
func ids(_ pointer: UnsafePointer<Int64>?, _ count: Int64) throws -> [Int64] {
    guard (0...maxIds).contains(count) else {
        throw NotesError(.invalidArgument, "count must be between 0 and \(maxIds), got \(count)", field: "count")
    }
    guard count > 0 else { return [] }
    guard let pointer else { throw NotesError(.invalidArgument, "ids is NULL", field: "ids") }
    return Array(UnsafeBufferPointer(start: pointer, count: Int(count)))
}

/// `missing`: 0 raises NK_E_NOT_FOUND naming the missing ids, 1 leaves them out.
func missingPolicy(_ value: Int32) throws -> MissingPolicy {
    switch value {
    case 0: return .error
    case 1: return .skip
    default: throw NotesError(.invalidArgument, "missing must be 0 (error) or 1 (skip), got \(value)", field: "missing")
    }
}

/// Runs an export whose result is a count in `int64_t *out_count` (checked before any work).
@inline(__always)
func callCount(_ out: UnsafeMutablePointer<Int64>?, _ body: () throws -> Int) -> Int32 {
    call {
        let out = try outPointer(out, "out_count")
        out.pointee = Int64(try body())
    }
}

@_cdecl("nk_article_get_many")
public func nk_article_get_many(_ handle: OpaquePointer?, _ idList: UnsafePointer<Int64>?, _ n: Int64, _ missing: Int32,
                                _ outArray: OutArray?, _ outSchema: OutSchema?) -> Int32 {
    callBatch(outArray, outSchema) {
        try store(handle).articles.getManyBatch(try ids(idList, n), missing: try missingPolicy(missing))
    }
}

@_cdecl("nk_message_get_many")
public func nk_message_get_many(_ handle: OpaquePointer?, _ idList: UnsafePointer<Int64>?, _ n: Int64, _ missing: Int32,
                                _ outArray: OutArray?, _ outSchema: OutSchema?) -> Int32 {
    callBatch(outArray, outSchema) {
        try store(handle).messages.getManyBatch(try ids(idList, n), missing: try missingPolicy(missing))
    }
}

private let updateFields = [
    ArrowField(name: "id", kind: .integer, required: true), ArrowField(name: "title", kind: .text, required: false),
    ArrowField(name: "content", kind: .text, required: false), ArrowField(name: "expected_revision", kind: .integer, required: false),
]

@_cdecl("nk_article_update_many")
public func nk_article_update_many(_ handle: OpaquePointer?, _ rows: UnsafeMutablePointer<ArrowArrayStream>?, _ outArray: OutArray?,
                                   _ outSchema: OutSchema?) -> Int32 {
    call {
        // The stream is the library's from the call on: released whatever fails first.
        let (array, schema) = try ArrowImport.releasing(rows) { (try outPointer(outArray, "out_array"), try outPointer(outSchema, "out_schema")) }
        let target = try ArrowImport.releasing(rows) { try store(handle) }
        let input = try ArrowImport.read(rows, name: "rows", fields: updateFields) { (b: Batch, row: Int) throws -> ArticleUpdate in
            ArticleUpdate(id: try b.integer(0, row), title: try b.optionalText(1, row), content: try b.optionalText(2, row),
                          expectedRevision: try b.optionalInteger(3, row))
        }
        let updated = try target.articles.updateMany(input)
        let batch = ArticleStore.batch()
        for article in updated { batch.append(article); batch.endRow() }
        try exportBatch(batch, array: array, schema: schema)
    }
}

@_cdecl("nk_article_delete_many")
public func nk_article_delete_many(_ handle: OpaquePointer?, _ idList: UnsafePointer<Int64>?, _ n: Int64,
                                   _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try store(handle).articles.deleteMany(try ids(idList, n)) }
}

@_cdecl("nk_message_delete_many")
public func nk_message_delete_many(_ handle: OpaquePointer?, _ idList: UnsafePointer<Int64>?, _ n: Int64,
                                   _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try store(handle).messages.deleteMany(try ids(idList, n)) }
}

@_cdecl("nk_message_delete_range")
public func nk_message_delete_range(_ handle: OpaquePointer?, _ conversationID: Int64, _ since: Int64, _ until: Int64,
                                    _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try store(handle).messages.deleteRange(in: conversationID, range: try range(since, until)) }
}

@_cdecl("nk_conversation_find")
public func nk_conversation_find(_ handle: OpaquePointer?, _ title: UnsafePointer<CChar>?, _ outArray: OutArray?,
                                 _ outSchema: OutSchema?) -> Int32 {
    callBatch(outArray, outSchema) {
        let found = try store(handle).conversations.find(title: try string(title, "title"))
        let batch = ConversationStore.batch()
        for conversation in found { batch.append(conversation); batch.endRow() }
        return batch
    }
}

@_cdecl("nk_conversation_stats")
public func nk_conversation_stats(_ handle: OpaquePointer?, _ outStream: UnsafeMutablePointer<ArrowArrayStream>?) -> Int32 {
    callStream(outStream, 1) { try store(handle).conversations.stats() }
}
