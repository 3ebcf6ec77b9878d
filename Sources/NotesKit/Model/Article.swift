/// A saved article: a title and a body.
///
/// `id` is assigned by the store and increases; `uid` is a UUID that stays the same across export
/// and import. Timestamps are UTC milliseconds since 1970 (``Timestamp``), `revision` starts at 1
/// and grows by one with every saved change.
public struct Article: Equatable, Sendable {
    public var id: Int64
    public var uid: String
    public var title: String
    public var content: String
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var revision: Int64

    public init(id: Int64, uid: String, title: String, content: String, createdAt: Timestamp, updatedAt: Timestamp, revision: Int64) {
        self.id = id
        self.uid = uid
        self.title = title
        self.content = content
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.revision = revision
    }
}

/// The fields of an article to create, as a bulk import gives them.
public struct NewArticle: Sendable {
    public var title: String
    public var content: String
    /// Kept as given (lower-cased) when present; a fresh UUID otherwise.
    public var uid: String?
    /// Defaults to the time of the write.
    public var createdAt: Timestamp?
    /// Defaults to `createdAt`.
    public var updatedAt: Timestamp?

    public init(title: String, content: String, uid: String? = nil, createdAt: Timestamp? = nil, updatedAt: Timestamp? = nil) {
        self.title = title
        self.content = content
        self.uid = uid
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
