/// Importing a table of records given column by column (a Parquet file read by pyarrow, any Arrow
/// stream): the same import as a file's — one transaction, records matched by uid, the conflict
/// and error policies, the report — with rows instead of lines.
public enum ExchangeTable: String, Sendable, CaseIterable {
    case articles, conversations, messages
}

/// One row of a table, read and checked: its record, or the error the import's error policy
/// takes (a row's 1-based number is its `line`). Made on the reading thread (see
/// ``Store/importTable(source:options:next:)``); `@unchecked Sendable`: a row is handed from that
/// thread to the writer once, and never touched by both.
public struct TableRow: @unchecked Sendable {
    let record: Result<ExchangeRecord, any Error>

    /// An article row (as `store.articles.select()` gives it; `revision` nil for 1).
    public static func article(uid: String?, title: String, content: String, createdAt: Timestamp?, updatedAt: Timestamp?,
                               revision: Int64?) -> TableRow {
        TableRow(record: Result {
            .article(try Fields.article(ArticleRecord(uid: uid, title: title, content: content, createdAt: createdAt,
                                                      updatedAt: updatedAt, revision: revision)))
        })
    }

    /// A conversation row.
    public static func conversation(uid: String?, title: String, createdAt: Timestamp?, lastActivityAt: Timestamp?) -> TableRow {
        TableRow(record: Result {
            .conversation(try Fields.conversation(ConversationRecord(uid: uid, title: title, createdAt: createdAt,
                                                                     lastActivityAt: lastActivityAt)))
        })
    }

    /// A message row: its conversation by uid (stored, or created with `conversationTitle`), or by
    /// title alone, as in a CSV file of messages.
    public static func message(uid: String?, conversationUid: String?, conversationTitle: String?, content: String, fromMe: Bool,
                               sentAt: Timestamp?, sender: String?) -> TableRow {
        TableRow(record: Result {
            .message(try Fields.message(MessageRecord(uid: uid, conversationUid: conversationUid, conversationTitle: conversationTitle,
                                                      content: content, fromMe: fromMe, sentAt: sentAt, sender: sender)))
        })
    }
}

extension Store {
    /// Imports the rows `next` hands over, a batch at a time in the table's order, until it returns
    /// nil; named `source` in errors and skips (a row's `line` is its 1-based number). One
    /// transaction: an error thrown by `next` (a column of the wrong type, a failing reader) or a
    /// malformed row (with `onError = .raise`) writes nothing. Options other than `onConflict` and
    /// `onError` do not apply. O(n log N) for n rows into a store of N.
    ///
    /// `next` runs on a second thread, one batch ahead (see ``TableReadAhead``): reading and
    /// checking the rows of a batch costs the writer's thread nothing while it writes the batch
    /// before. It is never called again after it returned nil or threw, nor once this returns.
    public func importTable(source: String, options: ImportOptions = ImportOptions(),
                            next: @escaping @Sendable () throws -> [TableRow]?) throws -> ImportReport {
        try options.check(for: .json)  // the options a JSON file takes: none of the format-specific ones
        return try importing { writer in
            let importer = try Importer(writer: writer, options: options)
            let ahead = TableReadAhead(for: self, next)
            defer { ahead.stop() }
            var line = 0
            var rows = try ahead.next(dropping: [])
            while let batch = rows {
                for row in batch {
                    line += 1
                    try importer.add(try row.record.get(), at: SourceLocation(file: source, line: line))
                }
                rows = try ahead.next(dropping: batch)
            }
            try importer.finish()
            return importer.report
        }
    }
}

/// Reads a table's batches one ahead of the writer: each on a thread of its own (joined before the
/// next starts, so one thread at a time calls the reader, in order), as ``JSONLines/ReadAhead``
/// reads a JSON Lines file. At most two batches are in memory: the one written, the one read.
///
/// The reading thread works for the import's call (``Store/helping(_:)``): a progress callback it
/// runs that calls the store gets an error, as it would on the writer's thread, not a deadlock.
///
final class TableReadAhead {
    private let store: Store
    private let read: @Sendable () throws -> [TableRow]?
    private let made = WorkAhead<Result<[TableRow]?, any Error>>()

    init(for store: Store, _ read: @escaping @Sendable () throws -> [TableRow]?) {
        self.store = store
        self.read = read
        start()
    }

    /// The next batch (waiting for its thread), the one after it started meanwhile; nil at the end.
    /// `done`, the batch written, is freed on that thread: freeing its rows' texts (and the array)
    /// was 3% of the writer's instructions.
    func next(dropping done: [TableRow]) throws -> [TableRow]? {
        let batch = made.take() ?? .success(nil)
        if case .success(.some) = batch { start(dropping: done) }
        return try batch.get()
    }

    /// Waits for the batch being read, if any (an import that stops early calls it).
    func stop() { _ = made.take() }

    /// Starts reading the next batch (on a thread of its own, working for the import's call), and
    /// frees `done` there once read.
    private func start(dropping done: [TableRow] = []) {
        made.start { [store, read] in
            defer { withExtendedLifetime(done) {} }
            return store.helping { Result { try read() } }
        }
    }
}
