import NotesKit

// Articles and drafts. A record comes back as a packed row, a list as an Arrow batch (see ArrowExport+Records.swift).

public typealias OutJSON = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

@_cdecl("nk_article_create")
public func nk_article_create(_ handle: OpaquePointer?, _ title: UnsafePointer<CChar>?, _ content: UnsafePointer<CChar>?,
                              _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.create(title: try string(title, "title"), content: try string(content, "content")))
    }
}

@_cdecl("nk_article_get")
public func nk_article_get(_ handle: OpaquePointer?, _ id: Int64, _ buffer: UnsafeMutableRawPointer?, _ capacity: Int64,
                           _ out: OutRow?) -> Int32 {
    callRow(out, owned: {
        try store(handle).articles.withRow(id) {
            try PackedRow.write($0, ints: articleRowInts, texts: articleRowTexts, into: buffer, capacity: capacity)
        }
    })
}

@_cdecl("nk_article_update")
public func nk_article_update(_ handle: OpaquePointer?, _ id: Int64, _ title: UnsafePointer<CChar>?, _ content: UnsafePointer<CChar>?,
                              _ expectedRevision: Int64, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.update(
            id, title: try optionalString(title, "title"), content: try optionalString(content, "content"),
            expectedRevision: expectedRevision > 0 ? expectedRevision : nil))
    }
}

@_cdecl("nk_article_delete")
public func nk_article_delete(_ handle: OpaquePointer?, _ id: Int64) -> Int32 {
    call { try store(handle).articles.delete(id) }
}

@_cdecl("nk_article_list")
public func nk_article_list(_ handle: OpaquePointer?, _ limit: Int64, _ after: UnsafePointer<CChar>?, _ since: Int64, _ until: Int64,
                            _ order: Int32, _ outArray: OutArray?, _ outSchema: OutSchema?, _ outCursor: OutCursor?) -> Int32 {
    callPage(outArray, outSchema, outCursor) {
        try store(handle).articles.listBatch(limit: count(limit), after: try optionalString(after, "after"), range: try range(since, until),
                                             ascending: try ascending(order, default: false))
    }
}

@_cdecl("nk_draft_new")
public func nk_draft_new(_ handle: OpaquePointer?, _ title: UnsafePointer<CChar>?, _ content: UnsafePointer<CChar>?,
                         _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.newDraft(title: try optionalString(title, "title"),
                                                        content: try optionalString(content, "content") ?? ""))
    }
}

@_cdecl("nk_draft_edit")
public func nk_draft_edit(_ handle: OpaquePointer?, _ articleID: Int64, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.edit(articleID))
    }
}

@_cdecl("nk_draft_get")
public func nk_draft_get(_ handle: OpaquePointer?, _ id: Int64, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.draft(id))
    }
}

@_cdecl("nk_draft_list")
public func nk_draft_list(_ handle: OpaquePointer?, _ outArray: OutArray?, _ outSchema: OutSchema?) -> Int32 {
    callBatch(outArray, outSchema) {
        let drafts = try store(handle).articles.drafts()
        let batch = ColumnBatch.drafts()
        for d in drafts { batch.append(d); batch.endRow() }
        return batch
    }
}

@_cdecl("nk_draft_update")
public func nk_draft_update(_ handle: OpaquePointer?, _ id: Int64, _ title: UnsafePointer<CChar>?, _ content: UnsafePointer<CChar>?,
                            _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.updateDraft(id, title: try optionalString(title, "title"),
                                                           content: try optionalString(content, "content")))
    }
}

@_cdecl("nk_draft_save")
public func nk_draft_save(_ handle: OpaquePointer?, _ id: Int64, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).articles.saveDraft(id))
    }
}

@_cdecl("nk_draft_discard")
public func nk_draft_discard(_ handle: OpaquePointer?, _ id: Int64) -> Int32 {
    call { try store(handle).articles.discardDraft(id) }
}
