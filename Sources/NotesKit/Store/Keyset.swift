/// Keyset paging, newest first, over a `(key, id)` order: `ORDER BY key DESC, id DESC`.
///
/// A row-value predicate `(key, id) < (?, ?)` lets SQLite seek on `key` only and then walk every
/// row that shares it, so a page deep inside a run of equal keys (a bulk import writes thousands of
/// rows in one millisecond) costs O(depth). This splits the seek in two index seeks instead: the
/// rest of the current key (`key = ? AND id < ?`), then, if the page is not full, older keys
/// (`key < ?`). Both need an index on `(filter columns…, key, id)`. O(log n + limit) at any depth.
struct Keyset: Sendable {
    /// `SELECT columns FROM table`, without WHERE.
    let select: String
    /// The sort key's column, e.g. `created_at`.
    let key: String
    /// The id column (the tie-breaker), e.g. `id`.
    var id: String = "id"
    /// An extra condition with its `?` parameters, e.g. `conversation_id = ?`; nil for none.
    var filter: String? = nil

    /// Up to `limit` rows after `position` (from the start when nil), newest first.
    /// `bind` binds the filter's parameters starting at the index it is given and returns the next free one.
    func rows<Row>(_ db: Connection, after position: CursorCodec.Position?, limit: Int,
                   bind: (Statement, Int32) -> Int32 = { _, i in i }, row: (Statement) -> Row) throws -> [Row] {
        let base = filter.map { "\(select) WHERE \($0) AND " } ?? "\(select) WHERE "
        var out: [Row] = []
        out.reserveCapacity(limit)
        guard let position else {
            let stmt = try db.prepare("\(select)\(filter.map { " WHERE \($0)" } ?? "") ORDER BY \(key) DESC, \(id) DESC LIMIT ?")
            stmt.bind(bind(stmt, 1), Int64(limit))
            while try stmt.step() { out.append(row(stmt)) }
            return out
        }
        let sameKey = try db.prepare(base + "\(key) = ? AND \(id) < ? ORDER BY \(id) DESC LIMIT ?")
        var i = bind(sameKey, 1)
        sameKey.bind(i, position.key).bind(i + 1, position.id).bind(i + 2, Int64(limit))
        while try sameKey.step() { out.append(row(sameKey)) }
        guard out.count < limit else { return out }
        let olderKeys = try db.prepare(base + "\(key) < ? ORDER BY \(key) DESC, \(id) DESC LIMIT ?")
        i = bind(olderKeys, 1)
        olderKeys.bind(i, position.key).bind(i + 1, Int64(limit - out.count))
        while try olderKeys.step() { out.append(row(olderKeys)) }
        return out
    }
}
