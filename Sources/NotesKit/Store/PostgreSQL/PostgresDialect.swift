/// The SQL the store logic still builds in SQLite's words at run time — the keyset walks and
/// `select`'s statements (assembled from columns, filters and a position, with `?` placeholders)
/// and the search index's statements in `Search/` (see `docs/storage-seam.md`, "Where SQL still
/// lives") — runs on PostgreSQL through this translation, which knows exactly the forms they use:
///
/// - `?` placeholders become `$1, $2, ...` in order, `?N` becomes `$N` (``StoreSQL/postgres``'s own
///   entries are written with `$n` already and pass through unchanged; those it shares with
///   ``StoreSQL/sqlite`` are numbered here);
/// - the search index's `INSERT OR REPLACE` names the table's key, which row-level security makes
///   start with `owner` (its batched gram writes are ``StoreSQL/SearchTables`` entries);
/// - a subquery in FROM gets the alias PostgreSQL requires.
///
/// Each rule goes when its statements become ``StoreSQL`` entries.
enum PostgresDialect {
    /// The key of each search table written with `INSERT OR REPLACE` or an upsert.
    static let keys: [String: String] = [
        "article_grams": "owner, gram", "message_grams": "owner, gram",
        "article_blocks": "owner, gram, first", "message_blocks": "owner, gram, first",
        "search_pending": "owner, kind, id",
    ]

    static func translated(_ sql: String) -> String {
        var text = numbered(sql)
        if text.hasPrefix("SELECT count(*) FROM (SELECT "), text.hasSuffix(")") { text += " AS rows" }
        if text.hasPrefix("INSERT OR REPLACE INTO ") {
            text = "INSERT INTO " + text.dropFirst("INSERT OR REPLACE INTO ".count)
            if let table = insertTable(text), let key = keys[table],
               let open = text.firstIndex(of: "("), let close = text[open...].firstIndex(of: ")") {
                let keyColumns = Set(key.split(separator: ",").map { $0.trimmingCharacters() })
                let columns = text[text.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters() }
                let updates = columns.filter { !keyColumns.contains($0) }.map { "\($0) = excluded.\($0)" }
                text += updates.isEmpty ? " ON CONFLICT (\(key)) DO NOTHING" : " ON CONFLICT (\(key)) DO UPDATE SET " + updates.joined(separator: ", ")
            }
        }
        return text
    }

    /// The table an `INSERT INTO table(...)` writes.
    static func insertTable(_ text: String) -> String? {
        let rest = text.dropFirst("INSERT INTO ".count)
        let name = rest.prefix { $0 != "(" && $0 != " " }
        return name.isEmpty ? nil : String(name)
    }

    /// `sql` with each `?` outside quotes numbered `$1`, `$2`, ... in order, and each `?N` (SQLite's
    /// numbered parameter; a statement uses one form or the other) written `$N`.
    static func numbered(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        var out = ""
        var n = 0
        var quote: Character?
        // Just after a `?` (written as `$`): whether digits followed it (its own number), else nil.
        var hasDigits: Bool?
        for ch in sql {
            if let digits = hasDigits {
                if ch.isASCII, ch.isNumber {
                    out.append(ch)
                    hasDigits = true
                    continue
                }
                if !digits {
                    n += 1
                    out += "\(n)"
                }
                hasDigits = nil
            }
            if let q = quote {
                if ch == q { quote = nil }
                out.append(ch)
            } else if ch == "'" || ch == "\"" {
                quote = ch
                out.append(ch)
            } else if ch == "?" {
                out.append("$")
                hasDigits = false
            } else {
                out.append(ch)
            }
        }
        if hasDigits == false { out += "\(n + 1)" }
        return out
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\n" }).reversed().drop(while: { $0 == " " || $0 == "\n" }).reversed())
    }
}
