import NotesKit

// Conversations and messages. A record comes back as a packed row, a list as an Arrow batch (see ArrowExport+Records.swift).

@_cdecl("nk_conversation_create")
public func nk_conversation_create(_ handle: OpaquePointer?, _ title: UnsafePointer<CChar>?, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).conversations.create(title: try string(title, "title")))
    }
}

@_cdecl("nk_conversation_get")
public func nk_conversation_get(_ handle: OpaquePointer?, _ id: Int64, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).conversations.get(id))
    }
}

@_cdecl("nk_conversation_list")
public func nk_conversation_list(_ handle: OpaquePointer?, _ limit: Int64, _ after: UnsafePointer<CChar>?, _ outArray: OutArray?,
                                 _ outSchema: OutSchema?, _ outCursor: OutCursor?) -> Int32 {
    callPage(outArray, outSchema, outCursor) {
        try store(handle).conversations.listBatch(limit: count(limit), after: try optionalString(after, "after"))
    }
}

@_cdecl("nk_conversation_rename")
public func nk_conversation_rename(_ handle: OpaquePointer?, _ id: Int64, _ title: UnsafePointer<CChar>?, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).conversations.rename(id, title: try string(title, "title")))
    }
}

@_cdecl("nk_conversation_delete")
public func nk_conversation_delete(_ handle: OpaquePointer?, _ id: Int64) -> Int32 {
    call { try store(handle).conversations.delete(id) }
}

@_cdecl("nk_conversation_history")
public func nk_conversation_history(_ handle: OpaquePointer?, _ conversationID: Int64, _ limit: Int64, _ before: UnsafePointer<CChar>?,
                                    _ since: Int64, _ until: Int64, _ outArray: OutArray?, _ outSchema: OutSchema?,
                                    _ outCursor: OutCursor?) -> Int32 {
    callPage(outArray, outSchema, outCursor) {
        try store(handle).messages.historyBatch(of: conversationID, limit: count(limit), before: try optionalString(before, "before"),
                                                range: try range(since, until))
    }
}

@_cdecl("nk_message_send")
public func nk_message_send(_ handle: OpaquePointer?, _ conversationID: Int64, _ text: UnsafePointer<CChar>?, _ out: OutRow?) -> Int32 {
    callRow(out) {
        PackedRow(try store(handle).messages.send(try string(text, "content"), in: conversationID))
    }
}

@_cdecl("nk_message_receive")
public func nk_message_receive(_ handle: OpaquePointer?, _ conversationID: Int64, _ text: UnsafePointer<CChar>?,
                               _ sentAt: UnsafePointer<CChar>?, _ out: OutRow?) -> Int32 {
    callRow(out) {
        let content = try string(text, "content")
        let time = try optionalString(sentAt, "sent_at").map { text in
            guard let t = Timestamp(iso8601: text) else {
                throw NotesError(.validation, "sent_at must be an ISO-8601 time like 2026-11-29T15:28:06.123Z, got \"\(text.prefix(40))\"",
                                 field: "sent_at")
            }
            return t
        }
        return PackedRow(try store(handle).messages.receive(content, in: conversationID, sentAt: time))
    }
}

@_cdecl("nk_message_get")
public func nk_message_get(_ handle: OpaquePointer?, _ id: Int64, _ out: OutRow?) -> Int32 {
    callRow(out, owned: { try store(handle).messages.withRow(id) { try PackedRow.owned($0, ints: messageRowInts, texts: messageRowTexts) } })
}

@_cdecl("nk_message_delete")
public func nk_message_delete(_ handle: OpaquePointer?, _ id: Int64) -> Int32 {
    call { try store(handle).messages.delete(id) }
}
