import NotesKit

// How records travel across the ABI: UTF-8 JSON, timestamps as ISO-8601 text.

extension JSONWriter {
    mutating func article(_ a: Article) {
        raw("{"); key("id"); int(a.id)
        raw(","); key("uid"); string(a.uid)
        raw(","); key("title"); string(a.title)
        raw(","); key("content"); string(a.content)
        raw(","); key("created_at"); string(a.createdAt.iso8601)
        raw(","); key("updated_at"); string(a.updatedAt.iso8601)
        raw(","); key("revision"); int(a.revision)
        raw("}")
    }

    mutating func draft(_ d: Draft) {
        raw("{"); key("id"); int(d.id)
        raw(","); key("uid"); string(d.uid)
        raw(","); key("article_id"); optional(d.articleId)
        raw(","); key("base_revision"); optional(d.baseRevision)
        raw(","); key("title"); string(d.title)
        raw(","); key("content"); string(d.content)
        raw(","); key("created_at"); string(d.createdAt.iso8601)
        raw(","); key("updated_at"); string(d.updatedAt.iso8601)
        raw("}")
    }

    mutating func change(_ c: Change) {
        raw("{"); key("seq"); int(c.seq)
        raw(","); key("entity"); string(c.entity)
        raw(","); key("op"); string(c.operation.rawValue)
        raw(","); key("id"); int(c.entityId)
        raw(","); key("uid"); string(c.uid)
        raw(","); key("revision"); optional(c.revision)
        raw(","); key("at"); string(c.at.iso8601)
        raw("}")
    }

    /// `{"<name>": record, "spans": {"title": [[start, end], ...], "content": [...]}}`; only the
    /// fields searched appear in `spans`.
    mutating func hit(_ name: StaticString, _ spans: MatchSpans, _ record: (inout JSONWriter) -> Void) {
        raw("{"); key(name); record(&self)
        raw(","); key("spans"); raw("{")
        var first = true
        for (field, ranges) in [("title" as StaticString, spans.title), ("content", spans.content)] {
            guard let ranges else { continue }
            if !first { raw(",") }
            first = false
            key(field)
            list(ranges) { w, r in w.raw("["); w.int(Int64(r.lowerBound)); w.raw(","); w.int(Int64(r.upperBound)); w.raw("]") }
        }
        raw("}}")
    }

    mutating func optional(_ v: Int64?) {
        if let v { int(v) } else { null() }
    }

    mutating func list<T>(_ items: [T], _ write: (inout JSONWriter, T) -> Void) {
        raw("[")
        for (n, item) in items.enumerated() {
            if n > 0 { raw(",") }
            write(&self, item)
        }
        raw("]")
    }

    mutating func page<T>(_ page: Page<T>, _ write: (inout JSONWriter, T) -> Void) {
        raw("{"); key("items"); list(page.items, write)
        raw(","); key("next_cursor")
        if let cursor = page.nextCursor { string(cursor) } else { null() }
        raw(","); key("has_more"); bool(page.hasMore)
        raw("}")
    }

    static func encode(_ write: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter()
        write(&w)
        return w.bytes
    }
}

// MARK: - Records in

/// Reads a JSON array of records, each an object, for the bulk calls.
func records(_ text: String, _ name: String) throws -> [[(String, JSONValue)]] {
    let value: JSONValue
    do {
        value = try JSONValue.parse(text)
    } catch {
        throw NotesError(.invalidArgument, "\(name) is not valid JSON: \(error.message) at line \(error.line), column \(error.column)", field: name)
    }
    guard case let .array(items) = value else { throw NotesError(.invalidArgument, "\(name) must be a JSON array of objects", field: name) }
    return try items.enumerated().map { index, item in
        guard case let .object(members) = item else {
            throw NotesError(.validation, "record \(index): must be an object, got \(item.typeName)", field: name, line: index)
        }
        return members
    }
}

/// The fields of one bulk record, with errors that name the record and the field.
struct RecordReader {
    let members: [(String, JSONValue)]
    let index: Int

    func value(_ field: String) -> JSONValue? {
        members.first { $0.0 == field }.map(\.1)
    }

    func fail(_ field: String, _ message: String) -> NotesError {
        NotesError(.validation, "record \(index): \(message)", field: field, line: index)
    }

    func string(_ field: String) throws -> String {
        guard let v = try optionalString(field) else { throw fail(field, "\(field) is missing") }
        return v
    }

    func optionalString(_ field: String) throws -> String? {
        switch value(field) {
        case nil, .null?: return nil
        case let .string(s)?: return s
        case let other?: throw fail(field, "\(field) must be a string, got \(other.typeName)")
        }
    }

    func optionalTimestamp(_ field: String) throws -> Timestamp? {
        guard let text = try optionalString(field) else { return nil }
        guard let t = Timestamp(iso8601: text) else {
            throw fail(field, "\(field) must be an ISO-8601 time like 2026-11-29T15:28:06.123Z, got \"\(text.prefix(40))\"")
        }
        return t
    }

    func optionalBool(_ field: String) throws -> Bool? {
        switch value(field) {
        case nil, .null?: return nil
        case let .bool(b)?: return b
        case let other?: throw fail(field, "\(field) must be true or false, got \(other.typeName)")
        }
    }
}
