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

    mutating func list<T>(_ items: [T], _ write: (inout JSONWriter, T) -> Void) {
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
        raw("{"); key("width"); int(Int64(m.width))
        raw(","); key("height"); int(Int64(m.height))
        raw(","); key("line_count"); int(Int64(m.lineCount))
        raw(","); key("unknown_glyphs"); int(Int64(m.unknownGlyphs))
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
        raw("{"); key("x"); number(b.x)
        raw(","); key("width"); number(b.width)
        raw(","); key("height"); number(b.height)
        raw(","); key("text_width"); number(b.textWidth)
        raw(","); key("text_height"); number(b.textHeight)
        raw(","); key("from_me"); bool(b.fromMe)
        raw(","); key("row_height"); number(b.rowHeight)
        raw("}")
    }

    mutating func picture(_ p: Picture) {
        raw("{"); key("path"); string(p.path)
        raw(","); key("width"); int(Int64(p.width))
        raw(","); key("height"); int(Int64(p.height))
        raw(","); key("rows"); int(Int64(p.rows))
        raw("}")
    }
}
