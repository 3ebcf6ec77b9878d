/// How far a write that returned is kept, chosen when a store file is opened.
public enum Durability: String, Sendable {
    /// A write that returned survives the process being killed and a power cut: SQLite syncs the
    /// write-ahead log at every commit (`synchronous=FULL` in WAL mode). The default.
    case durable
    /// Faster writes: a write that returned survives the process being killed, but the last few
    /// commits may be lost on a power cut (`synchronous=NORMAL` in WAL mode: the log is synced only
    /// at checkpoints). The file stays consistent either way.
    case fast
}
