extension Store {
    /// The store's random secret that signs its cursors, made on first use.
    static func cursorSecret(_ db: Connection) throws -> UInt64 {
        let select = try db.prepare(db.sql.meta.get)
        select.bind(1, "cursor_secret")
        defer { select.reset() }
        if try select.step() { return UInt64(bitPattern: select.int64(0)) }
        return try db.transaction {
            select.reset()
            select.bind(1, "cursor_secret")
            if try select.step() { return UInt64(bitPattern: select.int64(0)) }
            let secret = UInt64.random(in: 1...UInt64.max)
            let insert = try db.prepare(db.sql.meta.insert)
            insert.bind(1, "cursor_secret").bind(2, Int64(bitPattern: secret))
            try insert.run()
            return secret
        }
    }

    /// The first column of the first row of `sql` as an integer, 0 when there is no row.
    static func scalar(_ db: Connection, _ sql: String) throws -> Int64 {
        let stmt = try db.prepare(sql)
        defer { stmt.reset() }
        return try stmt.step() ? stmt.int64(0) : 0
    }
}
