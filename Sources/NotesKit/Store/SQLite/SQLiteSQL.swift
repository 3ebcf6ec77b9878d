/// The SQLite backend's statements (see ``StoreSQL``): SQLite's dialect, `?` placeholders, uids
/// as 16-byte BLOBs.
extension StoreSQL {
    static let sqlite = StoreSQL(
        meta: Meta(
            get: "SELECT value FROM meta WHERE key = ?",
            insert: "INSERT INTO meta(key, value) VALUES (?, ?)",
            put: "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)"
        )
    )
}
