/// One committed change, as the change feed records it.
///
/// `seq` increases with every change committed to the store, across processes.
public struct Change: Equatable, Sendable {
    public enum Operation: String, Sendable {
        case create, update, delete
    }

    public var seq: Int64
    /// `"article"`, `"conversation"` or `"message"`.
    public var entity: String
    public var operation: Operation
    public var entityId: Int64
    public var uid: String
    /// The revision after the change (articles); nil where the entity has none.
    public var revision: Int64?
    public var at: Timestamp

    public init(seq: Int64, entity: String, operation: Operation, entityId: Int64, uid: String, revision: Int64?, at: Timestamp) {
        self.seq = seq
        self.entity = entity
        self.operation = operation
        self.entityId = entityId
        self.uid = uid
        self.revision = revision
        self.at = at
    }
}
