import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// The JSON that remains at the ABI: changes for the subscribe callback, reports, layout results. Records and lists leave as packed rows and Arrow batches (ArrowExport+Records.swift).

extension JSONWriter {
    mutating func change(_ c: Change) {
        raw("{"); key("seq"); int(c.seq)
        raw(","); key("entity"); string(c.entity)
        raw(","); key("op"); string(c.operation.rawValue)
        raw(","); key("id"); int(c.entityId)
        raw(","); key("uid"); string(c.uid)
        raw(","); key("revision"); optional(c.revision)
        raw(","); key("at"); timestamp(c.at)
        raw("}")
    }

    mutating func optional(_ v: Int64?) {
        if let v { int(v) } else { null() }
    }

    /// A JSON array of `items`; `bytesEach`: room reserved for about that many bytes an item.
    mutating func list<T>(_ items: [T], bytesEach: Int = 0, _ write: (inout JSONWriter, T) -> Void) {
        if bytesEach > 0 { bytes.reserveCapacity(bytes.count + items.count * bytesEach + 2) }
        raw("[")
        for (n, item) in items.enumerated() {
            if n > 0 { raw(",") }
            write(&self, item)
        }
        raw("]")
    }

    static func encode(_ write: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter()
        write(&w)
        return w.bytes
    }
}

// MARK: - Layout

extension JSONWriter {
    /// A number of pixels: an integer when whole (as most are), else the shortest exact decimal.
    mutating func number(_ v: Double) {
        if v == v.rounded(), abs(v) < 1e15 { int(Int64(v)) } else { double(v) }
    }

    mutating func metrics(_ m: TextMetrics) {
        object(["width": .int(m.width), "height": .int(m.height), "line_count": .int(m.lineCount), "unknown_glyphs": .int(m.unknownGlyphs)])
    }

    /// A member of a result object.
    enum Member {
        case int(Int), number(Double), bool(Bool), string(String)
    }

    /// `{"key": value, ...}`, the members in the order given.
    mutating func object(_ members: KeyValuePairs<StaticString, Member>) {
        raw("{")
        for (n, (name, value)) in members.enumerated() {
            if n > 0 { raw(",") }
            key(name)
            switch value {
            case let .int(v): int(Int64(v))
            case let .number(v): number(v)
            case let .bool(v): bool(v)
            case let .string(v): string(v)
            }
        }
        raw("}")
    }
}

extension JSONWriter {
    /// A style as its table lists it, then its fingerprint.
    mutating func style<Style: LayoutStyle>(_ s: Style) {
        raw("{")
        for field in Style.fields {
            string(field.name); raw(":")
            switch field.value(of: s) {
            case let .font(family): string(family)
            case let .number(n): number(n)
            case .none: null()
            }
            raw(",")
        }
        key("fingerprint"); string(s.fingerprint)
        raw("}")
    }

    mutating func bubble(_ b: Bubble) {
        object(["x": .number(b.x), "width": .number(b.width), "height": .number(b.height), "text_width": .number(b.textWidth),
                "text_height": .number(b.textHeight), "from_me": .bool(b.fromMe), "row_height": .number(b.rowHeight)])
    }

    mutating func picture(_ p: Picture) {
        object(["path": .string(p.path), "width": .int(p.width), "height": .int(p.height), "rows": .int(p.rows)])
    }
}
