/// The articles of a store: create, read, update, delete, page newest first, bulk import.
///
/// Obtained as `store.articles`. Every method is one transaction (or one read) under the store's
/// lock; writes record their changes in the change feed in the same transaction.
public struct ArticleStore: Sendable {
    let store: Store

    static let columns = "id, uid, title, content, created_at, updated_at, revision"
    static let listKind = "articles"

    // MARK: - Reading

    /// The article with `id`, or `.notFound`. O(log n).
    public func get(_ id: Int64) throws -> Article {
        try store.read { db in
            guard let article = try Self.fetch(db, id) else { throw NotesError.notFound("article", id) }
            return article
        }
    }

    /// How many articles were created in `range` (all of them by default). O(log n + count)
    /// over the index `(created_at, id)`.
    public func count(range: TimeRange = .all) throws -> Int {
        try select(since: range.since, until: range.until).count()
    }

    /// One page of articles, newest first (`created_at`, then `id`, descending), or oldest first
    /// when `ascending`, created within `range`.
    ///
    /// Keyset-paged: `after` is the `nextCursor` of the previous page; a page at any depth costs
    /// what the first one costs, O(log n + limit), and rows inserted meanwhile never make a reader
    /// see a row twice or skip one. A cursor remembers its order and range: one passed with another
    /// order or range is `.validation` on `cursor`. `limit` is 1...1000.
    public func list(limit: Int = PageLimit.default, after cursor: String? = nil, range: TimeRange = .all,
                     ascending: Bool = false) throws -> Page<Article> {
        try PageLimit.check(limit)
        let walk = Self.walk(range: range, ascending: ascending)
        let kind = walk.cursorKind(Self.listKind)
        let position = try cursor.map { try store.cursors.decode($0, kind: kind) }
        return try store.read { db in
            store.page(try walk.rows(db, after: position, limit: limit + 1, row: Self.article(from:)), limit: limit, kind: kind) {
                .init(key: $0.createdAt.milliseconds, id: $0.id)
            }
        }
    }

    /// Articles in list order (newest first unless `ascending`) within `range`, by the index `(created_at, id)`.
    static func walk(_ select: String = "SELECT \(columns) FROM articles", range: TimeRange = .all, ascending: Bool = false) -> Keyset {
        Keyset(select: select, key: "created_at", ascending: ascending, range: range)
    }

    // MARK: - Writing

    /// Saves a new article. Title and content must be non-blank (`.validation` naming the field,
    /// nothing written).
    public func create(title: String, content: String) throws -> Article {
        try createMany([NewArticle(title: title, content: content)])[0]
    }

    /// Saves many articles in one transaction: all of them, or (on any invalid record) none.
    ///
    /// A `.validation` error names the field and the record's index (`line`, 0-based). A `uid`
    /// already in the store is a `.conflict`. O(k log n).
    public func createMany(_ records: [NewArticle]) throws -> [Article] {
        var prepared: [Article] = []
        prepared.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            do {
                try Article.validate(title: record.title, content: record.content)
                let uid = try record.uid.map { try UID.normalized($0) } ?? UID.random()
                for (field, time) in [("created_at", record.createdAt), ("updated_at", record.updatedAt)] {
                    if let time, !Timestamp.range.contains(time.milliseconds) {
                        throw NotesError.validation(field, "\(field) is out of range (years 0001 to 9999)")
                    }
                }
                prepared.append(Article(id: 0, uid: uid, title: record.title, content: record.content,
                                        createdAt: record.createdAt ?? Timestamp(milliseconds: 0),
                                        updatedAt: record.updatedAt ?? record.createdAt ?? Timestamp(milliseconds: 0), revision: 1))
            } catch let error as NotesError {
                throw error.inRecord(index, of: records.count)
            }
        }
        return try store.write(bulk: records.count >= Store.bulkRows) { tx in
            for index in prepared.indices {
                if records[index].createdAt == nil { prepared[index].createdAt = tx.now }
                if records[index].updatedAt == nil && records[index].createdAt == nil { prepared[index].updatedAt = tx.now }
            }
            let ids = try Self.insertRows(tx, prepared)
            for index in prepared.indices {
                guard let id = ids[index] else {
                    throw NotesError(.conflict, "an article with uid \(prepared[index].uid) already exists", field: "uid",
                                     line: records.count > 1 ? index : nil, code: "uid_exists")
                }
                prepared[index].id = id
            }
            return prepared
        }
    }

    /// Changes the title and/or content of article `id`, raising its revision by one.
    ///
    /// With `expectedRevision`, fails with `.conflict` (and writes nothing) when the stored revision
    /// is newer, and with `.validation` (`expected_revision`) when it names a revision the article
    /// never had. Saving the values the article already has changes nothing: same revision, no
    /// change in the feed.
    public func update(_ id: Int64, title: String? = nil, content: String? = nil, expectedRevision: Int64? = nil) throws -> Article {
        try store.write { tx in try Self.update(tx, id, title: title, content: content, expectedRevision: expectedRevision) }
    }

    static func update(_ tx: WriteContext, _ id: Int64, title: String?, content: String?, expectedRevision: Int64?) throws -> Article {
        guard var article = try fetch(tx.connection, id) else { throw NotesError.notFound("article", id) }
        if let expectedRevision, expectedRevision > article.revision || expectedRevision < 1 {
            // Not a conflict: no one ever saved that revision.
            throw NotesError(.validation, "article \(id) is at revision \(article.revision): it never had revision \(expectedRevision) (pass the revision you read it at)",
                             field: "expected_revision", code: "revision_unknown")
        }
        if let expectedRevision, expectedRevision != article.revision {
            throw NotesError(.conflict, "article \(id) is at revision \(article.revision), not \(expectedRevision): it was changed since it was read",
                             code: "revision_conflict")
        }
        let newTitle = title ?? article.title, newContent = content ?? article.content
        try Article.validate(title: newTitle, content: newContent)
        guard newTitle != article.title || newContent != article.content else { return article }
        let before = article
        article.title = newTitle
        article.content = newContent
        article.revision += 1
        article.updatedAt = tx.now
        try overwrite(tx, article, was: before)
        return article
    }

    /// Deletes article `id` and everything derived from it; `.notFound` if there is none.
    public func delete(_ id: Int64) throws {
        try store.write { tx in
            guard let article = try Self.fetch(tx.connection, id) else { throw NotesError.notFound("article", id) }
            let stmt = try tx.prepare(tx.connection.sql.articles.delete)
            stmt.bind(1, id)
            try stmt.run()
            try tx.announce(.articleDeleted(article))
        }
    }

    // MARK: - Rows written
    //
    // Every write of an article row is announced to the write's observers (`WriteObserver.swift`:
    // the change feed and the search index), from every caller: the editor, bulk create, saved
    // drafts and imports.

    /// Inserts `articles` with their uids, times and revisions as given, records their creation
    /// and hands them to the search index (see ``WriteContext/insertRows``). Returns each new id,
    /// or nil (writing nothing for it) when an article already has that uid. O(k log n).
    static func insertRows(_ tx: WriteContext, _ articles: [Article]) throws -> [Int64?] {
        try tx.insertRecords(articles, tx.connection.sql.articles.inserts, announce: RecordChange.articlesCreated) { stmt, p, a in
            stmt.bind(p, uid: a.uid).bind(p + 1, a.title).bind(p + 2, a.content).bind(p + 3, a.createdAt.milliseconds)
                .bind(p + 4, a.updatedAt.milliseconds).bind(p + 5, a.revision)
        }
    }

    /// Stores every field of `article` (found by its `id`) as given, and records the update.
    /// `before` is the stored row it replaces (for what follows articles' text). O(log n).
    static func overwrite(_ tx: WriteContext, _ article: Article, was before: Article) throws {
        let stmt = try tx.prepare(tx.connection.sql.articles.update)
        stmt.bind(1, article.title).bind(2, article.content).bind(3, article.createdAt.milliseconds)
            .bind(4, article.updatedAt.milliseconds).bind(5, article.revision).bind(6, article.id)
        try stmt.run()
        try tx.announce(.articleUpdated(from: before, to: article))
    }

    // MARK: - Rows

    /// The article with `uid` (lower-case), or nil. O(log n).
    static func fetch(_ db: Connection, uid: String) throws -> Article? {
        try db.prepare(db.sql.articles.byUID).bind(1, uid: uid).first(article(from:))
    }

    static func fetch(_ db: Connection, _ id: Int64) throws -> Article? {
        try db.prepare(db.sql.articles.byID).bind(1, id).first(article(from:))
    }

    static func article(from stmt: Statement) -> Article {
        Article(id: stmt.int64(0), uid: stmt.uid(1), title: stmt.text(2), content: stmt.text(3),
                createdAt: Timestamp(milliseconds: stmt.int64(4)), updatedAt: Timestamp(milliseconds: stmt.int64(5)),
                revision: stmt.int64(6))
    }
}

extension Store {
    /// The store's articles and drafts.
    public var articles: ArticleStore { ArticleStore(store: self) }
}
