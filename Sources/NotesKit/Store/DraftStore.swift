/// Drafts: editing sessions, kept in their own table until discarded.
///
/// A draft is written through on every change, so an editor that dies loses nothing; saving is
/// explicit and validates; discarding writes nothing to the article. As the notes app's editor
/// stays on an article after its first save, a saved draft stays open, bound to the article it
/// saved: later saves update that article (`.conflict` if it changed meanwhile). `discard` — the
/// editor's back button — ends the session.
extension ArticleStore {
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
            let draft = try Self.insertDraft(tx, articleId: id, baseRevision: article.revision, title: article.title, content: article.content)
            try Self.markSaved(tx, draft.id) // opened, nothing typed yet
            return draft
        }
    }

    /// The draft with `id`, or `.notFound` (it may have been saved or discarded).
    public func draft(_ id: Int64) throws -> Draft {
        try store.read { db in
            guard let draft = try Self.fetchDraft(db, id) else { throw Self.draftGone(id) }
            return draft
        }
    }

    /// Every draft with unsaved changes, oldest first: a new article's draft, and a draft edited
    /// since it was opened on an article or last saved (whatever happened to the article since).
    /// A draft saved, or opened and not edited, is not listed, though it stays open until
    /// discarded. O(n).
    public func drafts() throws -> [Draft] {
        try store.read { db in
            let stmt = try db.prepare(db.sql.drafts.unsaved)
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
            let stmt = try tx.prepare(tx.connection.sql.drafts.edit)
            stmt.bind(1, draft.title).bind(2, draft.content).bind(3, tx.now.milliseconds).bind(4, id)
            try stmt.run()
            return draft
        }
    }

    /// Saves draft `id` as a new article, or as the next revision of the article it edits, in one
    /// transaction. The draft stays open, now bound to the saved article at its new revision, so
    /// further edits and saves update that article (as the app's editor did after a first save).
    ///
    /// Fails, keeping the draft as it was, with `.validation` (empty title or content) or
    /// `.conflict` (the article changed or was deleted since the draft was opened or last saved).
    public func saveDraft(_ id: Int64) throws -> Article {
        try store.write { tx in
            guard let draft = try Self.fetchDraft(tx.connection, id) else { throw Self.draftGone(id) }
            try Article.validate(title: draft.title, content: draft.content)
            let article: Article
            if let articleId = draft.articleId {
                guard try Self.fetch(tx.connection, articleId) != nil else {
                    throw NotesError(.conflict, "article \(articleId) was deleted after draft \(id) was opened; the draft is kept",
                                     code: "article_deleted")
                }
                do {
                    article = try Self.update(tx, articleId, title: draft.title, content: draft.content, expectedRevision: draft.baseRevision)
                } catch var error as NotesError where error.kind == .conflict {
                    error.message += "; draft \(id) is kept"
                    throw error
                }
            } else {
                var saved = Article(id: 0, uid: draft.uid, title: draft.title, content: draft.content,
                                    createdAt: tx.now, updatedAt: tx.now, revision: 1)
                guard let id = try Self.insertRows(tx, [saved])[0] else {
                    throw NotesError(.conflict, "an article with uid \(draft.uid) already exists (draft \(id) was imported twice?); the draft is kept",
                                     field: "uid", code: "uid_exists")
                }
                saved.id = id
                article = saved
            }
            var bound = draft
            bound.articleId = article.id
            bound.baseRevision = article.revision
            try Self.overwriteDraft(tx, bound)
            try Self.markSaved(tx, id)
            return article
        }
    }

    /// Ends the editing session of draft `id`, throwing away what was not saved; the article it
    /// edits or saved (if any) is untouched.
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
        NotesError(.notFound, "draft \(id) does not exist (it was discarded)", code: "draft_not_found")
    }

    static func insertDraft(_ tx: WriteContext, articleId: Int64?, baseRevision: Int64?, title: String, content: String) throws -> Draft {
        // A new article's draft carries the uid the article will get.
        var draft = Draft(id: 0, uid: UID.random(), articleId: articleId, baseRevision: baseRevision,
                          title: title, content: content, createdAt: tx.now, updatedAt: tx.now)
        guard let id = try insertDraft(tx, draft) else { throw NotesError(.internalError, "a fresh draft uid was already taken") }
        draft.id = id
        return draft
    }

    /// Inserts `draft` with its uid and times as given; nil (writing nothing) when a draft already
    /// has that uid. O(log n).
    static func insertDraft(_ tx: WriteContext, _ draft: Draft) throws -> Int64? {
        let stmt = try tx.prepare(tx.connection.sql.drafts.insertIfNew)
        stmt.bind(1, uid: draft.uid).bind(2, draft.articleId).bind(3, draft.baseRevision).bind(4, draft.title).bind(5, draft.content)
            .bind(6, draft.createdAt.milliseconds).bind(7, draft.updatedAt.milliseconds)
        return try tx.connection.insertedIDIfAny(stmt)
    }

    /// Stores every field of `draft` (found by its `id`) as given, as holding unsaved text. O(log n).
    static func overwriteDraft(_ tx: WriteContext, _ draft: Draft) throws {
        let stmt = try tx.prepare(tx.connection.sql.drafts.update)
        stmt.bind(1, draft.articleId).bind(2, draft.baseRevision).bind(3, draft.title).bind(4, draft.content)
            .bind(5, draft.createdAt.milliseconds).bind(6, draft.updatedAt.milliseconds).bind(7, draft.id)
        try stmt.run()
    }

    /// The draft with `uid` (lower-case), or nil. O(log n).
    static func fetchDraft(_ db: Connection, uid: String) throws -> Draft? {
        try db.prepare(db.sql.drafts.byUID).bind(1, uid: uid).first(draft(from:))
    }

    /// Marks draft `id` as holding nothing unsaved (saved, or just opened on an article). O(log n).
    static func markSaved(_ tx: WriteContext, _ id: Int64) throws {
        let stmt = try tx.prepare(tx.connection.sql.drafts.markSaved)
        stmt.bind(1, id)
        try stmt.run()
    }

    static func deleteDraft(_ tx: WriteContext, _ id: Int64) throws {
        let stmt = try tx.prepare(tx.connection.sql.drafts.delete)
        stmt.bind(1, id)
        try stmt.run()
    }

    static func fetchDraft(_ db: Connection, _ id: Int64) throws -> Draft? {
        try db.prepare(db.sql.drafts.byID).bind(1, id).first(draft(from:))
    }

    static func draft(from stmt: Statement) -> Draft {
        Draft(id: stmt.int64(0), uid: stmt.uid(1), articleId: stmt.optionalInt64(2), baseRevision: stmt.optionalInt64(3),
              title: stmt.text(4), content: stmt.text(5),
              createdAt: Timestamp(milliseconds: stmt.int64(6)), updatedAt: Timestamp(milliseconds: stmt.int64(7)))
    }
}
