/// A chat conversation: a titled thread of messages.
///
/// `id` is assigned by the store and increases; `uid` is a UUID that stays the same across export
/// and import. `lastActivityAt` orders the conversation list (most recent first): it is the later of
/// `createdAt` and the newest `sentAt` among the messages ever added to the conversation. It never
/// moves back: deleting a message or renaming the conversation leaves it as it is.
public struct Conversation: Equatable, Sendable {
    public var id: Int64
    public var uid: String
    public var title: String
    public var createdAt: Timestamp
    public var lastActivityAt: Timestamp

    public init(id: Int64, uid: String, title: String, createdAt: Timestamp, lastActivityAt: Timestamp) {
        self.id = id
        self.uid = uid
        self.title = title
        self.createdAt = createdAt
        self.lastActivityAt = lastActivityAt
    }
}
