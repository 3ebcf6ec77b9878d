/// The PostgreSQL backend's statements (see ``StoreSQL``): `$n` placeholders (typed by the column
/// they meet: uids are `uuid`, blobs `bytea`), new ids by `RETURNING id` (PostgreSQL has no rowid),
/// upserts on the (owner, key) keys that row-level security needs, and the store-wide newest feed
/// seq read from `feed_head` (row-level security hides the other roles' feed rows).
extension StoreSQL {
    static let postgres: StoreSQL = {
        let feed = "seq, last_seq, kind, entity_id, at, revision, entries, uids"
        // New rows of `table`, 64 a statement, each returning its id (the last one is
        // `lastInsertRowID`). Under the store's write lock (an advisory lock every writer takes)
        // one statement's identity values are consecutive, as SQLite's AUTOINCREMENT's are.
        func inserts(_ table: String, _ columns: [String]) -> RowInserts {
            func row(_ k: Int) -> String {
                "(" + (1...columns.count).map { "$\(k * columns.count + $0)" }.joined(separator: ", ") + ")"
            }
            return RowInserts(table: table, columns: columns, row: row, tail: " ON CONFLICT (uid) DO NOTHING RETURNING id")
        }
        // A statement is a round trip to the server: the grams of a fold go 512 a statement, and a
        // search's grams' frequencies come with the records' count.
        func gramWrites(_ table: String, records: String, kind: Int, through: String) -> SearchTables {
            SearchTables(table: table, batch: 512, row: { k in "($\(3 * k + 1), $\(3 * k + 2), $\(3 * k + 3))" },
                         upsert: " ON CONFLICT (owner, gram) DO UPDATE SET df = \(table).df + excluded.df, tail = \(table).tail || excluded.tail RETURNING gram, length(\(table).tail)",
                         documentFrequencies: """
                             SELECT gram, df, 0 FROM \(table) WHERE gram = ANY(string_to_array($1, ',')::bigint[]) UNION ALL
                             SELECT NULL, coalesce(max(id), 0), (EXISTS (SELECT 1 FROM search_pending WHERE kind = \(kind)) OR coalesce(max(id), 0) >
                             coalesce((SELECT value FROM meta WHERE key = '\(through)' ORDER BY owner = '' LIMIT 1), 0))::int FROM \(records)
                             """,
                         idIn: " = ANY(string_to_array(?, ',')::bigint[])")
        }
        // SQLite's text where PostgreSQL's is the same: its `?` placeholders are numbered `$1, $2,
        // …` when a statement is prepared (``PostgresDialect``). The entries below are PostgreSQL's own.
        var sql = StoreSQL.sqlite
        // A role's own setting first, else the store-wide one (owner '').
        sql.meta.get = "SELECT value FROM meta WHERE key = $1 ORDER BY owner = '' LIMIT 1"
        sql.meta.put = "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (owner, key) DO UPDATE SET value = excluded.value"
        sql.meta.raise = "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (owner, key) DO UPDATE SET value = greatest(meta.value, excluded.value)"
        // (articles.newestFirst: by the index (owner, created_at, id), row-level security adds
        // `owner = current_user`; conversations.mostRecentFirst by (owner, last_activity_at,
        // activity_seq).)
        sql.articles.inserts = inserts("articles", ["uid", "title", "content", "created_at", "updated_at", "revision"])
        sql.drafts.insertIfNew += " RETURNING id"
        sql.conversations.insert += " RETURNING id"
        sql.conversations.insertIfNew += " RETURNING id"
        sql.conversations.addMessages = """
            UPDATE conversations SET message_count = message_count + $4,
                activity_seq = CASE WHEN last_activity_at <= $1 THEN $2 ELSE activity_seq END,
                last_activity_at = greatest(last_activity_at, $1) WHERE id = $3
            """
        sql.messages.inserts = inserts("messages", ["uid", "conversation_id", "content", "from_me", "sent_at", "sender"])
        sql.messages.keepDeletedIDs = nil  // ids from a sequence never come back
        // The whole store's newest seq (kept by a trigger): a role numbers its changes after
        // every other role's, which it cannot see.
        sql.feed.lastSeq = "SELECT seq FROM feed_head"
        sql.feed.deletesAfter = "SELECT \(feed) FROM feed WHERE kind = $1 AND kind >= 6 AND seq > $2 ORDER BY seq"
        sql.feed.uidsByIDs = ["articles", "conversations", "messages"].map {
            "SELECT id, uid FROM \($0) WHERE id = ANY(string_to_array($1, ',')::bigint[])"
        }
        // One snapshot for the whole export: every statement sees the same committed state.
        sql.exchange.beginSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        sql.articleIndex = gramWrites("article_grams", records: "articles", kind: 0, through: "article_search_through")
        sql.messageIndex = gramWrites("message_grams", records: "messages", kind: 1, through: "message_search_through")
        sql.searchFilter = PostgresSearchFilter.filter
        return sql
    }()
}
