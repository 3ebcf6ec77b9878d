/// How messages are numbered in a SQLite store, from migration `0008_messages_numbered_by_floor`
/// on: without AUTOINCREMENT, so that a send does not rewrite the counter row of
/// `sqlite_sequence` (one WAL page of every send's commit), and still never reusing an id.
///
/// SQLite numbers a plain rowid table's new row `max(id) + 1`, which reuses the ids of the newest
/// messages once they are deleted. So `meta` keeps `message_id_floor`: the highest id a deleted
/// message had (raised by every delete of messages: ``StoreSQL/Messages/keepDeletedIDs``, run by `MessageIDKeeper`), and an insert numbers its
/// first row `max(max(id), floor) + 1` in its own SQL (``StoreSQL/Messages/inserts``; its later rows
/// follow it). The change feed, the search index's indexed-through id and layout caches keyed by
/// id rely on ids never coming back.
enum MessageIDFloor {
    static let migrationName = "0008_messages_numbered_by_floor"
    static let key = "message_id_floor"

    /// The highest message id the store ever had: a new message is numbered above it.
    static let floor = "SELECT max(coalesce((SELECT max(id) FROM messages), 0), coalesce((SELECT value FROM meta WHERE key = '\(key)'), 0))"

    /// Copies `messages` into a table without AUTOINCREMENT (ids, columns and indexes kept) and
    /// keeps its counter as the floor: the ids its AUTOINCREMENT gave out stay given out.
    static func migrate(_ db: Connection) throws {
        let counter = try Store.scalar(db, "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'messages'")
        try db.execute("""
            CREATE TABLE messages_numbered(
                id INTEGER PRIMARY KEY,
                conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                sent_at INTEGER NOT NULL,
                from_me INTEGER NOT NULL,
                uid BLOB NOT NULL UNIQUE CHECK (typeof(uid) = 'blob' AND length(uid) = 16),
                content TEXT NOT NULL,
                sender TEXT
            );
            INSERT INTO messages_numbered(id, conversation_id, sent_at, from_me, uid, content, sender)
                SELECT id, conversation_id, sent_at, from_me, uid, content, sender FROM messages ORDER BY id;
            DROP TABLE messages;
            ALTER TABLE messages_numbered RENAME TO messages;
            CREATE INDEX messages_history ON messages(conversation_id, sent_at);
            CREATE INDEX messages_newest ON messages(sent_at);
            DELETE FROM sqlite_sequence WHERE name = 'messages';
            """)
        if let keep = db.sql.messages.keepDeletedIDs {
            let stmt = try db.prepare(keep)
            stmt.bind(1, counter)
            try stmt.run()
        }
    }
}
