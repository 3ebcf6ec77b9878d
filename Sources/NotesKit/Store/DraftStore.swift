/// Drafts: unsaved edits, kept in their own table until saved or discarded.
///
/// A draft is written through on every change, so an editor that dies loses nothing; saving is
/// explicit and validates; discarding writes nothing to the article.
extension ArticleStore {
    static let draftColumns = "id, uid, article_id, base_revision, title, content, created_at, updated_at"

    /// Opens a draft for a new article. Its title defaults to today's date (`YYYY-MM-DD`) in the
    /// host's local time zone, as the notes app did; its content defaults to empty.
    public func newDraft(title: String? = nil, content: String = "") throws -> Draft {
        try Self.checkDraftText(title: title, content: content)
        return try store.write { tx in
            try Self.insertDraft(tx, articleId: nil, baseRevision: nil, title: title ?? tx.now.localDateString, content: content)
        }
    }

    /// Opens a draft editing article `id` at its current revision; `.notFound` if there is none.
    public func edit(_ id: Int64) throws -> Draft {
        try store.write { tx in
            guard let article = try Self.fetch(tx.connection, id) else { throw NotesError.notFound("article", id) }
            return try Self.insertDraft(tx, articleId: id, baseRevision: article.revision, title: article.title, content: article.content)
        }
    }

    /// The draft with `id`, or `.notFound` (it may have been saved or discarded).
    public func draft(_ id: Int64) throws -> Draft {
        try store.read { db in
            guard let draft = try Self.fetchDraft(db, id) else { throw Self.draftGone(id) }
            return draft
        }
    }

    /// Every unsaved draft, oldest first.
    public func drafts() throws -> [Draft] {
        try store.read { db in
            let stmt = try db.prepare("SELECT \(Self.draftColumns) FROM drafts ORDER BY id")
            var out: [Draft] = []
            while try stmt.step() { out.append(Self.draft(from: stmt)) }
            return out
        }
    }

    /// Changes the title and/or content of draft `id` (nil leaves a field as it is). A draft may
    /// hold empty text; only saving validates. Over-long text is refused even here.
    public func updateDraft(_ id: Int64, title: String? = nil, content: String? = nil) throws -> Draft {
        try Self.checkDraftText(title: title, content: content)
        return try store.write { tx in
            guard var draft = try Self.fetchDraft(tx.connection, id) else { throw Self.draftGone(id) }
            draft.title = title ?? draft.title
            draft.content = content ?? draft.content
            draft.updatedAt = tx.now
            let stmt = try tx.prepare("UPDATE drafts SET title = ?, content = ?, updated_at = ? WHERE id = ?")
            stmt.bind(1, draft.title).bind(2, draft.content).bind(3, tx.now.milliseconds).bind(4, id)
            try stmt.run()
            return draft
        }
    }

    /// Saves draft `id` as a new article, or as the next revision of the article it edits, and
    /// removes the draft, in one transaction.
    ///
    /// Fails, keeping the draft, with `.validation` (empty title or content) or `.conflict` (the
    /// article changed or was deleted since the draft was opened).
    public func saveDraft(_ id: Int64) throws -> Article {
        try store.write { tx in
            guard let draft = try Self.fetchDraft(tx.connection, id) else { throw Self.draftGone(id) }
            try Article.validate(title: draft.title, content: draft.content)
            let article: Article
            if let articleId = draft.articleId {
                guard try Self.fetch(tx.connection, articleId) != nil else {
                    throw NotesError(.conflict, "article \(articleId) was deleted after draft \(id) was opened; the draft is kept")
                }
                do {
                    article = try Self.update(tx, articleId, title: draft.title, content: draft.content, expectedRevision: draft.baseRevision)
                } catch var error as NotesError where error.kind == .conflict {
                    error.message += "; draft \(id) is kept"
                    throw error
                }
            } else {
                let insert = try tx.prepare("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, 1)")
                insert.bind(1, draft.uid).bind(2, draft.title).bind(3, draft.content).bind(4, tx.now.milliseconds).bind(5, tx.now.milliseconds)
                try insert.run()
                article = Article(id: tx.connection.lastInsertRowID, uid: draft.uid, title: draft.title, content: draft.content,
                                  createdAt: tx.now, updatedAt: tx.now, revision: 1)
                try Self.indexNew(tx, [article])
                try tx.record("article", .create, id: article.id, uid: article.uid, revision: 1)
            }
            try Self.deleteDraft(tx, id)
            return article
        }
    }

    /// Throws draft `id` away; the article it edits (if any) is untouched.
    public func discardDraft(_ id: Int64) throws {
        try store.write { tx in
            guard try Self.fetchDraft(tx.connection, id) != nil else { throw Self.draftGone(id) }
            try Self.deleteDraft(tx, id)
        }
    }

    // MARK: - Rows

    static func checkDraftText(title: String?, content: String?) throws {
        if let title { try TextRules.checkText(title, field: "title", limit: TextRules.maxTitleLength) }
        if let content { try TextRules.checkText(content, field: "content", limit: TextRules.maxContentLength) }
    }

    static func draftGone(_ id: Int64) -> NotesError {
        NotesError(.notFound, "draft \(id) does not exist (it was saved or discarded)")
    }

    static func insertDraft(_ tx: WriteContext, articleId: Int64?, baseRevision: Int64?, title: String, content: String) throws -> Draft {
        // A new article's draft carries the uid the article will get.
        let uid = UID.random()
        let stmt = try tx.prepare("INSERT INTO drafts(uid, article_id, base_revision, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
        stmt.bind(1, uid).bind(2, articleId).bind(3, baseRevision).bind(4, title).bind(5, content)
            .bind(6, tx.now.milliseconds).bind(7, tx.now.milliseconds)
        try stmt.run()
        return Draft(id: tx.connection.lastInsertRowID, uid: uid, articleId: articleId, baseRevision: baseRevision,
                     title: title, content: content, createdAt: tx.now, updatedAt: tx.now)
    }

    static func deleteDraft(_ tx: WriteContext, _ id: Int64) throws {
        let stmt = try tx.prepare("DELETE FROM drafts WHERE id = ?")
        stmt.bind(1, id)
        try stmt.run()
    }

    static func fetchDraft(_ db: Connection, _ id: Int64) throws -> Draft? {
        let stmt = try db.prepare("SELECT \(draftColumns) FROM drafts WHERE id = ?")
        stmt.bind(1, id)
        return try stmt.step() ? draft(from: stmt) : nil
    }

    static func draft(from stmt: Statement) -> Draft {
        Draft(id: stmt.int64(0), uid: stmt.text(1), articleId: stmt.optionalInt64(2), baseRevision: stmt.optionalInt64(3),
              title: stmt.text(4), content: stmt.text(5),
              createdAt: Timestamp(milliseconds: stmt.int64(6)), updatedAt: Timestamp(milliseconds: stmt.int64(7)))
    }
}
