/// Chat transcripts (until the store has chat: refused).
enum Transcript {
    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        throw NotesError(.validation, "transcripts need a store with chat, which this NotesKit does not have yet", field: "format")
    }

    static func read(_ path: String, into importer: Importer) throws {
        throw NotesError(.validation, "transcripts need a store with chat, which this NotesKit does not have yet", field: "format")
    }
}
