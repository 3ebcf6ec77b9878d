import NotesKit

// Text measurement, styles, layouts (heights, bubbles, row offsets, pictures) and the interaction
// models. See include/noteskit.h, section "Layout".

@_cdecl("nk_measure_text")
public func nk_measure_text(_ text: UnsafePointer<CChar>?, _ maxWidth: Double, _ font: UnsafePointer<CChar>?, _ size: Double,
                            _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let metrics = try measureText(try string(text, "text"), maxWidth: maxWidth,
                                      font: try optionalString(font, "font") ?? Fonts.cjkFamily, size: size)
        w.metrics(metrics)
    }
}

@_cdecl("nk_font_configuration")
public func nk_font_configuration(_ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let xml = try Fonts.configurationXML()
        w.raw("{"); w.key("fontconfig"); w.string(xml)
        w.raw(","); w.key("families"); w.list(Fonts.families) { $0.string($1) }
        w.raw(","); w.key("directory"); w.string(Fonts.directory)
        w.raw(","); w.key("files"); w.list(try Fonts.files()) { $0.string($1) }
        w.raw(","); w.key("cache_directory"); if let cache = Fonts.cacheDirectory { w.string(cache) } else { w.raw("null") }
        w.raw(","); w.key("dpi"); w.number(Fonts.dpi)
        w.raw(","); w.key("language"); w.string(Fonts.language)
        w.raw("}")
    }
}

@_cdecl("nk_style_resolve")
public func nk_style_resolve(_ kind: UnsafePointer<CChar>?, _ styleJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let kind = try string(kind, "kind")
        let json = try optionalString(styleJSON, "style_json")
        switch kind {
        case "article_row", "article_row.two_labels":
            w.style(try style(json, "style_json", defaults: kind == "article_row" ? ArticleRowStyle() : .twoLabels))
        case "bubble":
            w.style(try style(json, "style_json", defaults: BubbleStyle()))
        default:
            throw NotesError(.invalidArgument, "kind must be \"article_row\", \"article_row.two_labels\" or \"bubble\", got \"\(kind.prefix(40))\"", field: "kind")
        }
    }
}

// MARK: - Layouts

@_cdecl("nk_layout_open")
public func nk_layout_open(_ storeHandle: OpaquePointer?, _ width: Double, _ articleStyleJSON: UnsafePointer<CChar>?,
                           _ bubbleStyleJSON: UnsafePointer<CChar>?, _ estimatedHeight: Double, _ cacheBytes: Int64,
                           _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_layout")
        let layout = try Layout(store: try store(storeHandle), width: width,
                                articleStyle: try style(try optionalString(articleStyleJSON, "article_style_json"), "article_style_json",
                                                          defaults: ArticleRowStyle()),
                                bubbleStyle: try style(try optionalString(bubbleStyleJSON, "bubble_style_json"), "bubble_style_json",
                                                       defaults: BubbleStyle()),
                                estimatedHeight: estimatedHeight,
                                cacheCapacityBytes: cacheBytes == 0 ? Layout.defaultCacheCapacityBytes : count(cacheBytes))
        out.pointee = Handles.add(layout, .layout)
    }
}

@_cdecl("nk_layout_close")
public func nk_layout_close(_ handle: OpaquePointer?) -> Int32 {
    call { (try Handles.remove(handle, .layout) as? Layout)?.close() }
}

func layout(_ handle: OpaquePointer?) throws -> Layout {
    try Handles.get(handle, .layout, as: Layout.self)
}

@_cdecl("nk_layout_article_height")
public func nk_layout_article_height(_ handle: OpaquePointer?, _ id: Int64, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_height")
        out.pointee = try layout(handle).articleHeight(id)
    }
}

@_cdecl("nk_layout_article_heights")
public func nk_layout_article_heights(_ handle: OpaquePointer?, _ idsJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        w.list(try layout(handle).articleHeights(try ids(idsJSON, "ids_json")), bytesEach: 6) { $0.number($1) }
    }
}

@_cdecl("nk_layout_bubble")
public func nk_layout_bubble(_ handle: OpaquePointer?, _ messageID: Int64, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        w.bubble(try layout(handle).bubble(messageID))
    }
}

@_cdecl("nk_layout_bubbles")
public func nk_layout_bubbles(_ handle: OpaquePointer?, _ idsJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        w.list(try layout(handle).bubbles(try ids(idsJSON, "ids_json")), bytesEach: 110) { $0.bubble($1) }
    }
}

@_cdecl("nk_layout_prefetch")
public func nk_layout_prefetch(_ handle: OpaquePointer?, _ kind: UnsafePointer<CChar>?, _ idsJSON: UnsafePointer<CChar>?,
                               _ threads: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_measured")
        let layout = try layout(handle)
        let kind = try rowKind(kind)
        out.pointee = Int64(try layout.prefetch(try ids(idsJSON, "ids_json"), kind: kind, threads: Int(threads)))
    }
}

@_cdecl("nk_layout_stats")
public func nk_layout_stats(_ handle: OpaquePointer?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let s = try layout(handle).stats()
        w.object(["hits": .int(s.hits), "misses": .int(s.misses), "entries": .int(s.entries), "bytes": .int(s.bytes),
                  "capacity_bytes": .int(s.capacityBytes), "evictions": .int(s.evictions), "invalidations": .int(s.invalidations)])
    }
}

@_cdecl("nk_layout_render_articles")
public func nk_layout_render_articles(_ handle: OpaquePointer?, _ idsJSON: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                      _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let layout = try layout(handle)
        let ids = try ids(idsJSON, "ids_json")
        let picture = try layout.renderArticles(ids, to: try string(path, "path"))
        w.picture(picture)
    }
}

@_cdecl("nk_layout_render_conversation")
public func nk_layout_render_conversation(_ handle: OpaquePointer?, _ conversationID: Int64, _ path: UnsafePointer<CChar>?,
                                          _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let layout = try layout(handle)
        let picture = try layout.renderConversation(conversationID, to: try string(path, "path"))
        w.picture(picture)
    }
}

// MARK: - Row offsets

@_cdecl("nk_layout_rows")
public func nk_layout_rows(_ handle: OpaquePointer?, _ kind: UnsafePointer<CChar>?, _ idsJSON: UnsafePointer<CChar>?,
                           _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_rows")
        let layout = try layout(handle)
        let kind = try rowKind(kind)
        out.pointee = Handles.add(try layout.rows(try ids(idsJSON, "ids_json"), kind: kind), .rows)
    }
}

@_cdecl("nk_rows_close")
public func nk_rows_close(_ handle: OpaquePointer?) -> Int32 {
    call { _ = try Handles.remove(handle, .rows) }
}

func rows(_ handle: OpaquePointer?) throws -> RowOffsets {
    try Handles.get(handle, .rows, as: RowOffsets.self)
}

@_cdecl("nk_rows_total_height")
public func nk_rows_total_height(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_height")
        out.pointee = try rows(handle).totalHeight()
    }
}

@_cdecl("nk_rows_offset_of")
public func nk_rows_offset_of(_ handle: OpaquePointer?, _ row: Int64, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_offset")
        out.pointee = try rows(handle).offset(of: count(row))
    }
}

@_cdecl("nk_rows_height_of")
public func nk_rows_height_of(_ handle: OpaquePointer?, _ row: Int64, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_height")
        out.pointee = try rows(handle).height(of: count(row))
    }
}

@_cdecl("nk_rows_is_measured")
public func nk_rows_is_measured(_ handle: OpaquePointer?, _ row: Int64, _ out: UnsafeMutablePointer<Int32>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_measured")
        out.pointee = try rows(handle).isMeasured(count(row)) ? 1 : 0
    }
}

@_cdecl("nk_rows_row_at")
public func nk_rows_row_at(_ handle: OpaquePointer?, _ y: Double, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_row")
        out.pointee = Int64(try rows(handle).row(at: y) ?? -1)
    }
}

@_cdecl("nk_rows_visible")
public func nk_rows_visible(_ handle: OpaquePointer?, _ offset: Double, _ viewportHeight: Double,
                            _ outFirst: UnsafeMutablePointer<Int64>?, _ outStop: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let outFirst = try outPointer(outFirst, "out_first")
        let outStop = try outPointer(outStop, "out_stop")
        let range = try rows(handle).visible(offset: offset, height: viewportHeight)
        outFirst.pointee = Int64(range.lowerBound)
        outStop.pointee = Int64(range.upperBound)
    }
}

// MARK: - Interaction models

@_cdecl("nk_keyboard_apply")
public func nk_keyboard_apply(_ stateJSON: UnsafePointer<CChar>?, _ eventJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        var model = KeyboardModel()
        if let state = try object(try optionalString(stateJSON, "state_json"), "state_json") {
            model = try KeyboardModel(isShown: try state.optionalBool("shown") ?? false,
                                      keyboardHeight: try state.optionalNumber("keyboard_height") ?? 0)
        }
        let event = try object(try string(eventJSON, "event_json"), "event_json") ?? JSONObject(kind: .validation)
        try model.apply(try event.oneOf("event", "a keyboard event", [
            "show": { .show(keyboardHeight: try $0.number("keyboard_height")) },
            "hide": { _ in .hide },
        ]))
        w.object(["shown": .bool(model.isShown), "keyboard_height": .number(model.keyboardHeight),
                  "editor_bottom_inset": .number(model.editorBottomInset), "chat_offset": .number(model.chatOffset)])
    }
}

@_cdecl("nk_search_panel_apply")
public func nk_search_panel_apply(_ stateJSON: UnsafePointer<CChar>?, _ eventJSON: UnsafePointer<CChar>?, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        var panel = SearchPanel()
        if let state = try object(try optionalString(stateJSON, "state_json"), "state_json") {
            let masks = try state.optionalNumber("mask_count") ?? 0
            panel = try SearchPanel(state: try state.oneOf("state", "state", ["hidden": { _ in .hidden }, "shown": { _ in .shown }],
                                                         absent: .hidden),
                                    isDragging: try state.optionalBool("dragging") ?? false,
                                    topOffset: try state.optionalNumber("top_offset"),
                                    dragStartOffset: try state.optionalNumber("drag_start_offset"),
                                    isKeyboardShown: try state.optionalBool("keyboard_shown") ?? false,
                                    keyboardHeight: try state.optionalNumber("keyboard_height") ?? 0,
                                    maskCount: masks == 0 ? 0 : masks == 1 ? 1 : 2)
        }
        let event = try object(try string(eventJSON, "event_json"), "event_json") ?? JSONObject(kind: .validation)
        try panel.apply(try event.oneOf("event", "a search panel event", [
            "drag": { .drag(translation: try $0.number("translation")) },
            "end_drag": { _ in .endDrag },
            "show": { _ in .show },
            "hide": { _ in .hide },
            "keyboard_will_show": { .keyboardWillShow(height: try $0.number("keyboard_height")) },
            "keyboard_will_hide": { _ in .keyboardWillHide },
        ]))
        w.object(["state": .string(panel.state.rawValue), "dragging": .bool(panel.isDragging),
                  "top_offset": .number(panel.topOffset), "drag_start_offset": .number(panel.dragStartOffset),
                  "revealed": .number(panel.revealed), "keyboard_shown": .bool(panel.isKeyboardShown),
                  "keyboard_height": .number(panel.keyboardHeight), "mask_count": .int(panel.maskCount)])
    }
}

@_cdecl("nk_interaction_constants")
public func nk_interaction_constants(_ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        w.raw("{"); w.key("keyboard")
        w.object(["editor_gap_above_keyboard": .number(KeyboardModel.editorGapAboveKeyboard),
                  "editor_resting_inset": .number(KeyboardModel.editorRestingInset),
                  "max_keyboard_height": .number(KeyboardModel.maxKeyboardHeight)])
        w.raw(","); w.key("search_panel")
        w.object(["height": .number(SearchPanel.height), "strip": .number(SearchPanel.strip),
                  "snap_threshold": .number(SearchPanel.snapThreshold), "max_distance": .number(SearchPanel.maxDistance)])
        w.raw("}")
    }
}

// MARK: - Arguments

func rowKind(_ pointer: UnsafePointer<CChar>?) throws -> RowOffsets.Kind {
    let name = try string(pointer, "kind")
    guard let kind = RowOffsets.Kind(rawValue: name) else {
        throw NotesError(.invalidArgument, "kind must be \"article\" or \"message\", got \"\(name.prefix(40))\"", field: "kind")
    }
    return kind
}

/// A JSON array of ids (integers), read without building a JSON tree: a million ids parse in a
/// few milliseconds.
func ids(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> [Int64] {
    guard let pointer else { throw NotesError(.invalidArgument, "\(name) is NULL", field: name) }
    let bad = { (what: String) in NotesError(.invalidArgument, "\(name) must be a JSON array of integer ids: \(what)", field: name) }
    var ids: [Int64] = []
    var p = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
    func skipSpace() { while p.pointee == 32 || p.pointee == 10 || p.pointee == 13 || p.pointee == 9 { p += 1 } }
    skipSpace()
    guard p.pointee == UInt8(ascii: "[") else { throw bad("it does not start with [") }
    p += 1
    skipSpace()
    if p.pointee == UInt8(ascii: "]") {
        p += 1
    } else {
        while true {
            skipSpace()
            let negative = p.pointee == UInt8(ascii: "-")
            if negative { p += 1 }
            var value: Int64 = 0
            var digits = 0
            while p.pointee >= 48 && p.pointee <= 57 {
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int64(p.pointee - 48))
                guard !o1, !o2 else { throw bad("an id is out of range") }
                value = sum
                digits += 1
                p += 1
            }
            guard digits > 0 else { throw bad("item \(ids.count) is not an integer") }
            ids.append(negative ? -value : value)
            skipSpace()
            if p.pointee == UInt8(ascii: ",") { p += 1; continue }
            if p.pointee == UInt8(ascii: "]") { p += 1; break }
            throw bad("item \(ids.count - 1) is not an integer (or a comma or ] is missing)")
        }
    }
    skipSpace()
    guard p.pointee == 0 else { throw bad("there is text after the ]") }
    return ids
}

extension JSONObject {
    /// The value of `field` among `choices` (`absent` when the field is missing, if given), made by
    /// the choice's maker from this object; another value is a validation error naming them all.
    func oneOf<T>(_ field: String, _ what: String, _ choices: KeyValuePairs<String, (JSONObject) throws -> T>,
                  absent: T? = nil) throws -> T {
        let name: String
        if let given = try optionalString(field) { name = given } else if let absent { return absent } else { name = try string(field) }
        guard let make = choices.first(where: { $0.key == name })?.value else {
            let names = choices.map { "\"\($0.key)\"" }
            let list = names.count == 2 ? names.joined(separator: " or ")
                : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
            throw NotesError(.validation, "\(what) is \(list), got \"\(name.prefix(40))\"", field: field)
        }
        return try make(self)
    }
}

/// A JSON object argument (nil for a nil text); anything else is an invalid argument.
func object(_ text: String?, _ name: String) throws -> JSONObject? {
    try text.map { try JSONObject.parse(argument: $0, name) }
}

/// A style from its JSON (every field optional, `defaults` for the missing ones; its fingerprint
/// may come back and is ignored), read by the style's table; validated.
func style<Style: LayoutStyle>(_ json: String?, _ name: String, defaults: Style) throws -> Style {
    var style = defaults
    guard let r = try object(json, name) else { return try style.validated() }
    try r.only(Style.fields.map(\.name) + ["fingerprint"])
    for field in Style.fields {
        if field.rule == .font {
            if let family = try r.optionalString(field.name) { field.set(.font(family), in: &style) }
        } else if field.absent != nil {
            if r.value(field.name) != nil { field.set(try r.optionalNumber(field.name).map { .number($0) } ?? .none, in: &style) }
        } else if let number = try r.optionalNumber(field.name) {
            field.set(.number(number), in: &style)
        }
    }
    return try style.validated()
}
