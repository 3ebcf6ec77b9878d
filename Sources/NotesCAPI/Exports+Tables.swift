import CArrow
import NotesKit

// Importing a table given as an Arrow stream (a Parquet file read by pyarrow). See include/noteskit.h.

private let tableFields: [ExchangeTable: [ArrowField]] = [
    .articles: [
        ArrowField(name: "title", kind: .text, required: true), ArrowField(name: "content", kind: .text, required: true),
        ArrowField(name: "uid", kind: .text, required: false), ArrowField(name: "created_at", kind: .time, required: false),
        ArrowField(name: "updated_at", kind: .time, required: false), ArrowField(name: "revision", kind: .integer, required: false),
    ],
    .conversations: [
        ArrowField(name: "title", kind: .text, required: true), ArrowField(name: "uid", kind: .text, required: false),
        ArrowField(name: "created_at", kind: .time, required: false), ArrowField(name: "last_activity_at", kind: .time, required: false),
    ],
    .messages: [
        ArrowField(name: "content", kind: .text, required: true), ArrowField(name: "from_me", kind: .flag, required: true),
        ArrowField(name: "uid", kind: .text, required: false), ArrowField(name: "sent_at", kind: .time, required: false),
        ArrowField(name: "sender", kind: .text, required: false), ArrowField(name: "conversation_uid", kind: .text, required: false),
        ArrowField(name: "conversation_title", kind: .text, required: false),
    ],
]

@_cdecl("nk_store_import_table")
public func nk_store_import_table(_ handle: OpaquePointer?, _ table: UnsafePointer<CChar>?, _ records: UnsafeMutablePointer<ArrowArrayStream>?,
                                  _ source: UnsafePointer<CChar>?, _ optionsJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    call {
        var settings = ImportOptions()
        let (out, target, kind, name) = try ArrowImport.releasing(records) {  // the stream is ours from here: released on any failure
            let out = try outPointer(out, "out_json")
            let target = try store(handle)
            let text = try string(table, "table")
            guard let kind = ExchangeTable(rawValue: text) else {
                throw NotesError(.validation, "table must be \"articles\", \"conversations\" or \"messages\", got \"\(text.prefix(40))\"", field: "table")
            }
            let given = try options(optionsJSON, allowed: ["on_conflict", "on_error"])
            settings.onConflict = try given.optionalChoice("on_conflict") ?? .skip
            settings.onError = try given.optionalChoice("on_error") ?? .raise
            return (out, target, kind, try optionalString(source, "source") ?? "table")
        }
        let reader = try ArrowImport.Reader(records, name: "records", fields: tableFields[kind] ?? [])
        defer { reader.close() }
        let report = try target.importTable(source: name, options: settings) {  // on the import's reading thread
            try reader.next { (b: Batch, row: Int) throws -> TableRow in
                switch kind {
                case .articles:
                    return .article(uid: try b.optionalText(2, row), title: try b.text(0, row), content: try b.text(1, row),
                                    createdAt: try b.optionalTime(3, row), updatedAt: try b.optionalTime(4, row),
                                    revision: try b.optionalInteger(5, row))
                case .conversations:
                    return .conversation(uid: try b.optionalText(1, row), title: try b.text(0, row),
                                         createdAt: try b.optionalTime(2, row), lastActivityAt: try b.optionalTime(3, row))
                case .messages:
                    return .message(uid: try b.optionalText(2, row), conversationUid: try b.optionalText(5, row),
                                    conversationTitle: try b.optionalText(6, row), content: try b.text(0, row),
                                    fromMe: try b.flag(1, row), sentAt: try b.optionalTime(3, row), sender: try b.optionalText(4, row))
                }
            }
        }
        var w = JSONWriter()
        w.importReport(report)
        out.pointee = try ownedCString(w.bytes)
    }
}
