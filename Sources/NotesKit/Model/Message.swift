/// One chat message in a conversation.
///
/// `fromMe` is true for a message the user sent (a bubble on the right), false for one received.
/// `content` is kept exactly as given (never trimmed). `sentAt` is the time of the write unless the
/// message was imported with its own time. History is ordered by `sentAt`, then `id`. `sender` is
/// the author's name where the chat has more than two people (an imported group chat); nil for the
/// two-person chats the app makes, where `fromMe` tells who wrote it.
public struct Message: Equatable, Sendable {
    public var id: Int64
    public var uid: String
    public var conversationId: Int64
    public var content: String
    public var fromMe: Bool
    public var sentAt: Timestamp
    public var sender: String?

    public init(id: Int64, uid: String, conversationId: Int64, content: String, fromMe: Bool, sentAt: Timestamp, sender: String? = nil) {
        self.id = id
        self.uid = uid
        self.conversationId = conversationId
        self.content = content
        self.fromMe = fromMe
        self.sentAt = sentAt
        self.sender = sender
    }
}

/// The fields of a message to add, as a bulk import gives them.
public struct NewMessage: Sendable {
    public var content: String
    public var fromMe: Bool
    /// Kept as given (lower-cased) when present; a fresh UUID otherwise.
    public var uid: String?
    /// Defaults to the time of the write.
    public var sentAt: Timestamp?
    /// The author's name (a group chat); nil by default.
    public var sender: String?

    public init(content: String, fromMe: Bool, uid: String? = nil, sentAt: Timestamp? = nil, sender: String? = nil) {
        self.content = content
        self.fromMe = fromMe
        self.uid = uid
        self.sentAt = sentAt
        self.sender = sender
    }
}
