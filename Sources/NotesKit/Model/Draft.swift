/// An unsaved edit: a new article being written, or an existing one being changed.
///
/// Drafts live in their own table, so an editor that crashes loses nothing typed into a draft.
/// `articleId` and `baseRevision` are nil for a new article; for an edit they name the article and
/// the revision the edit started from: saving fails with `.conflict` once that revision is stale.
public struct Draft: Equatable, Sendable {
    public var id: Int64
    public var uid: String
    public var articleId: Int64?
    public var baseRevision: Int64?
    public var title: String
    public var content: String
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(id: Int64, uid: String, articleId: Int64?, baseRevision: Int64?, title: String, content: String, createdAt: Timestamp, updatedAt: Timestamp) {
        self.id = id
        self.uid = uid
        self.articleId = articleId
        self.baseRevision = baseRevision
        self.title = title
        self.content = content
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
