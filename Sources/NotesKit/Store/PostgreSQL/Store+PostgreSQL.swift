/// A store on a PostgreSQL server: `Store.open(path: "postgresql://user@host:port/dbname")`.
extension Store {
    /// Opens (creating its schema on first use) the store in the PostgreSQL database that `uri`
    /// names: any libpq connection URI, `postgresql://` or `postgres://`.
    ///
    /// Fails with `.authentication` for a wrong password or a role not allowed in, `.unreachable`
    /// when the server cannot be reached, `.schema` for a database that is not a NotesKit store, a
    /// store written by a newer NotesKit, or a server older than PostgreSQL 13, and
    /// `.invalidArgument` for a URI libpq cannot read.
    static func openPostgres(uri: String, readOnly: Bool) throws -> Store {
        guard !uri.utf8.contains(0) else { throw NotesError(.invalidArgument, "the connection URI contains a NUL character") }
        return try Store(path: nil, connection: Connection(try PostgresDatabase(uri: uri)), readOnly: readOnly)
    }

    /// Creates the login role `name` on the store's PostgreSQL server, with `password` (nil: no
    /// password; the role then logs in only where the server trusts it), as a member of the
    /// store's group role: it may use the store and sees only its own rows. Only the store's
    /// administrator (the role that created it, which needs CREATEROLE) can; `.conflict` when the
    /// role exists, `.validation` (`not_postgres`) on a SQLite store.
    public func createUser(name: String, password: String? = nil) throws {
        if isReadOnly { throw NotesError(.readOnly, "the store was opened read-only; open it without read_only to add users") }
        try read { db in
            guard let postgres = db.database as? PostgresDatabase else {
                throw NotesError(.validation, "this is a SQLite store; only a store on a PostgreSQL server has users", code: "not_postgres")
            }
            try PostgresSchema.createUser(postgres.pg, name: name, password: password)
        }
    }
}

extension PostgresConnection {
    /// True for a PostgreSQL connection URI (`postgresql://` or `postgres://`).
    static func isURI(_ text: String) -> Bool {
        let lower = text.prefix(14).lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }
}
