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
        // search plans, and reads its index plan's postings and pending records, in one.
        func gramWrites(_ table: String, blocks: String, records: String, columns: [String], kind: Int,
                        through: String) -> SearchTables {
            SearchTables(table: table, batch: 512, row: { k in "($\(3 * k + 1), $\(3 * k + 2), $\(3 * k + 3))" },
                         upsert: " ON CONFLICT (owner, gram) DO UPDATE SET df = \(table).df + excluded.df, tail = \(table).tail || excluded.tail RETURNING gram, length(\(table).tail)",
                         planReads: planReads(table, blocks: blocks, records: records, columns: columns, kind: kind, through: through),
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
        // One index of every conversation's activity: no hot conversations, one walk.
        sql.conversations.warm = nil
        sql.conversations.cool = nil
        sql.conversations.mostRecentFirst.parts = []
        sql.messages.inserts = inserts("messages", ["uid", "conversation_id", "content", "from_me", "sent_at", "sender"])
        sql.messages.keepDeletedIDs = nil  // ids from a sequence never come back
        // The whole store's newest seq (kept by a trigger): a role numbers its changes after
        // every other role's, which it cannot see.
        sql.feed.lastSeq = "SELECT seq FROM feed_head"
        // Every change is a feed row as it is made (the trigger keeping `feed_head`, and the
        // wake-ups of other roles and hosts, follow the rows): no lazy run of sends.
        sql.feed.lazy = nil
        sql.feed.deletesAfter = "SELECT \(feed) FROM feed WHERE kind = $1 AND kind >= 6 AND seq > $2 ORDER BY seq"
        sql.feed.uidsByIDs = ["articles", "conversations", "messages"].map {
            "SELECT id, uid FROM \($0) WHERE id = ANY(string_to_array($1, ',')::bigint[])"
        }
        // One snapshot for the whole export: every statement sees the same committed state.
        sql.exchange.beginSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        sql.articleIndex = gramWrites("article_grams", blocks: "article_blocks", records: "articles", columns: ["title", "content"],
                                      kind: 0, through: "article_search_through")
        sql.messageIndex = gramWrites("message_grams", blocks: "message_blocks", records: "messages", columns: ["content"],
                                      kind: 1, through: "message_search_through")
        sql.searchFilter = PostgresSearchFilter.filter
        return sql
    }()
}

extension StoreSQL {
    /// The postings ``StoreSQL/SearchTables/planReads`` sends with the frequencies: those of the
    /// two rarest grams of each field, each of at most this many records (a rare query's index
    /// plan then needs no other read; a frequent one's scan is not burdened with long lists).
    static let planPostings = 4_096

    /// PostgreSQL's ``StoreSQL/SearchTables/planReads`` of one search index (`table`, `blocks`)
    /// over `records`, whose searched texts are `columns` (each with its `<column>_plain`).
    ///
    /// The new records (above the indexed-through id) are read by the primary key's index: the
    /// bound is a subquery's value (bare: PostgreSQL 15 left `id > coalesce((SELECT …), 0)` a
    /// filter on a walk of the whole table), and the range is closed by the highest id, so that the
    /// planner, which knows neither end, takes it for a narrow range and not a third of the table.
    static func planReads(_ table: String, blocks: String, records: String, columns: [String], kind: Int,
                          through: String) -> @Sendable (String) -> String {
        let texts = columns.joined(separator: ", ")
        let plain = columns.map { "\($0)_plain" }.joined(separator: ", ")
        let nulls = columns.map { _ in "NULL::text" }.joined(separator: ", ")
        func sent(_ q: String) -> String { "\(q)rank <= 2 AND \(q)df <= \(planPostings)" }
        let (sentHere, sentInQ) = (sent(""), sent("q."))
        return { filter in
            """
            WITH q AS (SELECT gram, df, tail, row_number() OVER (PARTITION BY gram & 1 ORDER BY df, gram) AS rank
                       FROM \(table) WHERE gram = ANY(string_to_array(?, ',')::bigint[])),
            p AS (SELECT r.id, \(columns.map { "r.\($0)" }.joined(separator: ", ")), \(columns.map { "r.\($0)_plain" }.joined(separator: ", "))
                  FROM search_pending s JOIN \(records) r ON r.id = s.id WHERE s.kind = \(kind)
                  UNION ALL SELECT id, \(texts), \(plain) FROM \(records)
                  WHERE id > (SELECT coalesce((SELECT value FROM meta WHERE key = '\(through)' ORDER BY owner = '' LIMIT 1), 0))
                    AND id <= (SELECT max(id) FROM \(records)))
            SELECT 0, gram, df, CASE WHEN \(sentHere) THEN tail END, \(nulls) FROM q
            UNION ALL SELECT 1, b.gram, b.first, b.ids, \(nulls) FROM \(blocks) b JOIN q ON q.gram = b.gram AND \(sentInQ)
            UNION ALL SELECT 2, (SELECT count(*) FROM p), coalesce(max(id), 0), NULL, \(nulls) FROM \(records)
            UNION ALL SELECT 3, NULL, id, NULL, \(texts) FROM p WHERE \(filter)
            """
        }
    }
}
