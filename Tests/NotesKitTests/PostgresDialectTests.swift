import Testing
@testable import NotesKit

@Suite("SQLite's statement text as PostgreSQL runs it")
struct PostgresDialectTests {
    @Test("placeholders are numbered in order, numbered ones keep their number, quoted ones stay", arguments: [
        ("SELECT a FROM t WHERE b = ? AND c > ?", "SELECT a FROM t WHERE b = $1 AND c > $2"),
        ("UPDATE conversations SET created_at = ?1, last_activity_at = ?1 WHERE id = ?2",
         "UPDATE conversations SET created_at = $1, last_activity_at = $1 WHERE id = $2"),
        ("SELECT '?', \"a?\" FROM t WHERE x = ?", "SELECT '?', \"a?\" FROM t WHERE x = $1"),
        ("SELECT a FROM t WHERE b = ?10", "SELECT a FROM t WHERE b = $10"),
        ("SELECT 1", "SELECT 1"),
    ])
    func numbered(_ sql: String, _ expected: String) {
        #expect(PostgresDialect.numbered(sql) == expected)
    }

    @Test("a statement PostgreSQL takes from SQLite's table runs with PostgreSQL's placeholders")
    func sharedStatements() {
        #expect(StoreSQL.postgres.conversations.redate == StoreSQL.sqlite.conversations.redate)
        #expect(PostgresDialect.translated(StoreSQL.postgres.conversations.redate)
                == "UPDATE conversations SET created_at = $1, last_activity_at = $1 WHERE id = $2")
        #expect(PostgresDialect.translated(StoreSQL.postgres.messages.countSame)
                == "SELECT count(*) FROM messages WHERE conversation_id = $1 AND sent_at >= $2 AND sent_at < $3 AND from_me = $4 AND content = $5")
    }
}
