/// Importing a table of records given column by column (a Parquet file read by pyarrow, any Arrow
/// stream): the same import as a file's — one transaction, records matched by uid, the conflict
/// and error policies, the report — with rows instead of lines.
public enum ExchangeTable: String, Sendable, CaseIterable {
    case articles, conversations, messages
}

/// Hands the rows of a table to the import, one call per row, in the table's order.
public final class TableImport {
    private let importer: Importer
    private let source: String
    private var row = 0

    fileprivate init(_ importer: Importer, source: String) {
        self.importer = importer
        self.source = source
    }

    private var location: SourceLocation {
        row += 1
        return SourceLocation(file: source, line: row)
    }

    /// An article row (as `store.articles.select()` gives it; `revision` nil for 1).
    public func article(uid: String?, title: String, content: String, createdAt: Timestamp?, updatedAt: Timestamp?,
                        revision: Int64?) throws {
        try importer.add(.article(try Fields.article(ArticleRecord(uid: uid, title: title, content: content, createdAt: createdAt,
                                                                   updatedAt: updatedAt, revision: revision))), at: location)
    }

    /// A conversation row.
    public func conversation(uid: String?, title: String, createdAt: Timestamp?, lastActivityAt: Timestamp?) throws {
        try importer.add(.conversation(try Fields.conversation(ConversationRecord(uid: uid, title: title, createdAt: createdAt,
                                                                                  lastActivityAt: lastActivityAt))), at: location)
    }

    /// A message row: its conversation by uid (stored, or created with `conversationTitle`), or by
    /// title alone, as in a CSV file of messages.
    public func message(uid: String?, conversationUid: String?, conversationTitle: String?, content: String, fromMe: Bool,
                        sentAt: Timestamp?, sender: String?) throws {
        try importer.add(.message(try Fields.message(MessageRecord(uid: uid, conversationUid: conversationUid,
                                                                   conversationTitle: conversationTitle, content: content,
                                                                   fromMe: fromMe, sentAt: sentAt, sender: sender))), at: location)
    }
}

extension Store {
    /// Imports the rows `feed` hands over (see ``TableImport``), named `source` in errors and
    /// skips (a row's `line` is its 1-based number). One transaction: an error thrown by `feed`
    /// (a column of the wrong type, a failing reader) or a malformed row (with `onError = .raise`)
    /// writes nothing. Options other than `onConflict` and `onError` do not apply.
    /// O(n log N) for n rows into a store of N.
    public func importTable(source: String, options: ImportOptions = ImportOptions(),
                            _ feed: (TableImport) throws -> Void) throws -> ImportReport {
        try options.check(for: .json)  // the options a JSON file takes: none of the format-specific ones
        return try importing { writer in
            let importer = try Importer(writer: writer, options: options)
            try feed(TableImport(importer, source: source))
            try importer.finish()
            return importer.report
        }
    }
}
