/// The store logic's statements that are not yet ``StoreSQL`` entries (the change feed, the search
/// index, compaction: see `docs/storage-seam.md`, "Where SQL still lives") are written in SQLite's
/// dialect. Until they move behind the seam, the PostgreSQL backend runs them through this
/// translation, which knows exactly the SQLite forms they use:
///
/// - `?` placeholders become `$1, $2, ...` in order;
/// - `INSERT OR REPLACE` becomes an upsert on the table's key (row-level security makes every
///   key start with `owner`);
/// - `INDEXED BY` hints are dropped;
/// - an insert into a table with an `id` returns it (`RETURNING id`: PostgreSQL has no rowid);
/// - the feed's newest seq is the whole store's (`feed_head`): every role numbers its changes after
///   every other role's, which row-level security hides;
/// - a subquery in FROM gets the alias PostgreSQL requires; SQLite's two-argument `max` is
///   `greatest`;
/// - `PRAGMA`s (page counts, cache sizes, vacuum) do nothing and read as 0.
///
/// Each rule goes when its statements become ``StoreSQL`` entries.
enum PostgresDialect {
    /// The key of each table written with `INSERT OR REPLACE` or an upsert.
    static let keys: [String: String] = [
        "meta": "owner, key",
        "article_grams": "owner, gram", "message_grams": "owner, gram",
        "article_blocks": "owner, gram, first", "message_blocks": "owner, gram, first",
        "search_pending": "owner, kind, id",
    ]
    static let tablesWithID: Set<String> = ["articles", "drafts", "conversations", "messages"]

    static func isSQLiteOnly(_ sql: String) -> Bool {
        sql.drop(while: { $0 == " " || $0 == "\n" }).prefix(6).uppercased() == "PRAGMA"
    }

    static func translated(_ sql: String) -> String {
        if isSQLiteOnly(sql) { return "SELECT 0" }
        if sql == "SELECT last_seq FROM feed WHERE seq = (SELECT max(seq) FROM feed)" { return "SELECT seq FROM feed_head" }
        var text = numbered(sql)
        if text.hasPrefix("SELECT count(*) FROM (SELECT "), text.hasSuffix(")") { text += " AS rows" }
        if let range = text.firstRange(of: "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)") {
            text.replaceSubrange(range, with: "ON CONFLICT (owner, key) DO UPDATE SET value = greatest(meta.value, excluded.value)")
        }
        if let range = text.firstRange(of: " INDEXED BY ") {
            let end = text[range.upperBound...].firstIndex(of: " ") ?? text.endIndex
            text.removeSubrange(range.lowerBound..<end)
        }
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
        if text.hasPrefix("INSERT INTO "), let table = insertTable(text) {
            if tablesWithID.contains(table) && !text.contains("RETURNING") { text += " RETURNING id" }
        }
        return text
    }

    /// The table an `INSERT INTO table(...)` writes.
    static func insertTable(_ text: String) -> String? {
        let rest = text.dropFirst("INSERT INTO ".count)
        let name = rest.prefix { $0 != "(" && $0 != " " }
        return name.isEmpty ? nil : String(name)
    }

    /// `sql` with each `?` outside quotes numbered `$1`, `$2`, ... in order.
    static func numbered(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        var out = ""
        var n = 0
        var quote: Character?
        for ch in sql {
            if let q = quote {
                if ch == q { quote = nil }
                out.append(ch)
            } else if ch == "'" || ch == "\"" {
                quote = ch
                out.append(ch)
            } else if ch == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\n" }).reversed().drop(while: { $0 == " " || $0 == "\n" }).reversed())
    }
}
