import NotesKit

// Import and export. Options travel as a JSON object; reports come back as JSON.

/// `int32_t (*nk_progress_callback)(void *user_data, int64_t done, int64_t total)`: 0 cancels.
public typealias ProgressCallback = @convention(c) (UnsafeMutableRawPointer?, Int64, Int64) -> Int32

@_cdecl("nk_store_export")
public func nk_store_export(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?,
                            _ optionsJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let store = try store(handle)
        let path = try string(path, "path")
        let format = try exchangeFormat(format)
        let given = try options(optionsJSON, allowed: ["conversation", "table"])
        let options = ExportOptions(conversation: try given.optionalInt("conversation"), table: try given.optionalString("table"))
        let report = try store.export(to: path, format: format, options: options)
        w.raw("{"); w.key("articles"); w.int(Int64(report.articles))
        w.raw(","); w.key("drafts"); w.int(Int64(report.drafts))
        w.raw(","); w.key("conversations"); w.int(Int64(report.conversations))
        w.raw(","); w.key("messages"); w.int(Int64(report.messages))
        w.raw(","); w.key("files"); w.int(Int64(report.files))
        w.raw("}")
    }
}

@_cdecl("nk_store_import")
public func nk_store_import(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?,
                            _ optionsJSON: UnsafePointer<CChar>?, _ progress: ProgressCallback?, _ userData: UnsafeMutableRawPointer?,
                            _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let store = try store(handle)
        let path = try string(path, "path")
        let format = try exchangeFormat(format)
        let given = try options(optionsJSON, allowed: ["on_conflict", "on_error", "conversation", "title"])
        var options = ImportOptions(conversation: try given.optionalInt("conversation"), title: try given.optionalString("title"))
        if let text = try given.optionalString("on_conflict") {
            guard let policy = ConflictPolicy(rawValue: text) else {
                throw NotesError(.validation, "on_conflict must be \"skip\", \"replace\" or \"newer\", got \"\(text.prefix(40))\"", field: "on_conflict")
            }
            options.onConflict = policy
        }
        if let text = try given.optionalString("on_error") {
            guard let policy = ImportErrorPolicy(rawValue: text) else {
                throw NotesError(.validation, "on_error must be \"raise\" or \"skip\", got \"\(text.prefix(40))\"", field: "on_error")
            }
            options.onError = policy
        }
        if let progress {
            options.progress = { done, total in progress(userData, done, total) != 0 }
        }
        let report = try store.import(from: path, format: format, options: options)
        w.raw("{"); w.key("created"); w.int(Int64(report.created))
        w.raw(","); w.key("updated"); w.int(Int64(report.updated))
        w.raw(","); w.key("skipped"); w.int(Int64(report.skipped))
        w.raw(","); w.key("errors"); w.list(report.errors) { w, e in w.error(e) }
        w.raw("}")
    }
}

private func exchangeFormat(_ pointer: UnsafePointer<CChar>?) throws -> ExchangeFormat? {
    guard let text = try optionalString(pointer, "format") else { return nil }
    guard let format = ExchangeFormat(rawValue: text) else {
        let names = ExchangeFormat.allCases.map(\.rawValue).joined(separator: ", ")
        throw NotesError(.validation, "format must be one of \(names), got \"\(text.prefix(40))\"", field: "format")
    }
    return format
}

/// The options object (NULL: none), refusing an option the call does not know.
private func options(_ pointer: UnsafePointer<CChar>?, allowed: [String]) throws -> JSONObject {
    guard let text = try optionalString(pointer, "options_json") else { return JSONObject(kind: .validation) }
    let options = try JSONObject.parse(argument: text, "options_json")
    try options.only(allowed, what: "option")
    return options
}

extension JSONWriter {
    /// An error as the last-error JSON has it: {"code","kind","error_code","message","messages"?,
    /// "field"?,"line"?,"file"?}.
    /// Text longer than ``LastError/maxMessageBytes`` is cut, so no error echoes a huge argument.
    mutating func error(_ error: NotesError) {
        let limit = LastError.maxMessageBytes
        raw("{"); key("code"); int(Int64(error.kind.rawValue))
        raw(","); key("kind"); string(error.kind.name)
        raw(","); key("error_code"); string(error.code)
        raw(","); key("message"); string(NotesError.shown(error.message, limit: limit))
        let wordings = error.messages
        if !wordings.isEmpty {
            raw(","); key("messages"); raw("{")
            for (n, language) in wordings.keys.sorted().enumerated() {
                if n > 0 { raw(",") }
                string(language); raw(":"); string(wordings[language] ?? "")
            }
            raw("}")
        }
        if let field = error.field { raw(","); key("field"); string(NotesError.shown(field)) }
        if let line = error.line { raw(","); key("line"); int(Int64(line)) }
        if let file = error.file { raw(","); key("file"); string(NotesError.shown(file, limit: limit)) }
        raw("}")
    }
}
