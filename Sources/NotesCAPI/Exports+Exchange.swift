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
        let given = try options(optionsJSON, allowed: ["conversation", "table", "mode", "since", "until", "excel"])
        let mode = try given.optionalInt("mode")
        if let mode, !(1...0o7777).contains(mode) {
            throw NotesError(.validation, "mode must be a file mode such as 0o640, got \(mode)", field: "mode")
        }
        let options = ExportOptions(conversation: try given.optionalInt("conversation"), table: try given.optionalString("table"),
                                    mode: mode.map { UInt32($0) },
                                    range: try range(try given.optionalInt("since") ?? NK_NO_TIME, try given.optionalInt("until") ?? NK_NO_TIME),
                                    excel: try given.optionalBool("excel") ?? false)
        let report = try store.export(to: path, format: format, options: options)
        w.object(["articles": .int(report.articles), "drafts": .int(report.drafts), "conversations": .int(report.conversations),
                  "messages": .int(report.messages), "files": .int(report.files)])
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
        let given = try options(optionsJSON, allowed: ["on_conflict", "on_error", "conversation", "title", "me", "tz", "encoding",
                                                       "delimiter", "columns", "unknown_columns", "date_order"])
        var options = ImportOptions(conversation: try given.optionalInt("conversation"), title: try given.optionalString("title"))
        options.me = try given.optionalString("me")
        options.timeZone = try given.optionalString("tz")
        options.encoding = try given.optionalString("encoding")
        options.delimiter = try given.optionalString("delimiter")
        options.columns = try given.optionalStringPairs("columns")
        options.unknownColumns = try given.optionalChoice("unknown_columns") ?? .refuse
        options.dateOrder = try given.optionalChoice("date_order")
        options.onConflict = try given.optionalChoice("on_conflict") ?? .skip
        options.onError = try given.optionalChoice("on_error") ?? .raise
        if let progress {
            options.progress = { done, total in progress(userData, done, total) != 0 }
        }
        w.importReport(try store.import(from: path, format: format, options: options))
    }
}

extension JSONWriter {
    /// An import's report as `nk_store_import` hands it out.
    mutating func importReport(_ report: ImportReport) {
        raw("{"); key("created"); int(Int64(report.created))
        raw(","); key("updated"); int(Int64(report.updated))
        raw(","); key("skipped"); int(Int64(report.skipped))
        raw(","); key("errors"); list(report.errors) { w, e in w.error(e) }
        raw(","); key("skipped_links"); list(report.skippedLinks) { w, link in w.string(link) }
        raw(","); key("skips"); list(report.skips) { w, s in
            w.raw("{"); w.key("file"); w.string(NotesError.shown(s.file, limit: LastError.maxMessageBytes))
            w.raw(","); w.key("line"); w.int(Int64(s.line))
            w.raw(","); w.key("reason"); w.string(s.reason.rawValue)
            w.raw("}")
        }
        raw("}")
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
func options(_ pointer: UnsafePointer<CChar>?, allowed: [String]) throws -> JSONObject {
    guard let text = try optionalString(pointer, "options_json") else { return JSONObject(kind: .validation) }
    let options = try JSONObject.parse(argument: text, "options_json")
    try options.only(allowed, what: "option")
    return options
}

extension JSONObject {
    /// One of the cases of `T`, named by its raw value; a `kind` error on `key` for another text.
    func optionalChoice<T: RawRepresentable & CaseIterable>(_ key: String) throws -> T? where T.RawValue == String {
        guard let text = try optionalString(key) else { return nil }
        guard let choice = T(rawValue: text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }
            throw fail(key, "\(key) must be \(names.dropLast().joined(separator: ", ")) or \(names.last ?? ""), got \"\(text.prefix(40))\"")
        }
        return choice
    }

    /// An object of strings (`{"Title": "title"}`), in its order.
    func optionalStringPairs(_ key: String) throws -> [(String, String)]? {
        switch value(key) {
        case nil, .null?: return nil
        case let .object(members)?:
            return try members.map { name, value in
                guard case let .string(s) = value else {
                    throw fail(key, "\(key) must map names to names, got \(value.typeName) for \"\(name.prefix(40))\"")
                }
                return (name, s)
            }
        case let other?: throw fail(key, "\(key) must be an object of names, got \(other.typeName)")
        }
    }
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
        if !error.options.isEmpty {
            raw(","); key("options")
            list(error.options) { w, option in
                w.raw("{"); w.key("text"); w.string(option.text)
                w.raw(","); w.key("name"); w.string(option.name)
                switch option.value {
                case nil: break
                case let .choice(text)?, let .string(text)?: w.raw(","); w.key("value"); w.string(text)
                case let .bool(flag)?: w.raw(","); w.key("value"); w.bool(flag)
                }
                w.raw("}")
            }
        }
        raw("}")
    }
}
