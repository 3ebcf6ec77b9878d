/// What a write did to the stored records, as the stores announce it (``WriteContext/announce(_:)``)
/// inside the write's transaction, right after the row changed.
///
/// The stores write rows and announce; they do not call what follows the records. The change feed
/// (``FeedRecorder``) and the search index (`SearchIndexObserver`, in `Search/`) are the two
/// observers; another backend gets both by announcing the same changes.
enum RecordChange {
    /// New articles, ids assigned, in id order.
    case articlesCreated([Article])
    case articleUpdated(from: Article, to: Article)
    /// A deleted article, as it was.
    case articleDeleted(Article)
    /// New messages, ids assigned, in id order.
    case messagesCreated([Message])
    /// Deleted messages (their text, for the search index), in the order the feed lists them.
    case messagesDeleted([DeletedMessage])
    case conversationCreated(id: Int64, uid: String)
    case conversationUpdated(id: Int64, uid: String)
    case conversationDeleted(id: Int64, uid: String)
}

/// Something that follows the stored records: told of every change a write makes, in order and in
/// the write's transaction (so what it writes commits or rolls back with the write), then once
/// before the transaction commits. One instance per write transaction.
protocol WriteObserver: AnyObject {
    func observe(_ change: RecordChange, in tx: WriteContext) throws
    /// Writes what it kept for the end of the transaction (a last feed run, a search fold).
    func beforeCommit(_ tx: WriteContext) throws
}

extension WriteContext {
    /// The observers of every write after the change feed, in the order they are told. A new
    /// follower of the records (another index, a cache) is added here.
    static func makeObservers() -> [any WriteObserver] { [SearchIndexObserver(), MessageIDKeeper(), MessageCountKeeper()] }
}

/// A deleted message as the deletes announce it.
typealias DeletedMessage = (id: Int64, conversationId: Int64, uid: String, content: String)

/// Keeps each conversation's `message_count` when its messages are deleted (one statement per
/// conversation and delete call); the writes that add messages count them in the statement that
/// moves the conversation's last activity (``ConversationStore/addMessages(_:_:count:newest:seq:)``).
final class MessageCountKeeper: WriteObserver {
    func observe(_ change: RecordChange, in tx: WriteContext) throws {
        guard case .messagesDeleted(let messages) = change, !messages.isEmpty else { return }
        var removed: [Int64: Int64] = [:]
        for m in messages { removed[m.conversationId, default: 0] += 1 }
        let stmt = try tx.prepare(tx.connection.sql.conversations.removeMessages)
        for (id, count) in removed.sorted(by: { $0.key < $1.key }) {
            stmt.reset()
            stmt.bind(1, count).bind(2, id)
            try stmt.run()
        }
    }

    func beforeCommit(_ tx: WriteContext) throws {}
}

/// Keeps the ids of deleted messages from being given out again, where the backend numbers new
/// rows after the highest stored id (``StoreSQL/Messages/keepDeletedIDs``; SQLite: see
/// `MessageIDFloor`). The feed, the search index and id-keyed caches rely on it.
final class MessageIDKeeper: WriteObserver {
    func observe(_ change: RecordChange, in tx: WriteContext) throws {
        guard case .messagesDeleted(let messages) = change, let highest = messages.lazy.map(\.id).max(),
              let keep = tx.connection.sql.messages.keepDeletedIDs else { return }
        let stmt = try tx.prepare(keep)
        stmt.bind(1, highest)
        try stmt.run()
    }

    func beforeCommit(_ tx: WriteContext) throws {}
}

/// The change feed's observer: appends every announced change to the feed, in the same
/// transaction as the write it describes; changes of one kind (and revision) in a row share one
/// feed row, written when the run ends (see ``Feed``). It also keeps the transaction's changes for
/// the subscribers.
final class FeedRecorder: WriteObserver {
    /// The transaction's changes, while there are at most ``WriteContext/maxBufferedChanges``.
    private(set) var changes: [Change] = []
    /// The seqs of the transaction's first and last change (`lastSeq` 0 before any).
    private(set) var firstSeq: Int64?
    private(set) var lastSeq: Int64 = 0
    /// True once the transaction recorded more changes than are buffered.
    private(set) var overflowed = false
    /// The seq the next change gets (0 until the first change of the transaction reads it).
    private var nextSeq: Int64 = 0
    /// The changes recorded but not yet written to the feed: one row per run.
    private var run = FeedRun()
    /// True in a transaction that only adds messages at its time, on a backend with lazy runs of
    /// sends (``LazySends``): their changes join the open run (opened by the first) instead of
    /// feed rows. Any other transaction closes the run before it changes a row (``closeLazyRun(_:)``).
    private let lazy: Bool
    /// The open run's start, once read or opened in a lazy transaction.
    private var lazyStart: (seq: Int64, id: Int64)?

    init(lazy: Bool) { self.lazy = lazy }

    /// Writes the open run of sends as feed rows and closes it, unless this transaction is lazy.
    func closeLazyRun(_ tx: WriteContext) throws {
        if !lazy { try LazySends.close(tx.connection) }
    }

    func observe(_ change: RecordChange, in tx: WriteContext) throws {
        switch change {
        case .articlesCreated(let articles):
            reserve(articles.count)
            for a in articles { try record(tx, "article", .create, id: a.id, uid: a.uid, revision: a.revision) }
        case .articleUpdated(_, let a): try record(tx, "article", .update, id: a.id, uid: a.uid, revision: a.revision)
        case .articleDeleted(let a): try record(tx, "article", .delete, id: a.id, uid: a.uid, revision: a.revision)
        case .messagesCreated(let messages):
            reserve(messages.count)
            if lazy {
                for m in messages { try recordLazily(tx, m) }
            } else {
                for m in messages { try record(tx, "message", .create, id: m.id, uid: m.uid, revision: nil) }
            }
        case .messagesDeleted(let messages):
            for m in messages { try record(tx, "message", .delete, id: m.id, uid: m.uid, revision: nil) }
        case .conversationCreated(let id, let uid): try record(tx, "conversation", .create, id: id, uid: uid, revision: nil)
        case .conversationUpdated(let id, let uid): try record(tx, "conversation", .update, id: id, uid: uid, revision: nil)
        case .conversationDeleted(let id, let uid): try record(tx, "conversation", .delete, id: id, uid: uid, revision: nil)
        }
    }

    /// Writes the last run of changes to the feed.
    func beforeCommit(_ tx: WriteContext) throws { try run.write(tx.connection) }

    /// The seq the `n`-th change recorded from now on gets (1: the next one).
    func upcomingSeq(_ n: Int, _ tx: WriteContext) throws -> Int64 {
        try readSeq(tx)
        return nextSeq + Int64(n) - 1
    }

    private func reserve(_ count: Int) {
        if !overflowed { changes.reserveCapacity(min(changes.count + count, WriteContext.maxBufferedChanges)) }
    }

    private func record(_ tx: WriteContext, _ entity: String, _ operation: Change.Operation, id: Int64, uid: String, revision: Int64?) throws {
        guard let kind = Feed.kind(entity, operation), !lazy else {
            throw NotesError(.internalError, "no feed kind for \(entity) \(operation) in this transaction")
        }
        try readSeq(tx)
        let seq = nextSeq
        nextSeq += 1
        let at = tx.now.milliseconds
        if !run.accepts(kind: kind, revision: revision, at: at) { try run.write(tx.connection) }
        run.append(kind: kind, revision: revision, at: at, seq: seq, id: id, uid: operation == .delete ? uidBytes(uid) : nil)
        recorded(Change(seq: seq, entity: entity, operation: operation, entityId: id, uid: uid, revision: revision, at: tx.now))
    }

    /// Reads the seq of the transaction's first change, once: after the newest row's (the run of
    /// sends was closed when the transaction began, or there is none), or, in a lazy transaction
    /// with an open run, after its newest message's.
    private func readSeq(_ tx: WriteContext) throws {
        guard nextSeq == 0 else { return }
        if lazy, let sql = tx.connection.sql.feed.lazy, let head = try LazySends.head(tx.connection, sql) {
            lazyStart = (head.seq, head.id)
            nextSeq = head.seq &+ (head.maxId &- head.id) &+ 1
        } else {
            nextSeq = try Feed.lastRowSeq(tx.connection) + 1
        }
    }

    /// Records the create of message `m` in the open run of sends, opening it when none is.
    private func recordLazily(_ tx: WriteContext, _ m: Message) throws {
        guard let sql = tx.connection.sql.feed.lazy, m.sentAt == tx.now else {
            throw NotesError(.internalError, "a lazy feed write of message \(m.id) not sent at its write's time")
        }
        try readSeq(tx)
        let seq = nextSeq
        nextSeq += 1
        if let start = lazyStart {
            guard seq &- start.seq == m.id &- start.id else { throw Feed.damaged("message \(m.id) does not follow the run of sends from seq \(start.seq)") }
        } else {
            let open = try tx.prepare(sql.open)
            open.bind(1, seq).bind(2, m.id)
            try open.run()
            lazyStart = (seq, m.id)
        }
        recorded(Change(seq: seq, entity: "message", operation: .create, entityId: m.id, uid: m.uid, revision: nil, at: tx.now))
    }

    /// Notes a change written to the feed: its seq, and the change itself while the buffer has room.
    private func recorded(_ change: Change) {
        if firstSeq == nil { firstSeq = change.seq }
        lastSeq = change.seq
        if overflowed { return }
        if changes.count < WriteContext.maxBufferedChanges {
            changes.append(change)
        } else {
            overflowed = true
            changes = []
        }
    }
}
