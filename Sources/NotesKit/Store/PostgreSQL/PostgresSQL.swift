/// The PostgreSQL backend's statements (see ``StoreSQL``): `$n` placeholders, uids as `uuid`,
/// blobs as `bytea`, and upserts on the (owner, key) keys that row-level security needs.
extension StoreSQL {
    static let postgres = StoreSQL(
        meta: Meta(
            // A role's own setting first, else the store-wide one (owner '').
            get: "SELECT value FROM meta WHERE key = $1 ORDER BY owner = '' LIMIT 1",
            insert: "INSERT INTO meta(key, value) VALUES ($1, $2)",
            put: "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (owner, key) DO UPDATE SET value = excluded.value"
        )
    )
}
