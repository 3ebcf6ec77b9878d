import CArrow
import NotesKit

// `select`: every record of a kind, filtered, as an Arrow stream read when the consumer asks.

/// "No bound" for the since/until arguments.
let NK_NO_TIME = Int64.min

func time(_ ms: Int64, _ name: String) throws -> Timestamp? {
    guard ms != NK_NO_TIME else { return nil }
    guard Timestamp.range.contains(ms) else {
        throw NotesError(.validation, "\(name) is outside the years 1 to 9999: \(ms) ms", field: name)
    }
    return Timestamp(milliseconds: ms)
}

/// 1 ascending, -1 descending, 0 the kind's default.
func ascending(_ order: Int32, default value: Bool) throws -> Bool {
    switch order {
    case 0: return value
    case 1: return true
    case -1: return false
    default: throw NotesError(.invalidArgument, "order must be 1 (ascending), -1 (descending) or 0 (default), got \(order)", field: "order")
    }
}

private func threadCount(_ threads: Int32) throws -> Int {
    guard (1...2).contains(threads) else {
        throw NotesError(.invalidArgument, "threads must be 1 or 2, got \(threads)", field: "threads")
    }
    return Int(threads)
}

private func articles(_ handle: OpaquePointer?, _ since: Int64, _ until: Int64, _ order: Int32) throws -> Selection {
    try store(handle).articles.select(since: try time(since, "since"), until: try time(until, "until"),
                                      ascending: try ascending(order, default: false))
}

private func messages(_ handle: OpaquePointer?, _ conversation: Int64, _ since: Int64, _ until: Int64, _ fromMe: Int32,
                      _ order: Int32) throws -> Selection {
    guard (-1...1).contains(fromMe) else {
        throw NotesError(.invalidArgument, "from_me must be -1 (anyone), 0 or 1, got \(fromMe)", field: "from_me")
    }
    guard conversation >= 0 else { throw NotesError.notFoundConversation(conversation) }
    return try store(handle).messages.select(
        conversation: conversation == 0 ? nil : conversation, since: try time(since, "since"), until: try time(until, "until"),
        fromMe: fromMe < 0 ? nil : fromMe == 1, ascending: try ascending(order, default: true))
}

/// `since_ms`/`until_ms` as a range (`NK_NO_TIME` for no bound).
func range(_ since: Int64, _ until: Int64) throws -> TimeRange {
    TimeRange(since: try time(since, "since"), until: try time(until, "until"))
}

@inline(__always)
func callStream(_ out: UnsafeMutablePointer<ArrowArrayStream>?, _ threads: Int32, _ make: () throws -> Selection) -> Int32 {
    call {
        let out = try outPointer(out, "out_stream")
        let threads = try threadCount(threads)
        exportStream(try SelectionSource(try make(), threads: threads), to: out)
    }
}


@_cdecl("nk_article_select")
public func nk_article_select(_ handle: OpaquePointer?, _ since: Int64, _ until: Int64, _ order: Int32, _ threads: Int32,
                              _ out: UnsafeMutablePointer<ArrowArrayStream>?) -> Int32 {
    callStream(out, threads) { try articles(handle, since, until, order) }
}

@_cdecl("nk_article_select_count")
public func nk_article_select_count(_ handle: OpaquePointer?, _ since: Int64, _ until: Int64, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try articles(handle, since, until, 0).count() }
}

@_cdecl("nk_message_select")
public func nk_message_select(_ handle: OpaquePointer?, _ conversation: Int64, _ since: Int64, _ until: Int64, _ fromMe: Int32,
                              _ order: Int32, _ threads: Int32, _ out: UnsafeMutablePointer<ArrowArrayStream>?) -> Int32 {
    callStream(out, threads) { try messages(handle, conversation, since, until, fromMe, order) }
}

@_cdecl("nk_message_select_count")
public func nk_message_select_count(_ handle: OpaquePointer?, _ conversation: Int64, _ since: Int64, _ until: Int64, _ fromMe: Int32,
                                    _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try messages(handle, conversation, since, until, fromMe, 0).count() }
}

@_cdecl("nk_conversation_select")
public func nk_conversation_select(_ handle: OpaquePointer?, _ threads: Int32, _ out: UnsafeMutablePointer<ArrowArrayStream>?) -> Int32 {
    callStream(out, threads) { try store(handle).conversations.select() }
}

@_cdecl("nk_conversation_select_count")
public func nk_conversation_select_count(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    callCount(out) { try store(handle).conversations.count() }
}

extension NotesError {
    static func notFoundConversation(_ id: Int64) -> NotesError {
        NotesError(.notFound, "conversation \(id) does not exist")
    }
}
