/// A named, forward-only schema step of one backend. Applied once, in order, and recorded in the
/// backend's list of applied migrations (SQLite: table `migrations`).
///
/// `then` runs after the SQL, in the same transaction, for what SQL alone cannot do (building a
/// search index over the rows a store already has).
struct Migration: Sendable {
    let name: String
    let sql: String
    var then: (@Sendable (Connection) throws -> Void)? = nil
    /// Copies tables into new ones and drops the old: runs with foreign keys off (dropping a
    /// parent table would cascade), and the freed pages are given back after it commits.
    var rebuildsTables = false
}

/// The SQLite backend's schema: its connection settings and its own forward-only migrations.
///
/// A new migration is appended to ``migrations`` (named `NNNN_words`, the next number); SQLite
/// records each applied one by name in table `migrations`, and a store holding a name this list
/// does not know was written by a newer NotesKit and is refused.
enum SQLiteSchema {
    /// `PRAGMA application_id` of a NotesKit store ("NKST").
    static let applicationID: Int64 = 0x4E4B_5354

    /// Every migration this library knows, oldest first. Append only: never edit or reorder one
    /// that has shipped.
    static let migrations: [Migration] = [
        Migration(name: "0001_articles_drafts_changes", sql: """
            CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
            CREATE TABLE articles(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                uid TEXT NOT NULL UNIQUE,
                title TEXT NOT NULL,
                content TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                revision INTEGER NOT NULL DEFAULT 1
            );
            CREATE INDEX articles_newest ON articles(created_at, id);
            CREATE TABLE drafts(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                uid TEXT NOT NULL UNIQUE,
                article_id INTEGER,
                base_revision INTEGER,
                title TEXT NOT NULL,
                content TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE TABLE changes(
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                entity TEXT NOT NULL,
                op TEXT NOT NULL,
                entity_id INTEGER NOT NULL,
                uid TEXT NOT NULL,
                revision INTEGER,
                at INTEGER NOT NULL
            );
            """),
        // Chat. Deleting a conversation deletes its messages (foreign_keys is ON). History pages
        // by (sent_at, id) within one conversation. The list pages by (last_activity_at,
        // activity_seq): activity_seq is the change-feed seq of the conversation's latest activity
        // (its creation or newest message), so activity within one millisecond keeps its order.
        Migration(name: "0002_conversations_messages", sql: """
            CREATE TABLE conversations(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                uid TEXT NOT NULL UNIQUE,
                title TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_activity_at INTEGER NOT NULL,
                activity_seq INTEGER NOT NULL
            );
            CREATE INDEX conversations_recent ON conversations(last_activity_at, activity_seq);
            CREATE TABLE messages(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                uid TEXT NOT NULL UNIQUE,
                conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                content TEXT NOT NULL,
                from_me INTEGER NOT NULL,
                sent_at INTEGER NOT NULL
            );
            CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
            """),
        Migration(name: "0003_search_index", sql: """
            CREATE TABLE article_grams(gram INTEGER PRIMARY KEY, df INTEGER NOT NULL, tail BLOB NOT NULL);
            CREATE TABLE article_blocks(
                gram INTEGER NOT NULL,
                first INTEGER NOT NULL,
                ids BLOB NOT NULL,
                PRIMARY KEY (gram, first)
            ) WITHOUT ROWID;
            CREATE TABLE message_grams(gram INTEGER PRIMARY KEY, df INTEGER NOT NULL, tail BLOB NOT NULL);
            CREATE TABLE message_blocks(
                gram INTEGER NOT NULL,
                first INTEGER NOT NULL,
                ids BLOB NOT NULL,
                PRIMARY KEY (gram, first)
            ) WITHOUT ROWID;
            CREATE INDEX messages_newest ON messages(sent_at, id);
            """, then: { db in
                try SearchIndex.articles.rebuild(db)
                try SearchIndex.messages.rebuild(db)
            }),
        // Writes leave new records to the search index's pending set (see `SearchIndex+Pending.swift`):
        // records above a kind's `*_search_through` id in `meta` are not indexed yet, and indexed
        // records changed or removed since are listed here with the grams the index holds for them.
        Migration(name: "0004_search_pending", sql: """
            CREATE TABLE search_pending(
                kind INTEGER NOT NULL,
                id INTEGER NOT NULL,
                grams BLOB NOT NULL,
                PRIMARY KEY (kind, id)
            ) WITHOUT ROWID;
            INSERT OR REPLACE INTO meta(key, value) VALUES
                ('article_search_through', (SELECT coalesce(max(id), 0) FROM articles)),
                ('message_search_through', (SELECT coalesce(max(id), 0) FROM messages));
            """),
        // Uids as 16 bytes, small columns first, no index naming the rowid twice, and the change
        // feed as runs of changes (see `Migration+CompactRows.swift` and `Feed.swift`).
        Migration(name: CompactRowsMigration.name, sql: "", then: CompactRowsMigration.run, rebuildsTables: true),
        // Messages name their author in group chats (imported from Telegram, WhatsApp, ...); NULL
        // for the two-person chats, where from_me tells who wrote it.
        Migration(name: "0006_message_sender", sql: """
            ALTER TABLE messages ADD COLUMN sender TEXT;
            """),
        // A saved draft stays open on its article (the app's editor after its first save):
        // `unsaved` is 1 while a draft holds text not saved, 0 once saved or when opened on an
        // article and not edited since. Drafts from before are all unsaved, as they were. (The
        // column is added only when missing: a store whose later migrations were taken out by
        // hand, as the tests make old stores, still has it.)
        Migration(name: "0007_drafts_unsaved", sql: "", then: { db in
            let has = try db.prepare("SELECT count(*) FROM pragma_table_info('drafts') WHERE name = 'unsaved'")
            defer { has.reset() }
            guard try has.step(), has.int64(0) == 0 else { return }
            try db.execute("ALTER TABLE drafts ADD COLUMN unsaved INTEGER NOT NULL DEFAULT 1")
        }),
        // A send writes one page less: messages are numbered without AUTOINCREMENT (whose counter
        // row in `sqlite_sequence` every insert rewrote); ids stay never reused through the
        // `message_id_floor` in `meta` (see `MessageIDFloor.swift`).
        Migration(name: MessageIDFloor.migrationName, sql: "", then: MessageIDFloor.migrate, rebuildsTables: true),
        // How many messages each conversation holds, kept by the writes that add or delete them:
        // `count(conversation=…)` reads one row instead of walking the conversation's index. Sends
        // add to it in the row they write anyway (the conversation's last activity), so it costs
        // them no page. (Added only when missing, as 0007.)
        Migration(name: "0009_conversation_message_count", sql: "", then: { db in
            if try Store.scalar(db, "SELECT count(*) FROM pragma_table_info('conversations') WHERE name = 'message_count'") == 0 {
                try db.execute("ALTER TABLE conversations ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0")
            }
            try db.execute("""
                UPDATE conversations SET message_count = (SELECT count(*) FROM messages WHERE conversation_id = conversations.id)
                """)
        }),
        // A send writes no feed row: the feed's run of sends is kept in `meta` (see `LazySends`
        // in `Feed.swift`). Nothing to change in the file; recorded so that an older NotesKit,
        // which would number its changes over the run's, refuses the store.
        Migration(name: "0010_lazy_sends", sql: ""),
        // A send to a conversation written to lately writes no index page: only the cold
        // conversations are in the index of activity (see `HotConversations.swift`).
        Migration(name: HotConversations.migrationName, sql: "", then: HotConversations.migrate),
    ]

    static func configure(_ db: Connection, inMemory: Bool, readOnly: Bool, durability: Durability) throws {
        try db.execute("PRAGMA busy_timeout = \(Store.busyTimeoutMilliseconds)")
        // The first read of a file that is not a database fails here, with SQLITE_NOTADB; another
        // application's database is refused here, before switching to WAL would alter its header.
        try refuseForeignDatabase(db)
        // No auto-vacuum (SQLite's default, `NONE`): freed pages go to the file's free list and
        // later writes reuse them; `Store.compact` gives them back (see `reclaimSpace`). Stores
        // made before in `INCREMENTAL` mode keep it.
        if !inMemory && !readOnly { try db.execute("PRAGMA journal_mode = WAL") }
        // WAL with synchronous=FULL syncs the WAL at every commit: a returned write survives a power
        // cut. NORMAL syncs only at checkpoints: consistent, but the last commits may be lost. The
        // names are SQLite's care: its unix VFS syncs the folder after creating the journal of the
        // switch to WAL and the -wal file, which puts a new store file's own name on disk too.
        try db.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = \(durability == .durable ? "FULL" : "NORMAL")")
        try db.execute("PRAGMA cache_size = -\(pageCacheKiB)")
    }

    /// The most of the store file the store's connection keeps in SQLite's page cache, in KiB
    /// (SQLite's default is 2 MiB). A read of a page in the cache costs no `pread` system call and
    /// no copy of the page: with the default, a store of 10 000 articles (some 10 MB) already read
    /// most pages of a `get` by id from the file again, about a tenth of the get. The cache takes
    /// memory only for the pages read, up to this bound.
    static let pageCacheKiB = 32_768

    /// Brings the schema up to date in one transaction, or refuses a file this library must not
    /// touch: a database of another application, or one migrated by a newer NotesKit.
    ///
    /// A store already at this library's schema is only read: opening it writes nothing, so a store
    /// on a full disk still opens (and reads), and opening never waits for another writer's lock.
    static func migrate(_ db: Connection, readOnly: Bool) throws {
        if readOnly { return try checkSchema(db) }
        if try isCurrent(db) { return }
        let hasList = try Store.scalar(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'") == 1
        let done = hasList ? try appliedMigrations(db) : []
        let rebuilds = migrations.contains { $0.rebuildsTables && !done.contains($0.name) }
        if rebuilds { try db.execute("PRAGMA foreign_keys = OFF") }
        defer { if rebuilds { _ = try? db.execute("PRAGMA foreign_keys = ON") } }
        try db.transaction {
            try refuseForeignDatabase(db)
            try db.execute("CREATE TABLE IF NOT EXISTS migrations(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at INTEGER NOT NULL)")
            let applied = try appliedMigrations(db)
            let known = migrations.map(\.name)
            if let unknown = applied.first(where: { !known.contains($0) }) {
                throw unknownMigration(unknown)
            }
            for migration in migrations where !applied.contains(migration.name) {
                try db.execute(migration.sql)
                try migration.then?(db)
                let insert = try db.prepare("INSERT INTO migrations(name, applied_at) VALUES (?, ?)")
                insert.bind(1, migration.name).bind(2, Timestamp.now().milliseconds)
                try insert.run()
            }
            try db.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(migrations.count)")
        }
        if rebuilds && !done.isEmpty {
            // Give the old tables' pages back: at once in incremental mode, else by one VACUUM
            // (`compact()` does it if this is interrupted, or fails, e.g. on a full disk: the
            // migration itself has committed). A new store has none worth a VACUUM.
            if let sqlite = db.sqlite, (try? sqlite.reclaimSpace()) == nil {
                _ = try? sqlite.reclaimSpaceOutsideTransaction()
            }
        }
    }

    /// The error for a recorded migration this library does not know: a newer NotesKit's, or (when
    /// the name is not shaped like one, `NNNN_words`) a damaged file.
    static func unknownMigration(_ name: String) -> NotesError {
        let digits = name.utf8.prefix(4)
        let shaped = name.utf8.count > 5 && digits.count == 4 && digits.allSatisfy { $0 >= 48 && $0 <= 57 }
            && name.utf8.dropFirst(4).first == 95
            && name.utf8.dropFirst(5).allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        if !shaped {
            return NotesError(.corrupt, "the store file is damaged (its list of migrations holds \"\(NotesError.shown(name, limit: 40))\"); restore it from a backup")
        }
        return NotesError(.schema, "this store was written by a newer NotesKit (it has migration \"\(name)\", this library knows up to \"\(migrations.last?.name ?? "")\"); upgrade noteskit to open it")
    }

    /// True when the file is a NotesKit store with exactly this library's migrations applied.
    static func isCurrent(_ db: Connection) throws -> Bool {
        guard try Store.scalar(db, "PRAGMA application_id") == applicationID,
              try Store.scalar(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'") == 1
        else { return false }
        return try appliedMigrations(db) == migrations.map(\.name)
    }

    /// The names of the migrations recorded in the store, in the order they were applied.
    static func appliedMigrations(_ db: Connection) throws -> [String] {
        let stmt = try db.prepare("SELECT name FROM migrations ORDER BY id")
        defer { stmt.reset() }
        var applied: [String] = []
        while try stmt.step() { applied.append(stmt.text(0)) }
        return applied
    }

    /// Refuses a database that another application made (a foreign `application_id`, or tables
    /// without NotesKit's id), without writing anything to it.
    static func refuseForeignDatabase(_ db: Connection) throws {
        let appID = try Store.scalar(db, "PRAGMA application_id")
        if appID == applicationID { return }
        let tables = try Store.scalar(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        if appID != 0 || tables > 0 {
            throw NotesError(.schema, "this SQLite database is not a NotesKit store (application_id \(appID), \(tables) tables); open or create a NotesKit store file instead")
        }
    }

    /// For a read-only store: refuses a file whose schema is not exactly this library's.
    static func checkSchema(_ db: Connection) throws {
        guard try Store.scalar(db, "PRAGMA application_id") == applicationID else {
            throw NotesError(.schema, "this file is not a NotesKit store (or it was never opened writable)")
        }
        let applied = try appliedMigrations(db)
        let known = migrations.map(\.name)
        if let unknown = applied.first(where: { !known.contains($0) }) {
            throw unknownMigration(unknown)
        }
        if applied.count < known.count {
            throw NotesError(.schema, "this store needs upgrading to this NotesKit's schema; open it once without \(option: "readOnly", true)")
        }
    }
}
