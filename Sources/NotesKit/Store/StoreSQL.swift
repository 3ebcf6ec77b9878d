/// The SQL text of every statement the store logic runs, by name: one instance per backend
/// (`StoreSQL.sqlite` in `Store/SQLite/SQLiteSQL.swift`; a PostgreSQL one beside it), reached as
/// `connection.sql`. The logic that runs a statement is written once; its text is the backend's.
///
/// Each entry says what it binds (parameters 1-based) and what it returns (columns 0-based); a
/// backend's text must bind and return exactly that. Grouped by table, one struct per group, so a
/// backend missing an entry does not compile.
struct StoreSQL: Sendable {
    var meta: Meta

    /// Table `meta`: small named integers of the store (its cursor secret, the search index's
    /// indexed-through ids).
    struct Meta: Sendable {
        /// Binds: 1 key (text). Returns: 0 value (int64), no row when unset.
        var get: String
        /// Binds: 1 key (text), 2 value (int64). Inserts the key, which must not exist yet.
        var insert: String
        /// Binds: 1 key (text), 2 value (int64). Sets the key, inserted or replaced.
        var put: String
    }
}
