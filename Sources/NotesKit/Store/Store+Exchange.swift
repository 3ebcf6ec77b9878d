/// The store's side of import and export: every row in a stable order for an export, and writes
/// that keep the uid, times and revision an import file gives. The formats (NotesKit/Exchange)
/// speak to the store only through these two types; no SQL lives there.

/// What an import does with a record whose uid the store already has.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// Keep the stored record.
    case skip
    /// Overwrite the stored record with the file's.
    case replace
    /// Overwrite the stored record only when the file's `updated_at` is later (records without an
    /// update time, conversations and messages, are kept as stored).
    case newer
}

/// What happened to one imported record.
public enum ImportOutcome: Sendable, Equatable {
    case created, updated, skipped
}

/// Reads every row for an export, inside one read transaction: the export is a consistent
/// snapshot even while other connections write. Rows come oldest first (by id), one at a time.
final class ExportReader {
    let db: Connection

    init(_ db: Connection) { self.db = db }

    /// How many rows `table` holds ("articles", "drafts", ...). O(n).
    func count(_ table: String) throws -> Int {
        Int(try Store.scalar(db, "SELECT count(*) FROM \(table)"))
    }

    /// Every article, by id. O(n), one row in memory at a time.
    func forEachArticle(_ body: (Article) throws -> Void) throws {
        let stmt = try db.prepare("SELECT \(ArticleStore.columns) FROM articles ORDER BY id")
        defer { stmt.reset() }
        while try stmt.step() { try body(ArticleStore.article(from: stmt)) }
    }

    /// Every draft, by id, with the uid of the article it edits (nil for a new article's draft, or
    /// when that article was deleted since). O(n).
    func forEachDraft(_ body: (Draft, String?) throws -> Void) throws {
        let stmt = try db.prepare("""
            SELECT d.id, d.uid, d.article_id, d.base_revision, d.title, d.content, d.created_at, d.updated_at, a.uid
            FROM drafts d LEFT JOIN articles a ON a.id = d.article_id ORDER BY d.id
            """)
        defer { stmt.reset() }
        while try stmt.step() { try body(ArticleStore.draft(from: stmt), stmt.optionalText(8)) }
    }
}

/// Writes imported records inside the import's one transaction, through the same row helpers as
/// every other write (so the change feed sees each one).
final class ImportWriter {
    let tx: WriteContext

    init(_ tx: WriteContext) { self.tx = tx }

    /// The time of the import, for records without one.
    var now: Timestamp { tx.now }

    /// Creates `article` (uid, times and revision as given) or applies `policy` to the stored one.
    /// Storing what is already there changes nothing and counts as skipped. O(log n).
    func put(article: Article, policy: ConflictPolicy) throws -> ImportOutcome {
        if try ArticleStore.insert(tx, article) != nil { return .created }
        guard let stored = try ArticleStore.fetch(tx.connection, uid: article.uid) else {
            throw NotesError(.internalError, "article \(article.uid) is neither new nor stored")
        }
        var incoming = article
        incoming.id = stored.id
        guard incoming != stored, Self.replaces(policy, incoming.updatedAt, stored.updatedAt) else { return .skipped }
        try ArticleStore.overwrite(tx, incoming)
        return .updated
    }

    /// Creates `draft` or applies `policy` to the stored one. `articleUid` names the article the
    /// draft edits: it must be in the store (imported earlier in the same file counts); nil for a
    /// new article's draft. O(log n).
    func put(draft: Draft, articleUid: String?, policy: ConflictPolicy) throws -> ImportOutcome {
        var incoming = draft
        if let articleUid {
            guard let article = try ArticleStore.fetch(tx.connection, uid: articleUid) else {
                throw NotesError(.validation, "article_uid \(articleUid) is neither in the store nor earlier in the file", field: "article_uid")
            }
            incoming.articleId = article.id
        } else {
            incoming.articleId = nil
        }
        if try ArticleStore.insertDraft(tx, incoming) != nil { return .created }
        guard let stored = try ArticleStore.fetchDraft(tx.connection, uid: draft.uid) else {
            throw NotesError(.internalError, "draft \(draft.uid) is neither new nor stored")
        }
        incoming.id = stored.id
        guard incoming != stored, Self.replaces(policy, incoming.updatedAt, stored.updatedAt) else { return .skipped }
        try ArticleStore.overwriteDraft(tx, incoming)
        return .updated
    }

    static func replaces(_ policy: ConflictPolicy, _ incoming: Timestamp?, _ stored: Timestamp?) -> Bool {
        switch policy {
        case .skip: return false
        case .replace: return true
        case .newer:
            guard let incoming, let stored else { return false }
            return incoming > stored
        }
    }
}

extension Store {
    /// Runs `body` with a reader over one consistent snapshot of the store (one read transaction,
    /// under the store's lock for its whole length).
    func exportSnapshot<T>(_ body: (ExportReader) throws -> T) throws -> T {
        try read { db in
            try db.execute("BEGIN")
            do {
                let result = try body(ExportReader(db))
                db.finishStatements()
                try db.execute("COMMIT")
                return result
            } catch {
                db.finishStatements()
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` in one write transaction with an ``ImportWriter``: everything it writes commits
    /// together, or (on any error thrown, a cancel included) nothing does.
    ///
    /// The page cache grows to ``importCacheKiB`` for the import (and shrinks back after it): a
    /// transaction larger than the cache spills pages to the WAL and reads them back, and the
    /// uid index, written in random order, would be spilled and re-read over and over.
    func importing<T>(_ body: (ImportWriter) throws -> T) throws -> T {
        try write { tx in
            let previous = try Store.scalar(tx.connection, "PRAGMA cache_size")
            try tx.connection.execute("PRAGMA cache_size = -\(Store.importCacheKiB)")
            defer { _ = try? tx.connection.execute("PRAGMA cache_size = \(previous)") }
            return try body(ImportWriter(tx))
        }
    }

    /// The page cache of an import, in KiB: bounded, so a 1 000 000-record import stays well
    /// under 200 MB.
    static let importCacheKiB = 65_536
}
