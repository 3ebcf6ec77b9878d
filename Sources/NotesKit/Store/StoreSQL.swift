/// The SQL text of every statement the store logic runs, by name: one instance per backend
/// (`StoreSQL.sqlite` in `Store/SQLite/SQLiteSQL.swift`; a PostgreSQL one beside it), reached as
/// `connection.sql`. The logic that runs a statement is written once; its text is the backend's.
///
/// Each entry says what it binds (parameters 1-based) and what it returns (columns 0-based); a
/// backend's text must bind and return exactly that. Grouped by table, one struct per group, so a
/// backend missing an entry does not compile.
///
/// Row shapes named below (columns in this order):
/// - *article row*: id, uid, title, content, created_at, updated_at, revision
/// - *draft row*: id, uid, article_id, base_revision, title, content, created_at, updated_at
/// - *conversation row*: id, uid, title, created_at, last_activity_at
/// - *message row*: id, uid, conversation_id, content, from_me, sent_at, sender
/// - *feed row*: seq, last_seq, kind, entity_id, at, revision, entries, uids
struct StoreSQL: Sendable {
    var meta: Meta
    var articles: Articles
    var drafts: Drafts
    var conversations: Conversations
    var messages: Messages
    var feed: FeedTable
    var exchange: Exchange
    /// The search index's tables (`Search/SearchIndex.swift`), of articles and of messages.
    var articleIndex: SearchTables
    var messageIndex: SearchTables
    /// What a search asks the server to check before it sends a row; nil where a statement is no
    /// round trip (SQLite: the engine reads the rows where they are).
    var searchFilter: SearchFilter?

    /// A condition on a record's text columns that holds for every record in which a search can
    /// find its query (and for few others), so that only those cross the wire; the search engine
    /// still checks each row it gets (`Search/SearchEngine.swift`).
    struct SearchFilter: Sendable {
        /// `condition(columns, caseSensitive)`: SQL over `columns` (any of which may hold the
        /// query) with one `?` per column, in order, each bound to the query's search key as text.
        var condition: @Sendable (_ columns: [String], _ caseSensitive: Bool) -> String
    }

    /// One INSERT of `rows` rows at once: its parameters are those of the single-row form,
    /// repeated per row (row k's parameter p is `k × perRow + p`).
    struct MultiRow: Sendable {
        var sql: String
        var rows: Int
    }

    /// Writes of many rows of one search index's `<kind>_grams(gram, df, tail)` at once (see
    /// `Search/SearchIndex.swift`): each entry holds the text for 1, 2, 4, … `batch` rows (entry k
    /// writes 2^k rows), so any number of rows takes a statement per `batch` and at most one per
    /// power of two for the rest. A row binds: 1 gram, 2 df, 3 tail (blob); row k's parameter p is
    /// `3k + p`.
    struct SearchTables: Sendable {
        /// The most rows a statement writes: 1 where a statement costs no round trip (SQLite).
        var batch: Int
        /// New gram rows (the grams are not in the table).
        var insertGrams: [String]
        /// Upserts: a gram not in the table gets the row; one that is gets its df raised by the
        /// row's and the row's tail appended to its own. Returns: 0 gram, 1 the tail's length in
        /// bytes, a row per gram written.
        var appendGrams: [String]
        /// Where a statement is a round trip to a server (nil where it is not: SQLite's engine reads
        /// a gram's frequency and postings, and the pending records, a statement each): one
        /// statement that reads, in one snapshot, what a search of 2+ characters plans with and
        /// what its index plan needs, `planReads(filter)`. `filter` is a ``SearchFilter``
        /// condition over the index's text columns (each `?` bound to the search key), or `TRUE`.
        /// Binds: 1 the query's grams (with the fields searched) as decimal text joined by commas
        /// ("12,345"), then the filter's parameters. Returns rows told apart by column 0:
        /// - 0: 1 gram, 2 df, 3 its tail (blob), for each gram the index has; the tail is NULL
        ///   unless the statement also sends the gram's blocks (``planPostings``);
        /// - 1: 1 gram, 2 first id, 3 ids (blob): every block of each gram whose tail was sent;
        /// - 2: 1 the number of pending records (`SearchIndex+Pending.swift`), 2 the highest id of
        ///   the index's records (its estimate of their count), one row;
        /// - 3: 2 id, 4… the text columns in the index's order: each pending record the filter
        ///   lets through.
        var planReads: (@Sendable (_ filter: String) -> String)?
        /// A condition on an id column, written after it (`id` + this): the id is one of those
        /// bound, decimal text joined by commas. Used by ``Keyset/ids``.
        var idIn: String

        /// `batch` (a power of two) rows a statement, of `table`, in a backend's placeholders:
        /// `row(k)` is row k's `(…)`, `upsert` the conflict clause and its RETURNING.
        init(table: String, batch: Int, row: (Int) -> String, upsert: String, planReads: (@Sendable (String) -> String)?, idIn: String) {
            self.batch = batch
            self.planReads = planReads
            self.idIn = idIn
            var sizes: [Int] = [1]
            while sizes.last! < batch { sizes.append(sizes.last! * 2) }
            let head = "INSERT INTO \(table)(gram, df, tail) VALUES "
            insertGrams = sizes.map { n in head + (0..<n).map(row).joined(separator: ", ") }
            appendGrams = sizes.map { n in head + (0..<n).map(row).joined(separator: ", ") + upsert }
        }
    }

    /// The statements of ``WriteContext/insertRows(count:_:bind:uid:)``: new rows of one table,
    /// each written unless its uid is there already (`ON CONFLICT (uid) DO NOTHING`).
    struct RowInserts: Sendable {
        /// Binds: one row's `perRow` values. Numbers its row above ``idFloor`` when there is one.
        var one: String
        /// The same for `many.rows` rows at once, numbered after the table's highest id.
        var many: MultiRow
        /// The same for one row (``many`` of one row), for writes that do not run ``many``.
        var lone: MultiRow
        /// Whether ``many`` runs only in a bulk write, other writes inserting with ``lone``: on
        /// SQLite a statement of many rows that could fail a constraint half-way keeps a statement
        /// journal, which a bulk write keeps in memory and another write could spill to a file.
        var manyOnlyInBulk: Bool
        /// Parameters a row.
        var perRow: Int
        /// Returns: 0 the highest id of the table, 0 when it is empty.
        var maxID: String
        /// Returns: 0 the id every new row must be above (the highest ever given out), for a table
        /// that numbers new rows after its highest stored id; nil when new ids never come back.
        var idFloor: String?
        /// Binds: 1 uid. Returns: 0 the id of the row with that uid.
        var idByUID: String

        /// The statements of `table`'s `columns` in a backend's words: `row(k)` is row k's
        /// `(…)` of placeholders, `tail` the conflict clause (and what it returns); with `floor`,
        /// ``one`` numbers its row above it. `rows` rows a statement (``many``).
        init(table: String, columns: [String], row: (Int) -> String, tail: String, floor: String? = nil, rows: Int = 64,
             manyOnlyInBulk: Bool = false) {
            let names = columns.joined(separator: ", ")
            let head = "INSERT INTO \(table)(\(names)) VALUES "
            let numbered = floor.map { "INSERT INTO \(table)(id, \(names)) VALUES ((\($0)) + 1, " + row(0).dropFirst() }
            one = (numbered ?? head + row(0)) + tail
            many = MultiRow(sql: head + (0..<rows).map(row).joined(separator: ", ") + tail, rows: rows)
            lone = MultiRow(sql: head + row(0) + tail, rows: 1)
            self.manyOnlyInBulk = manyOnlyInBulk
            perRow = columns.count
            maxID = "SELECT coalesce(max(id), 0) FROM \(table)"
            idFloor = floor
            idByUID = "SELECT id FROM \(table) WHERE uid = ?"
        }
    }

    /// Table `meta`: small named integers of the store (its cursor secret, the search index's
    /// indexed-through ids, the feed's compaction horizon).
    struct Meta: Sendable {
        /// Binds: 1 key (text). Returns: 0 value (int64), no row when unset.
        var get: String
        /// Binds: 1 key (text), 2 value (int64). Inserts the key, which must not exist yet.
        var insert: String
        /// Binds: 1 key (text), 2 value (int64). Sets the key, inserted or replaced.
        var put: String
        /// Binds: 1 key (text), 2 value (int64). Sets the key to the larger of its value and 2.
        var raise: String
    }

    struct Articles: Sendable {
        /// Binds: 1 id. Returns: an article row.
        var byID: String
        /// Binds: 1 uid. Returns: an article row.
        var byUID: String
        /// Rows bind: 1 uid, 2 title, 3 content, 4 created_at, 5 updated_at, 6 revision.
        var inserts: RowInserts
        /// Binds: 1 title, 2 content, 3 created_at, 4 updated_at, 5 revision, 6 id.
        var update: String
        /// Binds: 1 id.
        var delete: String
        /// Article rows newest first (`created_at`, then `id`), keyset-paged.
        var newestFirst: Keyset
    }

    struct Drafts: Sendable {
        /// Returns: the draft rows holding unsaved text, by id.
        var unsaved: String
        /// Binds: 1 id. Returns: a draft row.
        var byID: String
        /// Binds: 1 uid. Returns: a draft row.
        var byUID: String
        /// Binds: 1 uid, 2 article_id, 3 base_revision, 4 title, 5 content, 6 created_at,
        /// 7 updated_at. Inserts nothing (`changes` 0) when the uid exists; else unsaved.
        var insertIfNew: String
        /// Binds: 1 title, 2 content, 3 updated_at, 4 id. Marks it unsaved.
        var edit: String
        /// Binds: 1 article_id, 2 base_revision, 3 title, 4 content, 5 created_at, 6 updated_at,
        /// 7 id. Marks it unsaved.
        var update: String
        /// Binds: 1 id. Marks it as holding nothing unsaved.
        var markSaved: String
        /// Binds: 1 id.
        var delete: String
    }

    struct Conversations: Sendable {
        /// Binds: 1 id. Returns: a conversation row.
        var byID: String
        /// Binds: 1 title (exact). Returns: conversation rows, most recent activity first
        /// (`last_activity_at`, then `activity_seq`, descending).
        var allTitled: String
        /// Binds: 1 uid. Returns: a conversation row.
        var byUID: String
        /// Binds: 1 title. Returns: the conversation row of the oldest with that title.
        var byTitle: String
        /// Binds: 1 uid, 2 title, 3 created_at, 4 last_activity_at (activity_seq 0). The new id:
        /// `lastInsertRowID`.
        var insert: String
        /// As ``insert``; inserts nothing (`changes` 0, no row returned) when the uid exists.
        var insertIfNew: String
        /// Binds: 1 title, 2 id.
        var rename: String
        /// Binds: 1 title, 2 created_at, 3 last_activity_at, 4 id.
        var update: String
        /// Binds: 1 created_at (also the last activity), 2 id.
        var redate: String
        /// Binds: 1 last_activity_at, 2 activity_seq, 3 id.
        var touch: String
        /// Binds: 1 last_activity_at, 2 activity_seq, 3 id, 4 how many messages it got. Adds 4 to
        /// its `message_count`, and makes 1 and 2 its last activity where the stored one is at or
        /// before 1 (else keeps it). `changes` 0 only when there is no conversation `id`.
        var addMessages: String
        /// Binds: 1 id. Makes the conversation hot before its activity moves; `changes` 1 only when
        /// it was cold. Then ``cool`` runs. Nil: the backend keeps one index of every conversation's
        /// activity (see ``HotConversations``).
        var warm: String?
        /// Binds: 1 id (the conversation just made hot). Sends the older half of the hot ones
        /// back to the index of activity when there are too many.
        var cool: String?
        /// Binds: 1 how many of its messages were deleted, 2 id. Takes 1 off its `message_count`.
        var removeMessages: String
        /// Binds: 1 id. Returns: 0 its `message_count` (how many messages it holds).
        var messageCount: String
        /// Returns: 0 the sum of every conversation's `message_count` (how many messages there are).
        var messageTotal: String
        /// Binds: 1 conversation id. Returns: 0 id, 1 uid, 2 content of its messages, in chat
        /// order (sent_at, id).
        var messagesOf: String
        /// Binds: 1 id. Deletes the conversation and (cascading) its messages.
        var delete: String
        /// Conversation rows then 5 activity_seq, most recent activity first (`last_activity_at`,
        /// then `activity_seq`), keyset-paged.
        var mostRecentFirst: Keyset
    }

    struct Messages: Sendable {
        /// Binds: 1 id. Returns: a message row.
        var byID: String
        /// Binds: 1 uid. Returns: a message row.
        var byUID: String
        /// Binds: 1 id. Returns: 0 uid, 1 content, 2 conversation_id.
        var uidAndContent: String
        /// Rows bind: 1 uid, 2 conversation_id, 3 content, 4 from_me, 5 sent_at, 6 sender.
        var inserts: RowInserts
        /// Binds: 1 id.
        var delete: String
        /// Deletes one message. Binds: 1 id. Returns (no row when there was none): 0 id, 1 uid, 2
        /// content, 3 conversation_id.
        var deleteReturning: String
        /// Run after every delete of messages, so that no id is ever given out again. Binds: 1 the
        /// highest id of the messages deleted. Nil for a backend whose new ids never come back
        /// anyway (ids from a sequence).
        var keepDeletedIDs: String?
        /// Binds: 1 conversation_id, 2 from (ms, inclusive), 3 to (exclusive), 4 from_me,
        /// 5 content. Returns: 0 how many messages match exactly.
        var countSame: String
        /// Binds: 1 from, 2 to, 3 from_me, 4 content. Returns: 0 the lowest conversation id
        /// holding such a message (NULL when none).
        var conversationHolding: String
        /// One conversation's message rows newest first (`sent_at`, then `id`), keyset-paged; the
        /// filter binds the conversation id.
        var newestFirst: Keyset
    }

    /// Table `feed`: the change feed, one row per run of changes (see ``Feed``).
    struct FeedTable: Sendable {
        /// Returns: 0 the last seq of the newest row (no row: an empty feed). Where the feed has a
        /// run of sends (``lazy``), its changes come after: see ``SendRun/lastSeq``.
        var lastSeq: String
        /// Binds: 1 seq. Returns: the feed row starting at or before it (the newest such).
        var rowAtOrBefore: String
        /// Binds: 1 seq. Returns: the feed rows starting after it, by seq.
        var rowsAfter: String
        /// Binds: 1 kind (a delete kind), 2 seq. Returns: the feed rows of that kind after seq, by seq.
        var deletesAfter: String
        /// Returns: every feed row, newest first.
        var rowsNewestFirst: String
        /// Binds: 1 at (ms). Returns: 0 the first seq of the oldest row at or after it.
        var firstSeqSince: String
        /// Binds: the 8 columns of a feed row.
        var insert: String
        /// Binds: 1 seq (a row's first).
        var delete: String
        /// The uids of records by id, per entity of ``Feed/entities`` (article, conversation,
        /// message): one statement for a batch of changes. Binds: 1 ids as decimal text joined by
        /// commas ("12,345"). Returns: 0 id, 1 uid, for each of them that is stored.
        var uidsByIDs: [String]
        /// The open lazy run of sends (see ``LazySends``), nil where every change is written as
        /// it is made (PostgreSQL). Its `lastSeq` counts the run's changes; ``lastSeq`` does not.
        var lazy: SendRun?
    }

    /// The run of sends the feed does not write row by row: `meta` keeps where it starts
    /// (see ``LazySends``).
    struct SendRun: Sendable {
        /// Returns: 0 the newest seq, the run's included (``FeedTable/lastSeq`` counts rows only).
        var lastSeq: String
        /// Returns, only while a run is open: 0 its first seq, 1 its first message id, 2 the
        /// highest message id.
        var head: String
        /// Binds: 1 first seq, 2 first message id. Opens the run.
        var open: String
        /// Closes the run (its changes are written as feed rows first).
        var close: String
        /// Binds: 1 message id. Returns: 0 id, 1 sent_at of the messages from it on, by id.
        var messagesFrom: String
    }

    /// Whole-store reads of export, and its snapshot.
    struct Exchange: Sendable {
        /// Starts a read transaction over one snapshot (no statement yet runs).
        var beginSnapshot: String
        var endSnapshot: String
        var abortSnapshot: String
        /// Returns: 0 how many drafts hold unsaved text / conversations / messages.
        var countDrafts: String
        var countConversations: String
        var countMessages: String
        /// Returns: every article row, by id. Each `…Within` entry is its entry restricted to a
        /// time range (articles by created_at, messages by sent_at, conversations holding such a
        /// message): binds (after the entry's own) since (ms, inclusive), until (ms, exclusive).
        var articles: String
        var articlesWithin: String
        /// Returns: every unsaved draft row, by id, then 8 the uid of the article it edits (NULL
        /// for none, or one deleted since).
        var drafts: String
        /// Returns: every conversation row, by id.
        var conversations: String
        var conversationsWithin: String
        /// Returns: every message row, by id, then 7 its conversation's uid, 8 its title.
        var messages: String
        var messagesWithin: String
        /// Binds: 1 conversation id. Returns: its message rows in chat order (sent_at, id).
        var messagesOf: String
        var messagesOfWithin: String
    }
}
