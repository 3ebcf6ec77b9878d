/// The PostgreSQL backend's statements (see ``StoreSQL``): `$n` placeholders (typed by the column
/// they meet: uids are `uuid`, blobs `bytea`), new ids by `RETURNING id` (PostgreSQL has no rowid),
/// upserts on the (owner, key) keys that row-level security needs, and the store-wide newest feed
/// seq read from `feed_head` (row-level security hides the other roles' feed rows).
extension StoreSQL {
    static let postgres: StoreSQL = {
        let article = "id, uid, title, content, created_at, updated_at, revision"
        let draft = "id, uid, article_id, base_revision, title, content, created_at, updated_at"
        let conversation = "id, uid, title, created_at, last_activity_at"
        let message = "id, uid, conversation_id, content, from_me, sent_at, sender"
        let feed = "seq, last_seq, kind, entity_id, at, revision, entries, uids"
        // New rows of `table`, 64 a statement, each returning its id (the last one is
        // `lastInsertRowID`). Under the store's write lock (an advisory lock every writer takes)
        // one statement's identity values are consecutive, as SQLite's AUTOINCREMENT's are.
        func inserts(_ table: String, _ columns: [String]) -> RowInserts {
            func row(_ k: Int) -> String {
                "(" + (1...columns.count).map { "$\(k * columns.count + $0)" }.joined(separator: ", ") + ")"
            }
            let head = "INSERT INTO \(table)(\(columns.joined(separator: ", "))) VALUES "
            let tail = " ON CONFLICT (uid) DO NOTHING RETURNING id"
            return RowInserts(one: head + row(0) + tail,
                              many: MultiRow(sql: head + (0..<64).map(row).joined(separator: ", ") + tail, rows: 64),
                              perRow: columns.count, maxID: "SELECT coalesce(max(id), 0) FROM \(table)",
                              idByUID: "SELECT id FROM \(table) WHERE uid = $1")
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
        return StoreSQL(
            meta: Meta(
                // A role's own setting first, else the store-wide one (owner '').
                get: "SELECT value FROM meta WHERE key = $1 ORDER BY owner = '' LIMIT 1",
                insert: "INSERT INTO meta(key, value) VALUES ($1, $2)",
                put: "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (owner, key) DO UPDATE SET value = excluded.value",
                raise: "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (owner, key) DO UPDATE SET value = greatest(meta.value, excluded.value)"
            ),
            articles: Articles(
                byID: "SELECT \(article) FROM articles WHERE id = $1",
                byUID: "SELECT \(article) FROM articles WHERE uid = $1",
                inserts: inserts("articles", ["uid", "title", "content", "created_at", "updated_at", "revision"]),
                update: "UPDATE articles SET title = $1, content = $2, created_at = $3, updated_at = $4, revision = $5 WHERE id = $6",
                delete: "DELETE FROM articles WHERE id = $1",
                // By the index (owner, created_at, id): row-level security adds `owner = current_user`.
                newestFirst: Keyset(select: "SELECT \(article) FROM articles", key: "created_at")
            ),
            drafts: Drafts(
                unsaved: "SELECT \(draft) FROM drafts WHERE unsaved = 1 ORDER BY id",
                byID: "SELECT \(draft) FROM drafts WHERE id = $1",
                byUID: "SELECT \(draft) FROM drafts WHERE uid = $1",
                insertIfNew: "INSERT INTO drafts(uid, article_id, base_revision, title, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (uid) DO NOTHING RETURNING id",
                edit: "UPDATE drafts SET title = $1, content = $2, updated_at = $3, unsaved = 1 WHERE id = $4",
                update: "UPDATE drafts SET article_id = $1, base_revision = $2, title = $3, content = $4, created_at = $5, updated_at = $6, unsaved = 1 WHERE id = $7",
                markSaved: "UPDATE drafts SET unsaved = 0 WHERE id = $1",
                delete: "DELETE FROM drafts WHERE id = $1"
            ),
            conversations: Conversations(
                byID: "SELECT \(conversation) FROM conversations WHERE id = $1",
                allTitled: "SELECT \(conversation) FROM conversations WHERE title = $1 ORDER BY last_activity_at DESC, activity_seq DESC",
                byUID: "SELECT \(conversation) FROM conversations WHERE uid = $1",
                byTitle: "SELECT \(conversation) FROM conversations WHERE title = $1 ORDER BY id LIMIT 1",
                lastActivity: "SELECT last_activity_at FROM conversations WHERE id = $1",
                insert: "INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES ($1, $2, $3, $4, 0) RETURNING id",
                insertIfNew: "INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES ($1, $2, $3, $4, 0) ON CONFLICT (uid) DO NOTHING RETURNING id",
                rename: "UPDATE conversations SET title = $1 WHERE id = $2",
                update: "UPDATE conversations SET title = $1, created_at = $2, last_activity_at = $3 WHERE id = $4",
                redate: "UPDATE conversations SET created_at = $1, last_activity_at = $1 WHERE id = $2",
                touch: "UPDATE conversations SET last_activity_at = $1, activity_seq = $2 WHERE id = $3",
                messagesOf: "SELECT id, uid, content FROM messages WHERE conversation_id = $1 ORDER BY sent_at, id",
                delete: "DELETE FROM conversations WHERE id = $1",
                // By the index (owner, last_activity_at, activity_seq).
                mostRecentFirst: Keyset(select: "SELECT \(conversation), activity_seq FROM conversations", key: "last_activity_at",
                                        id: "activity_seq")
            ),
            messages: Messages(
                byID: "SELECT \(message) FROM messages WHERE id = $1",
                byUID: "SELECT \(message) FROM messages WHERE uid = $1",
                uidAndContent: "SELECT uid, content FROM messages WHERE id = $1",
                inserts: inserts("messages", ["uid", "conversation_id", "content", "from_me", "sent_at", "sender"]),
                delete: "DELETE FROM messages WHERE id = $1",
                deleteReturning: "DELETE FROM messages WHERE id = $1 RETURNING id, uid, content",
                countSame: "SELECT count(*) FROM messages WHERE conversation_id = $1 AND sent_at >= $2 AND sent_at < $3 AND from_me = $4 AND content = $5",
                conversationHolding: "SELECT min(conversation_id) FROM messages WHERE sent_at >= $1 AND sent_at < $2 AND from_me = $3 AND content = $4",
                // By the index (conversation_id, sent_at, id).
                newestFirst: Keyset(select: "SELECT \(message) FROM messages", key: "sent_at", filters: ["conversation_id = ?"])
            ),
            feed: FeedTable(
                // The whole store's newest seq (kept by a trigger): a role numbers its changes after
                // every other role's, which it cannot see.
                lastSeq: "SELECT seq FROM feed_head",
                rowAtOrBefore: "SELECT \(feed) FROM feed WHERE seq <= $1 ORDER BY seq DESC LIMIT 1",
                rowsAfter: "SELECT \(feed) FROM feed WHERE seq > $1 ORDER BY seq",
                deletesAfter: "SELECT \(feed) FROM feed WHERE kind = $1 AND kind >= 6 AND seq > $2 ORDER BY seq",
                rowsNewestFirst: "SELECT \(feed) FROM feed ORDER BY seq DESC",
                firstSeqSince: "SELECT seq FROM feed WHERE at >= $1 ORDER BY seq LIMIT 1",
                insert: "INSERT INTO feed(\(feed)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                delete: "DELETE FROM feed WHERE seq = $1",
                uidsByIDs: ["articles", "conversations", "messages"].map { "SELECT id, uid FROM \($0) WHERE id = ANY(string_to_array($1, ',')::bigint[])" }
            ),
            exchange: Exchange(
                // One snapshot for the whole export: every statement sees the same committed state.
                beginSnapshot: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                endSnapshot: "COMMIT",
                abortSnapshot: "ROLLBACK",
                countDrafts: "SELECT count(*) FROM drafts",
                countConversations: "SELECT count(*) FROM conversations",
                countMessages: "SELECT count(*) FROM messages",
                articles: "SELECT \(article) FROM articles ORDER BY id",
                articlesWithin: "SELECT \(article) FROM articles WHERE created_at >= $1 AND created_at < $2 ORDER BY id",
                drafts: """
                    SELECT d.id, d.uid, d.article_id, d.base_revision, d.title, d.content, d.created_at, d.updated_at, a.uid
                    FROM drafts d LEFT JOIN articles a ON a.id = d.article_id WHERE d.unsaved = 1 ORDER BY d.id
                    """,
                conversations: "SELECT \(conversation) FROM conversations ORDER BY id",
                conversationsWithin: """
                    SELECT \(conversation) FROM conversations WHERE EXISTS
                    (SELECT 1 FROM messages WHERE conversation_id = conversations.id AND sent_at >= $1 AND sent_at < $2) ORDER BY id
                    """,
                messages: """
                    SELECT m.id, m.uid, m.conversation_id, m.content, m.from_me, m.sent_at, m.sender, c.uid, c.title
                    FROM messages m JOIN conversations c ON c.id = m.conversation_id ORDER BY m.id
                    """,
                messagesWithin: """
                    SELECT m.id, m.uid, m.conversation_id, m.content, m.from_me, m.sent_at, m.sender, c.uid, c.title
                    FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.sent_at >= $1 AND m.sent_at < $2 ORDER BY m.id
                    """,
                messagesOf: "SELECT \(message) FROM messages WHERE conversation_id = $1 ORDER BY sent_at, id",
                messagesOfWithin: "SELECT \(message) FROM messages WHERE conversation_id = $1 AND sent_at >= $2 AND sent_at < $3 ORDER BY sent_at, id"
            ),
            articleIndex: gramWrites("article_grams", records: "articles", kind: 0, through: "article_search_through"),
            messageIndex: gramWrites("message_grams", records: "messages", kind: 1, through: "message_search_through"),
            searchFilter: PostgresSearchFilter.filter
        )
    }()
}
