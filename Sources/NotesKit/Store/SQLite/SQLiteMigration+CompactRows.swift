/// Migration `0005_compact_rows_and_feed`: rewrites a store into the compact form.
///
/// - every uid becomes 16 bytes (a BLOB) instead of 36 characters of text (a CHECK refuses
///   anything else, so SQL that binds a uid as text instead of `Statement.bind(_:uid:)` fails
///   loudly rather than storing a uid no lookup finds);
/// - columns go small and fixed first, text last (a row's fixed fields are read without walking
///   past its text);
/// - indexes name no `id` column: SQLite ends every index entry with the rowid, so
///   `messages_history(conversation_id, sent_at)` already orders by `(conversation_id, sent_at,
///   id)` — naming `id` again stored it twice;
/// - the change feed moves from `changes` (one row per change, the uid as text) to `feed` (one
///   row per run of changes, see ``Feed``); the old rows are grouped into runs as they go.
///
/// SQLite cannot change a column's type in place, so each table is copied into a new one (ids,
/// and the AUTOINCREMENT counters, kept), the old one dropped and the new one renamed, in the
/// migration's one transaction with foreign keys off (dropping `conversations` would otherwise
/// delete every message). The old pages are given back afterwards by a `VACUUM` (see
/// ``Store/compact(retainMilliseconds:)``).
enum CompactRowsMigration {
    static let name = "0005_compact_rows_and_feed"

    static let tables = """
        CREATE TABLE articles_compact(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            revision INTEGER NOT NULL DEFAULT 1,
            uid BLOB NOT NULL UNIQUE CHECK (typeof(uid) = 'blob' AND length(uid) = 16),
            title TEXT NOT NULL,
            content TEXT NOT NULL
        );
        CREATE TABLE drafts_compact(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            article_id INTEGER,
            base_revision INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            uid BLOB NOT NULL UNIQUE CHECK (typeof(uid) = 'blob' AND length(uid) = 16),
            title TEXT NOT NULL,
            content TEXT NOT NULL
        );
        CREATE TABLE conversations_compact(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at INTEGER NOT NULL,
            last_activity_at INTEGER NOT NULL,
            activity_seq INTEGER NOT NULL,
            uid BLOB NOT NULL UNIQUE CHECK (typeof(uid) = 'blob' AND length(uid) = 16),
            title TEXT NOT NULL
        );
        CREATE TABLE messages_compact(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            sent_at INTEGER NOT NULL,
            from_me INTEGER NOT NULL,
            uid BLOB NOT NULL UNIQUE CHECK (typeof(uid) = 'blob' AND length(uid) = 16),
            content TEXT NOT NULL
        );
        CREATE TABLE feed(
            seq INTEGER PRIMARY KEY,
            last_seq INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            entity_id INTEGER NOT NULL,
            at INTEGER NOT NULL,
            revision INTEGER,
            entries BLOB,
            uids BLOB
        );
        INSERT INTO articles_compact(id, created_at, updated_at, revision, uid, title, content)
            SELECT id, created_at, updated_at, revision, nk_uid(uid), title, content FROM articles ORDER BY id;
        INSERT INTO drafts_compact(id, article_id, base_revision, created_at, updated_at, uid, title, content)
            SELECT id, article_id, base_revision, created_at, updated_at, nk_uid(uid), title, content FROM drafts ORDER BY id;
        INSERT INTO conversations_compact(id, created_at, last_activity_at, activity_seq, uid, title)
            SELECT id, created_at, last_activity_at, activity_seq, nk_uid(uid), title FROM conversations ORDER BY id;
        INSERT INTO messages_compact(id, conversation_id, sent_at, from_me, uid, content)
            SELECT id, conversation_id, sent_at, from_me, nk_uid(uid), content FROM messages ORDER BY id;
        """

    /// The indexes every query plan needs, and no other (`tests/test_query_plans.py` shows the
    /// plans): the article list, conversations by recent activity, one conversation's history,
    /// messages newest first across conversations (message search), the feed's tombstones.
    static let indexes = """
        CREATE INDEX articles_newest ON articles(created_at);
        CREATE INDEX conversations_recent ON conversations(last_activity_at, activity_seq);
        CREATE INDEX messages_history ON messages(conversation_id, sent_at);
        CREATE INDEX messages_newest ON messages(sent_at);
        CREATE INDEX feed_deletes ON feed(kind) WHERE kind >= 6;
        """

    static func run(_ db: Connection) throws {
        try db.addUIDFunction()
        var counters: [(String, Int64)] = []
        let sequence = try db.prepare("SELECT name, seq FROM sqlite_sequence WHERE name IN ('articles', 'drafts', 'conversations', 'messages')")
        while try sequence.step() { counters.append((sequence.text(0), sequence.int64(1))) }
        sequence.reset()
        try db.execute(tables)
        try convertFeed(db)
        try db.execute("""
            DROP TABLE changes; DROP TABLE messages; DROP TABLE conversations; DROP TABLE drafts; DROP TABLE articles;
            ALTER TABLE articles_compact RENAME TO articles;
            ALTER TABLE drafts_compact RENAME TO drafts;
            ALTER TABLE conversations_compact RENAME TO conversations;
            ALTER TABLE messages_compact RENAME TO messages;
            """)
        try db.execute(indexes)
        // Ids are never reused: each table's AUTOINCREMENT counter stays where it was.
        for (table, value) in counters {
            let stmt = try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?")
            stmt.bind(1, value).bind(2, table)
            try stmt.run()
            if db.changes == 0 {
                let insert = try db.prepare("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)")
                insert.bind(1, table).bind(2, value)
                try insert.run()
            }
        }
        if try Store.scalar(db, "SELECT count(*) FROM pragma_foreign_key_check") != 0 {
            throw NotesError(.corrupt, "the store file is damaged (a message names a conversation it does not have); restore it from a backup")
        }
    }

    /// Moves the old one-row-per-change feed into `feed`, grouping consecutive changes of one
    /// kind, revision and instant into runs (one row for a bulk write's changes). Seqs are kept.
    static func convertFeed(_ db: Connection) throws {
        let old = try db.prepare("SELECT seq, entity, op, entity_id, uid, revision, at FROM changes ORDER BY seq")
        var run = FeedRun()
        while try old.step() {
            let entity = old.text(1), op = old.text(2)
            guard let operation = Change.Operation(rawValue: op), let kind = Feed.kind(entity, operation) else {
                throw Feed.damaged("a change of \(NotesError.shown(entity, limit: 20)) \(NotesError.shown(op, limit: 20))")
            }
            let revision = old.optionalInt64(5), at = old.int64(6)
            if !run.accepts(kind: kind, revision: revision, at: at) { try run.write(db) }
            run.append(kind: kind, revision: revision, at: at, seq: old.int64(0), id: old.int64(3),
                       uid: operation == .delete ? uidBytes(old.text(4)) : nil)
        }
        old.reset()
        try run.write(db)
    }
}
