import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// One search over articles and messages, and snippets of hits. See include/noteskit.h.

@_cdecl("nk_store_search")
public func nk_store_search(_ handle: OpaquePointer?, _ query: UnsafePointer<CChar>?, _ kinds: Int32, _ since: Int64,
                            _ until: Int64, _ limit: Int64, _ after: UnsafePointer<CChar>?,
                            _ outOrder: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ outMessages: OutArray?, _ outMessagesSchema: OutSchema?,
                            _ outArray: OutArray?, _ outSchema: OutSchema?, _ outCursor: OutCursor?) -> Int32 {
    call {
        let order = try outPointer(outOrder, "out_order")
        let messagesArray = try outPointer(outMessages, "out_messages"), messagesSchema = try outPointer(outMessagesSchema, "out_messages_schema")
        let array = try outPointer(outArray, "out_array"), schema = try outPointer(outSchema, "out_schema")
        let cursor = try outPointer(outCursor, "out_cursor")
        guard kinds & ~3 == 0, kinds != 0 else {
            throw NotesError(.invalidArgument, "kinds must be NK_KIND_ARTICLES (1), NK_KIND_MESSAGES (2) or both, got \(kinds)", field: "kinds")
        }
        let page = try store(handle).searchBatches(
            try string(query, "query"), kinds: Store.SearchKinds(rawValue: kinds), range: try range(since, until),
            limit: count(limit), after: try optionalString(after, "after"))
        let articles = page.articles, messages = page.messages
        let letters = page.order.map { UInt8(ascii: $0 ? "a" : "m") }
        // Everything that can fail first, then the out-parameters (which cannot).
        let (messageRows, messageColumns) = try messages.finish(codePointOffsets: true)
        let (articleRows, articleColumns) = try articles.finish(codePointOffsets: true)
        let orderText = try ownedCString(letters)
        let next: UnsafeMutablePointer<CChar>?
        do {
            next = try page.next.map { try ownedCString(Array($0.utf8)) }
        } catch {
            free(orderText)
            throw error
        }
        exportSchema(messageColumns, to: messagesSchema)
        exportBatch(messageRows, messageColumns, to: messagesArray)
        exportSchema(articleColumns, to: schema)
        exportBatch(articleRows, articleColumns, to: array)
        order.pointee = orderText
        cursor.pointee = next
    }
}

@_cdecl("nk_snippet")
public func nk_snippet(_ text: UnsafePointer<CChar>?, _ spans: UnsafePointer<Int64>?, _ spanCount: Int64, _ width: Int64,
                       _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let text = try string(text, "text")
        guard spanCount >= 0, spanCount <= 1 << 32 else {
            throw NotesError(.invalidArgument, "span_count must be 0 or more, got \(spanCount)", field: "span_count")
        }
        var matches: [Range<Int>] = []
        if spanCount > 0 {
            guard let spans else { throw NotesError(.invalidArgument, "spans is NULL with span_count \(spanCount)", field: "spans") }
            for k in 0..<Int(spanCount) {
                let start = spans[2 * k], end = spans[2 * k + 1]
                guard start >= 0, end >= start, end <= Int64(Int32.max) else {
                    throw NotesError(.invalidArgument, "span \(start)..<\(end) is not a range of code points", field: "spans")
                }
                matches.append(Int(start)..<Int(end))
            }
        }
        guard width <= Int64(Int32.max) else {
            throw NotesError(.validation, "width is too large: \(width)", field: "width")
        }
        let snippet = try Snippet(of: text, matches: matches, width: Int(width))
        w.raw("{"); w.key("text"); w.string(snippet.text)
        w.raw(","); w.key("spans"); w.raw("[")
        for (k, span) in snippet.spans.enumerated() {
            if k > 0 { w.raw(",") }
            w.raw("["); w.int(Int64(span.lowerBound)); w.raw(","); w.int(Int64(span.upperBound)); w.raw("]")
        }
        w.raw("]}")
    }
}
