/// The SQLite backend's statements (see ``StoreSQL``): SQLite's dialect, `?` placeholders, uids
/// as 16-byte BLOBs, ids as rowids (`lastInsertRowID`).
extension StoreSQL {
    static let sqlite: StoreSQL = {
        let article = "id, uid, title, content, created_at, updated_at, revision"
        let draft = "id, uid, article_id, base_revision, title, content, created_at, updated_at"
        let conversation = "id, uid, title, created_at, last_activity_at"
        let message = "id, uid, conversation_id, content, from_me, sent_at, sender"
        let feed = "seq, last_seq, kind, entity_id, at, revision, entries, uids"
        // New rows of `table`, 64 a statement: SQLite's work per statement (AUTOINCREMENT's
        // bookkeeping included) is then paid once per chunk; the write lock numbers one
        // statement's rows consecutively, after the table's highest id. With `floor` (SQL: the id
        // every new row must be above), the one-row statement numbers its row above it (messages:
        // see `MessageIDFloor`).
        // A statement of many rows that may abort (a NOT NULL, a CHECK, a foreign key: all
        // enforced) keeps a statement journal, a copy of every page it changes (for random uids
        // about one page of the uid index per row); a one-row INSERT never needs one. Bulk writes
        // keep the journal in memory (`withBulkWriteSettings`), and there 64 rows a statement cost
        // less than one: the statement's own work (cursors, AUTOINCREMENT's bookkeeping, its end)
        // is paid once per chunk (callgrind, writer thread: create_many of 20 000 articles 1 003M
        // -> 847M instructions, a Parquet import of 20 000 messages 677M -> 648M; 16 rows a
        // statement were dearer than one for the import). Other writes insert one row a statement,
        // whose journal could otherwise spill to a temporary file.
        func inserts(_ table: String, _ columns: [String], floor: String? = nil) -> RowInserts {
            let values = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            return RowInserts(table: table, columns: columns, row: { _ in values }, tail: " ON CONFLICT(uid) DO NOTHING", floor: floor,
                              manyOnlyInBulk: true)
        }
        // Ids (or grams) bound as decimal text joined by commas.
        let inList = " IN (SELECT value FROM json_each('[' || ? || ']'))"
        func gramWrites(_ table: String) -> SearchTables {
            SearchTables(table: table, batch: 1, row: { _ in "(?, ?, ?)" },
                         upsert: " ON CONFLICT(gram) DO UPDATE SET df = df + excluded.df, tail = tail || excluded.tail RETURNING gram, length(tail)",
                         planReads: nil, idIn: inList)
        }
        return StoreSQL(
            meta: Meta(
                get: "SELECT value FROM meta WHERE key = ?",
                insert: "INSERT INTO meta(key, value) VALUES (?, ?)",
                put: "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                raise: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)"
            ),
            articles: Articles(
                byID: "SELECT \(article) FROM articles WHERE id = ?",
                byUID: "SELECT \(article) FROM articles WHERE uid = ?",
                inserts: inserts("articles", ["uid", "title", "content", "created_at", "updated_at", "revision"]),
                update: "UPDATE articles SET title = ?, content = ?, created_at = ?, updated_at = ?, revision = ? WHERE id = ?",
                delete: "DELETE FROM articles WHERE id = ?",
                newestFirst: Keyset(select: "SELECT \(article) FROM articles", key: "created_at")
            ),
            drafts: Drafts(
                unsaved: "SELECT \(draft) FROM drafts WHERE unsaved = 1 ORDER BY id",
                byID: "SELECT \(draft) FROM drafts WHERE id = ?",
                byUID: "SELECT \(draft) FROM drafts WHERE uid = ?",
                insertIfNew: "INSERT INTO drafts(uid, article_id, base_revision, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(uid) DO NOTHING",
                edit: "UPDATE drafts SET title = ?, content = ?, updated_at = ?, unsaved = 1 WHERE id = ?",
                update: "UPDATE drafts SET article_id = ?, base_revision = ?, title = ?, content = ?, created_at = ?, updated_at = ?, unsaved = 1 WHERE id = ?",
                markSaved: "UPDATE drafts SET unsaved = 0 WHERE id = ?",
                delete: "DELETE FROM drafts WHERE id = ?"
            ),
            conversations: Conversations(
                byID: "SELECT \(conversation) FROM conversations WHERE id = ?",
                allTitled: "SELECT \(conversation) FROM conversations WHERE title = ? ORDER BY last_activity_at DESC, activity_seq DESC",
                byUID: "SELECT \(conversation) FROM conversations WHERE uid = ?",
                byTitle: "SELECT \(conversation) FROM conversations WHERE title = ? ORDER BY id LIMIT 1",
                insert: "INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES (?, ?, ?, ?, 0)",
                insertIfNew: "INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES (?, ?, ?, ?, 0) ON CONFLICT(uid) DO NOTHING",
                rename: "UPDATE conversations SET title = ? WHERE id = ?",
                update: "UPDATE conversations SET title = ?, created_at = ?, last_activity_at = ? WHERE id = ?",
                redate: "UPDATE conversations SET created_at = ?1, last_activity_at = ?1 WHERE id = ?2",
                touch: "UPDATE conversations SET last_activity_at = ?, activity_seq = ? WHERE id = ?",
                // (Every right-hand side reads the row as it was.)
                addMessages: """
                    UPDATE conversations SET message_count = message_count + ?4,
                        activity_seq = CASE WHEN last_activity_at <= ?1 THEN ?2 ELSE activity_seq END,
                        last_activity_at = max(last_activity_at, ?1) WHERE id = ?3
                    """,
                warm: HotConversations.warm,
                cool: HotConversations.cool,
                removeMessages: "UPDATE conversations SET message_count = message_count - ? WHERE id = ?",
                messageCount: "SELECT message_count FROM conversations WHERE id = ?",
                messageTotal: "SELECT coalesce(sum(message_count), 0) FROM conversations",
                messagesOf: "SELECT id, uid, content FROM messages WHERE conversation_id = ? ORDER BY sent_at, id",
                delete: "DELETE FROM conversations WHERE id = ?",
                // The hot conversations (at most `HotConversations.bound`, sorted) merged with the
                // cold ones by their index (last_activity_at, activity_seq) WHERE hot = 0.
                mostRecentFirst: Keyset(select: "SELECT \(conversation), activity_seq FROM conversations", key: "last_activity_at",
                                        id: "activity_seq", parts: ["hot = 1", "hot = 0"])
            ),
            messages: Messages(
                byID: "SELECT \(message) FROM messages WHERE id = ?",
                byUID: "SELECT \(message) FROM messages WHERE uid = ?",
                uidAndContent: "SELECT uid, content, conversation_id FROM messages WHERE id = ?",
                inserts: inserts("messages", ["uid", "conversation_id", "content", "from_me", "sent_at", "sender"],
                                 floor: MessageIDFloor.floor),
                delete: "DELETE FROM messages WHERE id = ?",
                deleteReturning: "DELETE FROM messages WHERE id = ? RETURNING id, uid, content, conversation_id",
                keepDeletedIDs: "INSERT INTO meta(key, value) VALUES ('\(MessageIDFloor.key)', ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)",
                countSame: "SELECT count(*) FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? AND from_me = ? AND content = ?",
                conversationHolding: "SELECT min(conversation_id) FROM messages WHERE sent_at >= ? AND sent_at < ? AND from_me = ? AND content = ?",
                // By the index (conversation_id, sent_at, id).
                newestFirst: Keyset(select: "SELECT \(message) FROM messages", key: "sent_at", filters: ["conversation_id = ?"])
            ),
            feed: FeedTable(
                lastSeq: "SELECT last_seq FROM feed WHERE seq = (SELECT max(seq) FROM feed)",
                rowAtOrBefore: "SELECT \(feed) FROM feed WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
                rowsAfter: "SELECT \(feed) FROM feed WHERE seq > ? ORDER BY seq",
                deletesAfter: "SELECT \(feed) FROM feed INDEXED BY feed_deletes WHERE kind = ? AND kind >= 6 AND seq > ? ORDER BY seq",
                rowsNewestFirst: "SELECT \(feed) FROM feed ORDER BY seq DESC",
                firstSeqSince: "SELECT seq FROM feed WHERE at >= ? ORDER BY seq LIMIT 1",
                insert: "INSERT INTO feed(\(feed)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                delete: "DELETE FROM feed WHERE seq = ?",
                uidsByIDs: ["articles", "conversations", "messages"].map { "SELECT id, uid FROM \($0) WHERE id\(inList)" },
                lazy: StoreSQL.SendRun(
                    // While a run is open, the seq of its newest message (message id − first id +
                    // first seq), else the newest row's last seq.
                    lastSeq: """
                        SELECT coalesce((SELECT value FROM meta WHERE key = '\(LazySends.seqKey)') - (SELECT value FROM meta WHERE key = '\(LazySends.idKey)')
                            + (SELECT max(id) FROM messages), (SELECT last_seq FROM feed WHERE seq = (SELECT max(seq) FROM feed)))
                        """,
                    head: """
                        SELECT s.value, i.value, (SELECT max(id) FROM messages) FROM meta s, meta i
                            WHERE s.key = '\(LazySends.seqKey)' AND i.key = '\(LazySends.idKey)'
                        """,
                    open: "INSERT INTO meta(key, value) VALUES ('\(LazySends.seqKey)', ?), ('\(LazySends.idKey)', ?)",
                    close: "DELETE FROM meta WHERE key IN ('\(LazySends.seqKey)', '\(LazySends.idKey)')",
                    messagesFrom: "SELECT id, sent_at FROM messages WHERE id >= ? ORDER BY id"
                )
            ),
            exchange: Exchange(
                beginSnapshot: "BEGIN",
                endSnapshot: "COMMIT",
                abortSnapshot: "ROLLBACK",
                countDrafts: "SELECT count(*) FROM drafts",
                countConversations: "SELECT count(*) FROM conversations",
                countMessages: "SELECT count(*) FROM messages",
                articles: "SELECT \(article) FROM articles ORDER BY id",
                articlesWithin: "SELECT \(article) FROM articles WHERE created_at >= ? AND created_at < ? ORDER BY id",
                drafts: """
                    SELECT d.id, d.uid, d.article_id, d.base_revision, d.title, d.content, d.created_at, d.updated_at, a.uid
                    FROM drafts d LEFT JOIN articles a ON a.id = d.article_id WHERE d.unsaved = 1 ORDER BY d.id
                    """,
                conversations: "SELECT \(conversation) FROM conversations ORDER BY id",
                conversationsWithin: """
                    SELECT \(conversation) FROM conversations WHERE EXISTS
                    (SELECT 1 FROM messages WHERE conversation_id = conversations.id AND sent_at >= ? AND sent_at < ?) ORDER BY id
                    """,
                messages: """
                    SELECT m.id, m.uid, m.conversation_id, m.content, m.from_me, m.sent_at, m.sender, c.uid, c.title
                    FROM messages m JOIN conversations c ON c.id = m.conversation_id ORDER BY m.id
                    """,
                messagesWithin: """
                    SELECT m.id, m.uid, m.conversation_id, m.content, m.from_me, m.sent_at, m.sender, c.uid, c.title
                    FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.sent_at >= ? AND m.sent_at < ? ORDER BY m.id
                    """,
                messagesOf: "SELECT \(message) FROM messages WHERE conversation_id = ? ORDER BY sent_at, id",
                messagesOfWithin: "SELECT \(message) FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? ORDER BY sent_at, id"
            ),
            // A row a statement: SQLite's statements are calls in this process, and a lone row
            // keeps the upsert's per-row work the same.
            articleIndex: gramWrites("article_grams"),
            messageIndex: gramWrites("message_grams")
        )
    }()
}
