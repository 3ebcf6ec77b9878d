/// Where a SQLite store keeps the conversations' order of activity, from migration
/// `0011_hot_conversations` on: a send to a conversation written to lately writes the
/// conversation's row and no index page (one WAL page of every such send's commit).
///
/// A send moves its conversation's last activity (`last_activity_at`, `activity_seq`): with one
/// index over every conversation's activity, each send rewrote the row's page and a page of that
/// index. Now a conversation is *hot* (`hot = 1`) or cold (`hot = 0`), and only the cold ones are
/// in the activity index (`conversations_recent … WHERE hot = 0`); the hot ones, at most
/// ``bound``, are found by `conversations_hot`, whose entries (`hot`, id) a send does not change.
/// A send to a cold conversation makes it hot (its entry moves from one index to the other, the
/// row's page with them); once more than ``bound`` are hot, the older half of them by activity go
/// back to the activity index in the same transaction. So sends to up to ``bound`` conversations
/// in turn write the row's page only.
///
/// Which conversations are hot changes nothing a reader sees: the list is both walks merged in
/// one statement (``Keyset/parts``: `… WHERE hot = 1 … UNION ALL … WHERE hot = 0 … ORDER BY
/// last_activity_at, activity_seq`), the hot walk sorting its at most ``bound`` rows, the cold
/// one walking its index and stopping at the LIMIT. Every other reader reads the same columns
/// as before. PostgreSQL keeps one index (its rows are not pages of a WAL the send waits for).
enum HotConversations {
    static let migrationName = "0011_hot_conversations"

    /// The most conversations hot at once: the rows the list's hot walk sorts.
    static let bound = 64

    /// Binds: 1 id. Makes conversation `id` hot; `changes` 1 only when it was cold.
    static let warm = "UPDATE conversations SET hot = 1 WHERE id = ? AND hot = 0"

    /// Binds: 1 id (just made hot, kept hot). When more than ``bound`` are hot, the older half of
    /// them by activity go cold.
    static let cool = """
        UPDATE conversations SET hot = 0 WHERE id IN (SELECT id FROM conversations WHERE hot = 1 AND id <> ?1
            AND (SELECT count(*) FROM conversations WHERE hot = 1) > \(bound)
            ORDER BY last_activity_at, activity_seq LIMIT \(bound / 2))
        """

    /// Makes conversation `id` hot before its activity moves (nothing when it is already, or the
    /// backend keeps one index of activity).
    static func warm(_ tx: WriteContext, _ id: Int64) throws {
        guard let warm = tx.connection.sql.conversations.warm, let cool = tx.connection.sql.conversations.cool else { return }
        let stmt = try tx.prepare(warm)
        stmt.bind(1, id)
        try stmt.run()
        guard tx.connection.changes == 1 else { return }
        let cooling = try tx.prepare(cool)
        cooling.bind(1, id)
        try cooling.run()
    }

    /// Adds `hot` (every conversation cold) and puts the activity index over the cold ones only.
    /// (The column is added only when missing, as 0007.)
    static func migrate(_ db: Connection) throws {
        if try Store.scalar(db, "SELECT count(*) FROM pragma_table_info('conversations') WHERE name = 'hot'") == 0 {
            try db.execute("ALTER TABLE conversations ADD COLUMN hot INTEGER NOT NULL DEFAULT 0")
        }
        try db.execute("""
            UPDATE conversations SET hot = 0 WHERE hot <> 0;
            DROP INDEX IF EXISTS conversations_recent;
            DROP INDEX IF EXISTS conversations_hot;
            CREATE INDEX conversations_recent ON conversations(last_activity_at, activity_seq) WHERE hot = 0;
            CREATE INDEX conversations_hot ON conversations(hot) WHERE hot = 1;
            """)
    }
}
