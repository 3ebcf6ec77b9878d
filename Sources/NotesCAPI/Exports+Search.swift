import NotesKit

// Search. Hits come back as JSON pages (see JSON+Model.swift and include/noteskit.h).

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
                              _ caseSensitive: Int32, _ limit: Int64, _ after: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let page = try store(handle).articles.search(
            try string(query, "query"), field: try searchField(field), caseSensitive: try flag(caseSensitive, "case_sensitive"),
            limit: count(limit), after: try optionalString(after, "after"))
        w.page(page) { w, hit in w.hit("article", hit.spans) { $0.article(hit.record) } }
    }
}

@_cdecl("nk_message_search")
public func nk_message_search(_ handle: OpaquePointer?, _ query: UnsafePointer<CChar>?, _ conversationId: Int64,
                              _ flags: Int32, _ limit: Int64, _ after: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        guard flags & ~3 == 0 else {
            throw NotesError(.invalidArgument, "flags must be a combination of NK_SEARCH_CASE_SENSITIVE (1) and NK_SEARCH_OLDEST_FIRST (2), got \(flags)", field: "flags")
        }
        let page = try store(handle).messages.search(
            try string(query, "query"), conversation: conversationId == 0 ? nil : conversationId,
            caseSensitive: flags & 1 != 0, oldestFirst: flags & 2 != 0, limit: count(limit), after: try optionalString(after, "after"))
        w.page(page) { w, hit in w.hit("message", hit.spans) { $0.message(hit.record) } }
    }
}

@_cdecl("nk_store_reindex")
public func nk_store_reindex(_ handle: OpaquePointer?) -> Int32 {
    call { try store(handle).reindex() }
}
