import NotesKit

// Search. Hits come back as Arrow pages: the record's columns, then one span column per field searched.

/// The `case_sensitive` flag: 0 or 1, anything else is a caller bug.
func flag(_ value: Int32, _ name: String) throws -> Bool {
    guard value == 0 || value == 1 else {
        throw NotesError(.invalidArgument, "\(name) must be 0 or 1, got \(value)", field: name)
    }
    return value == 1
}

func searchField(_ pointer: UnsafePointer<CChar>?) throws -> SearchField {
    guard let text = try optionalString(pointer, "field") else { return .any }
    guard let field = SearchField(rawValue: text) else {
        throw NotesError(.validation, "field must be \"any\", \"title\" or \"content\", got \"\(text.prefix(40))\"", field: "field")
    }
    return field
}

@_cdecl("nk_article_search")
public func nk_article_search(_ handle: OpaquePointer?, _ query: UnsafePointer<CChar>?, _ field: UnsafePointer<CChar>?,
                              _ caseSensitive: Int32, _ since: Int64, _ until: Int64, _ order: Int32, _ limit: Int64,
                              _ after: UnsafePointer<CChar>?, _ outArray: OutArray?, _ outSchema: OutSchema?,
                              _ outCursor: OutCursor?) -> Int32 {
    callPage(outArray, outSchema, outCursor) {
        try store(handle).articles.searchBatch(
            try string(query, "query"), field: try searchField(field), caseSensitive: try flag(caseSensitive, "case_sensitive"),
            limit: count(limit), after: try optionalString(after, "after"), range: try range(since, until),
            ascending: try ascending(order, default: false))
    }
}

@_cdecl("nk_message_search")
public func nk_message_search(_ handle: OpaquePointer?, _ query: UnsafePointer<CChar>?, _ conversationId: Int64,
                              _ flags: Int32, _ since: Int64, _ until: Int64, _ limit: Int64, _ after: UnsafePointer<CChar>?,
                              _ outArray: OutArray?, _ outSchema: OutSchema?, _ outCursor: OutCursor?) -> Int32 {
    callPage(outArray, outSchema, outCursor) {
        guard flags & ~3 == 0 else {
            throw NotesError(.invalidArgument, "flags must be a combination of NK_SEARCH_CASE_SENSITIVE (1) and NK_SEARCH_OLDEST_FIRST (2), got \(flags)", field: "flags")
        }
        return try store(handle).messages.searchBatch(
            try string(query, "query"), conversation: conversationId == 0 ? nil : conversationId,
            caseSensitive: flags & 1 != 0, oldestFirst: flags & 2 != 0, limit: count(limit), after: try optionalString(after, "after"),
            range: try range(since, until))
    }
}

@_cdecl("nk_store_reindex")
public func nk_store_reindex(_ handle: OpaquePointer?) -> Int32 {
    call { try store(handle).reindex() }
}
