// The records every exchange format carries, the field rules they share, and the uids derived
// for records that come without one.

/// An article as a file gives it. Missing times default to the time of the import, a missing
/// `updatedAt` to `createdAt`, a missing revision to 1, a missing uid to one derived from the record.
struct ArticleRecord {
    var uid: String?
    var title: String
    var content: String
    var createdAt: Timestamp?
    var updatedAt: Timestamp?
    var revision: Int64?
    /// When the file was last modified (a Markdown file): a text edited in an editor, whose front
    /// matter still has the old `updated`, is newer than the stored one when this is later.
    var modifiedAt: Timestamp? = nil
}

/// A draft as a file gives it: `articleUid` names the article it edits (nil for a new article's).
struct DraftRecord {
    var uid: String?
    var articleUid: String?
    var baseRevision: Int64?
    var title: String
    var content: String
    var createdAt: Timestamp?
    var updatedAt: Timestamp?
}

/// A conversation as a file gives it. `lastActivityAt` defaults to `createdAt`; the messages
/// imported into it move it forward as sending them would.
struct ConversationRecord {
    var uid: String?
    var title: String
    var createdAt: Timestamp?
    var lastActivityAt: Timestamp?
}

/// A message as a file gives it: its conversation by uid (JSON, JSON Lines, CSV), or by title
/// only (a CSV without conversation uids: the conversation's uid is derived from its title).
struct MessageRecord {
    var uid: String?
    var conversationUid: String?
    var conversationTitle: String?
    var content: String
    var fromMe: Bool
    var sentAt: Timestamp?
    /// The author's name (a group chat), nil when the file has none.
    var sender: String? = nil
    /// What identifies a message without a uid, when the file has better than its text and time
    /// (a Telegram chat's id and message id): its derived uid is made from this.
    var identity: [String]? = nil
    /// A transcript's message, which has no uid: it is taken as already stored when its
    /// conversation has as many messages of the same second, sender and text as it has come up so
    /// far in the file.
    var matchByContent = false
}

/// Why an import left a record out (listed in ``ImportReport/skips``).
public enum SkipReason: String, Sendable, CaseIterable {
    case unchanged = "the store holds it already, unchanged"
    case keptBySkip = "the store has a record with its uid (on_conflict=\"skip\" keeps it)"
    case notNewer = "the stored record is as new or newer (on_conflict=\"newer\")"
    case messageStored = "the store has a message with its uid (messages are never rewritten)"
    case transcriptMessageStored = "its conversation holds the same message already"
    case emptyNote = "the note is empty"
    case serviceMessage = "a service message (joins, pins, calls, ...), not something someone wrote"
    case systemMessage = "a system line (encryption notice, joins, ...), not something someone wrote"
    case mediaOnly = "a photo, file or sticker without text: the export does not include it"
}

/// One record an import left out: where it is in the file, and why.
public struct SkippedRecord: Sendable, Equatable {
    public var file: String
    public var line: Int
    public var reason: SkipReason
}

/// A record read from an import file.
enum ExchangeRecord {
    case article(ArticleRecord)
    case draft(DraftRecord)
    case conversation(ConversationRecord)
    case message(MessageRecord)
}

/// The kinds of record, each with its own uid space.
enum Entity: Int, CaseIterable {
    case article, draft, conversation, message

    /// The entity's name in the formats (JSON Lines `type`, NotesKit JSON section in the singular).
    var name: String {
        switch self {
        case .article: "article"
        case .draft: "draft"
        case .conversation: "conversation"
        case .message: "message"
        }
    }
}

/// A format error at no particular place yet (the importer adds the file and line).
func formatError(_ field: String?, _ message: String) -> NotesError {
    NotesError(.format, message, field: field)
}

func formatError(_ field: String?, _ message: NotesError.Text) -> NotesError {
    NotesError(.format, message, field: field)
}

// MARK: - Field rules

/// The field values every format parses the same way, refusing what the model refuses: each
/// failure is a `.format` error naming the field.
enum Fields {
    static func uid(_ text: String, field: String = "uid") throws -> String {
        // Most uids arrive already canonical: check them in place, without copying.
        if isCanonicalUID(text) { return text }
        do {
            return try UID.normalized(text, field: field)
        } catch let error as NotesError {
            throw formatError(field, error.message)
        }
    }

    /// True for a lower-case, hyphenated UUID (what ``UID/normalized(_:field:)`` returns).
    static func isCanonicalUID(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isCanonicalUID(utf8: $0) }
    }

    private static func isCanonicalUID(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        for c in utf8 {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == 45 else { return false }
            } else {
                guard (48...57).contains(c) || (97...102).contains(c) else { return false }
            }
            i += 1
        }
        return i == 36
    }

    static func revision(_ value: Int64, field: String = "revision") throws -> Int64 {
        guard value >= 1 else { throw formatError(field, "\(field) must be a whole number ≥ 1, got \(value)") }
        return value
    }

    /// A whole number written as text (CSV, front matter).
    static func integer(_ text: String, field: String) throws -> Int64 {
        guard let v = Int64(text) else { throw formatError(field, "\(field) must be a whole number, got \"\(text.prefix(40))\"") }
        return v
    }

    /// `true`/`false` (also `1`/`0`, `yes`/`no`, any case) written as text.
    static func bool(_ text: String, field: String) throws -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw formatError(field, "\(field) must be true or false, got \"\(text.prefix(40))\"")
        }
    }

    /// Runs a model rule, turning its `.validation` error into a `.format` one.
    static func check(_ rule: () throws -> Void) throws {
        do {
            try rule()
        } catch let error as NotesError where error.kind == .validation {
            throw formatError(error.field, error.message)
        }
    }

    static func article(_ r: ArticleRecord) throws -> ArticleRecord {
        try check { try Article.validate(title: r.title, content: r.content) }
        var r = r
        r.uid = try r.uid.map { try uid($0) }
        if let revision = r.revision { _ = try self.revision(revision) }
        return r
    }

    static func conversation(_ r: ConversationRecord) throws -> ConversationRecord {
        try check { try Conversation.validate(title: r.title) }
        var r = r
        r.uid = try r.uid.map { try uid($0) }
        return r
    }

    static func message(_ r: MessageRecord) throws -> MessageRecord {
        try check { try Message.validate(content: r.content) }
        try check { try Message.validate(sender: r.sender) }
        var r = r
        r.uid = try r.uid.map { try uid($0) }
        r.conversationUid = try r.conversationUid.map { try uid($0, field: "conversation_uid") }
        if let title = r.conversationTitle {
            do {
                try Conversation.validate(title: title)
            } catch let error as NotesError {
                throw formatError("conversation_title", error.message.replacingTitle())
            }
        }
        guard r.conversationUid != nil || r.conversationTitle != nil else {
            throw formatError("conversation_uid", "conversation_uid is missing")
        }
        return r
    }

    static func draft(_ r: DraftRecord) throws -> DraftRecord {
        try check { try ArticleStore.checkDraftText(title: r.title, content: r.content) }
        var r = r
        r.uid = try r.uid.map { try uid($0) }
        r.articleUid = try r.articleUid.map { try uid($0, field: "article_uid") }
        if let base = r.baseRevision { _ = try revision(base, field: "base_revision") }
        return r
    }
}

// MARK: - Reading JSON records

extension JSONObject {
    /// A record of an exchange file: its values are `.format` errors.
    init(record value: JSONValue, what: String = "record") throws {
        try self.init(value, kind: .format, what: what)
    }

    func optionalTimestamp(_ field: String, _ times: TimeReader) throws -> Timestamp? {
        try value(field).flatMap { try times.timestamp($0, field: field) }
    }

    static let articleFields = ["uid", "title", "content", "created_at", "updated_at", "revision"]
    static let draftFields = ["uid", "article_uid", "base_revision", "title", "content", "created_at", "updated_at"]
    static let conversationFields = ["uid", "title", "created_at", "last_activity_at"]
    static let messageFields = ["uid", "conversation_uid", "content", "from_me", "sent_at", "sender"]

    /// The record as `entity`; `extra` names fields the container allows besides (JSON Lines' `type`).
    func record(_ entity: Entity, extra: [String] = [], times: TimeReader) throws -> ExchangeRecord {
        switch entity {
        case .article:
            try only(extra + Self.articleFields)
            return .article(try Fields.article(ArticleRecord(
                uid: try optionalString("uid"), title: try string("title"), content: try string("content"),
                createdAt: try optionalTimestamp("created_at", times), updatedAt: try optionalTimestamp("updated_at", times),
                revision: try optionalInt("revision"))))
        case .draft:
            try only(extra + Self.draftFields)
            return .draft(try Fields.draft(DraftRecord(
                uid: try optionalString("uid"), articleUid: try optionalString("article_uid"), baseRevision: try optionalInt("base_revision"),
                title: try string("title"), content: try string("content"),
                createdAt: try optionalTimestamp("created_at", times), updatedAt: try optionalTimestamp("updated_at", times))))
        case .conversation:
            try only(extra + Self.conversationFields)
            return .conversation(try Fields.conversation(ConversationRecord(
                uid: try optionalString("uid"), title: try string("title"), createdAt: try optionalTimestamp("created_at", times),
                lastActivityAt: try optionalTimestamp("last_activity_at", times))))
        case .message:
            try only(extra + Self.messageFields)
            return .message(try Fields.message(MessageRecord(
                uid: try optionalString("uid"), conversationUid: try string("conversation_uid"), conversationTitle: nil,
                content: try string("content"), fromMe: try bool("from_me"), sentAt: try optionalTimestamp("sent_at", times), sender: try optionalString("sender"))))
        }
    }
}

// MARK: - Writing JSON records

extension JSONWriter {
    /// Opens an exchange record: its `{`, its `"type": kind` when `type` (a stream that mixes
    /// kinds), then its uid.
    mutating func openRecord(_ kind: StaticString, uid: String, type: Bool) {
        raw("{")
        if type { key("type"); raw("\""); raw(kind); raw("\",") }
        key("uid"); string(uid)
    }

    /// An article as the exchange formats write it: every field but the store-local id.
    mutating func exchangeArticle(_ a: Article, type: Bool) {
        openRecord("article", uid: a.uid, type: type)
        raw(","); key("title"); string(a.title)
        raw(","); key("content"); string(a.content)
        raw(","); key("created_at"); timestamp(a.createdAt)
        raw(","); key("updated_at"); timestamp(a.updatedAt)
        raw(","); key("revision"); int(a.revision)
        raw("}")
    }

    /// A draft as the exchange formats write it: the article it edits by uid, not by id.
    mutating func exchangeDraft(_ d: Draft, articleUid: String?, type: Bool) {
        openRecord("draft", uid: d.uid, type: type)
        raw(","); key("article_uid"); if let articleUid { string(articleUid) } else { null() }
        raw(","); key("base_revision"); if let b = d.baseRevision, articleUid != nil { int(b) } else { null() }
        raw(","); key("title"); string(d.title)
        raw(","); key("content"); string(d.content)
        raw(","); key("created_at"); timestamp(d.createdAt)
        raw(","); key("updated_at"); timestamp(d.updatedAt)
        raw("}")
    }
}

extension JSONWriter {
    mutating func exchangeConversation(_ c: Conversation, type: Bool) {
        openRecord("conversation", uid: c.uid, type: type)
        raw(","); key("title"); string(c.title)
        raw(","); key("created_at"); timestamp(c.createdAt)
        raw(","); key("last_activity_at"); timestamp(c.lastActivityAt)
        raw("}")
    }

    /// A message as the exchange formats write it: its conversation by uid, not by id.
    mutating func exchangeMessage(_ m: Message, conversationUid: String, type: Bool) {
        openRecord("message", uid: m.uid, type: type)
        raw(","); key("conversation_uid"); string(conversationUid)
        raw(","); key("content"); string(m.content)
        raw(","); key("from_me"); bool(m.fromMe)
        raw(","); key("sent_at"); timestamp(m.sentAt)
        if let sender = m.sender { raw(","); key("sender"); string(sender) }
        raw("}")
    }
}

private extension String {
    /// A title rule's message, about the conversation's title.
    func replacingTitle() -> String {
        hasPrefix("title ") ? "conversation_title " + dropFirst(6) : self
    }
}

// MARK: - Derived uids

/// Uids for records that come without one (a hand-made CSV, a Markdown file from another app, a
/// chat transcript): a stable 128-bit hash of what identifies the record, written as a UUID
/// (version 8, "custom"). The same record in the same file gets the same uid every time, so a
/// second import finds it. Not cryptographic.
enum DerivedUID {
    static func make(_ parts: [String]) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x6c62_272e_07bb_0142
        for part in parts {
            for byte in part.utf8 {
                a = (a ^ UInt64(byte)) &* 0x100_0000_01b3
                b = (b ^ UInt64(byte)) &* 0x9e37_79b9_7f4a_7c15
                b = (b << 31) | (b >> 33)
            }
            // A separator no UTF-8 text contains, so ["ab", "c"] and ["a", "bc"] differ.
            a = (a ^ 0xff) &* 0x100_0000_01b3
            b = ((b ^ 0xff) &* 0x9e37_79b9_7f4a_7c15)
        }
        let hi = mix(a ^ (b >> 17)), lo = mix(b &+ (a << 13))
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: hi >> (56 - 8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: lo >> (56 - 8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(45) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// splitmix64's finalizer.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

extension UID {
    /// The 128 bits of a normalized (lower-case, hyphenated) UUID, for compact sets of uids.
    /// (Read in place, see ``UID/halves(_:)``.)
    static func bits(_ uid: String) -> UInt128 {
        var uid = uid
        return uid.withUTF8 { utf8 in
            var value: UInt128 = 0
            for c in utf8 where c != 45 {
                let digit: UInt8 = c >= 97 ? c - 87 : c >= 65 ? c - 55 : c &- 48
                value = value << 4 | UInt128(digit & 15)
            }
            return value
        }
    }
}

/// A set of uids as ``UID/bits(_:)`` gives them, for an import's check that a file names each
/// record once: one flat table probed linearly, hashed with a seed drawn per set (a file cannot
/// choose uids that collide), 16 bytes a uid at most half full. An insert is a hash and a probe
/// or two (`Set`'s hashing and growth were most of the check on an import's writing thread).
struct UIDSet {
    /// 0 marks an empty slot (the uid 0 is `hasZero`).
    private var slots: [UInt128] = []
    private var count = 0
    private var shift: UInt64 = 64
    private var hasZero = false
    private let seed = UInt64.random(in: .min ... .max)

    /// Inserts `uid`: false when the set had it.
    mutating func insert(_ uid: UInt128) -> Bool {
        guard uid != 0 else {
            defer { hasZero = true }
            return !hasZero
        }
        if (count + 1) * 2 > slots.count { resize(to: max(1 << 10, slots.count * 2)) }
        let (seed, shift) = (seed, shift)
        let inserted = slots.withUnsafeMutableBufferPointer { Self.place(uid, in: $0, seed: seed, shift: shift) }
        if inserted { count += 1 }
        return inserted
    }

    private mutating func resize(to size: Int) {
        let old = slots
        slots = [UInt128](repeating: 0, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        let (seed, shift) = (seed, shift)
        slots.withUnsafeMutableBufferPointer { table in
            for uid in old where uid != 0 { _ = Self.place(uid, in: table, seed: seed, shift: shift) }
        }
    }

    private static func place(_ uid: UInt128, in table: UnsafeMutableBufferPointer<UInt128>, seed: UInt64, shift: UInt64) -> Bool {
        let hash = DerivedUID.mix(DerivedUID.mix(UInt64(truncatingIfNeeded: uid >> 64) ^ seed) ^ UInt64(truncatingIfNeeded: uid))
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash >> shift) & mask
        while true {
            let slot = table[i]
            if slot == uid { return false }
            if slot == 0 {
                table[i] = uid
                return true
            }
            i = (i + 1) & mask
        }
    }
}
