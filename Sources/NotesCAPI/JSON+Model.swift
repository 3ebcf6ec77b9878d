import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// How records travel across the ABI: UTF-8 JSON, timestamps as ISO-8601 text.

extension JSONWriter {
    mutating func article(_ a: Article) {
        bytes.reserveCapacity(bytes.count + a.title.utf8.count + a.content.utf8.count + 180)
        raw("{"); key("id"); int(a.id)
        raw(","); key("uid"); string(a.uid)
        raw(","); key("title"); string(a.title)
        raw(","); key("content"); string(a.content)
        raw(","); key("created_at"); timestamp(a.createdAt)
        raw(","); key("updated_at"); timestamp(a.updatedAt)
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
        raw(","); key("created_at"); timestamp(d.createdAt)
        raw(","); key("updated_at"); timestamp(d.updatedAt)
        raw("}")
    }

    mutating func conversation(_ c: Conversation) {
        raw("{"); key("id"); int(c.id)
        raw(","); key("uid"); string(c.uid)
        raw(","); key("title"); string(c.title)
        raw(","); key("created_at"); timestamp(c.createdAt)
        raw(","); key("last_activity_at"); timestamp(c.lastActivityAt)
        raw("}")
    }

    mutating func message(_ m: Message) {
        bytes.reserveCapacity(bytes.count + m.content.utf8.count + 160)
        raw("{"); key("id"); int(m.id)
        raw(","); key("uid"); string(m.uid)
        raw(","); key("conversation_id"); int(m.conversationId)
        raw(","); key("content"); string(m.content)
        raw(","); key("from_me"); bool(m.fromMe)
        raw(","); key("sent_at"); timestamp(m.sentAt)
        raw(","); key("sender"); if let sender = m.sender { string(sender) } else { null() }
        raw("}")
    }

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
    mutating func articleStyle(_ s: ArticleRowStyle) {
        raw("{"); key("title_font"); string(s.titleFont)
        raw(","); key("title_size"); number(s.titleSize)
        raw(","); key("title_height"); if let h = s.titleHeight { number(h) } else { raw("null") }
        raw(","); key("top_padding"); number(s.topPadding)
        raw(","); key("title_left"); number(s.titleLeft)
        raw(","); key("title_right"); number(s.titleRight)
        raw(","); key("title_spacing"); number(s.titleSpacing)
        raw(","); key("content_font"); string(s.contentFont)
        raw(","); key("content_size"); number(s.contentSize)
        raw(","); key("content_left"); number(s.contentLeft)
        raw(","); key("content_right"); number(s.contentRight)
        raw(","); key("content_inset_top"); number(s.contentInsetTop)
        raw(","); key("content_inset_bottom"); number(s.contentInsetBottom)
        raw(","); key("content_padding"); number(s.contentPadding)
        raw(","); key("bottom_padding"); number(s.bottomPadding)
        raw(","); key("separator"); number(s.separator)
        raw(","); key("extra_height"); number(s.extraHeight)
        raw(","); key("fingerprint"); string(s.fingerprint)
        raw("}")
    }

    mutating func bubbleStyle(_ s: BubbleStyle) {
        raw("{"); key("font"); string(s.font)
        raw(","); key("size"); number(s.size)
        raw(","); key("max_text_width"); number(s.maxTextWidth)
        raw(","); key("max_text_height"); if let h = s.maxTextHeight { number(h) } else { raw("null") }
        raw(","); key("inset_top"); number(s.insetTop)
        raw(","); key("inset_bottom"); number(s.insetBottom)
        raw(","); key("inset_side"); number(s.insetSide)
        raw(","); key("tail_margin"); number(s.tailMargin)
        raw(","); key("side_margin"); number(s.sideMargin)
        raw(","); key("row_margin_top"); number(s.rowMarginTop)
        raw(","); key("row_margin_bottom"); number(s.rowMarginBottom)
        raw(","); key("fingerprint"); string(s.fingerprint)
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
