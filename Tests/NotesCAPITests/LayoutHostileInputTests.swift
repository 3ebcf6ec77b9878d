import Testing
import NotesCAPI
import NotesKit

/// The layout exports with the inputs a careless or hostile C caller sends.
@Suite("The layout C ABI under hostile input")
struct LayoutHostileInputTests {
    func openLayout() throws -> (OpaquePointer, OpaquePointer) {
        var store: OpaquePointer?
        #expect(nk_store_open_memory(&store) == 0)
        let s = try #require(store)
        var layout: OpaquePointer?
        #expect(nk_layout_open(s, 375, nil, nil, 150, 0, &layout) == 0)
        return (s, try #require(layout))
    }

    @Test("NULL, invalid UTF-8, NaN and bad JSON are errors, not crashes")
    func arguments() throws {
        let (store, layout) = try openLayout()
        defer { _ = nk_layout_close(layout); _ = nk_store_close(store) }
        var out: UnsafeMutablePointer<CChar>?
        let bad: [CChar] = [CChar(bitPattern: 0xC3), 0]
        #expect(bad.withUnsafeBufferPointer { nk_measure_text($0.baseAddress, 100, nil, 17, &out) } == 1)
        #expect(nk_measure_text(nil, 100, nil, 17, &out) == 1)
        #expect(nk_measure_text("x", .nan, nil, 17, &out) == 2)
        #expect(nk_measure_text("x", 100, nil, -.infinity, &out) == 2)
        #expect(nk_layout_article_heights(layout, "[1,", &out) == 1)
        #expect(nk_layout_article_heights(layout, "[\"1\"]", &out) == 1)
        #expect(nk_layout_article_heights(layout, nil, &out) == 1)
        #expect(nk_layout_article_heights(layout, "[1]", nil) == 1)
        #expect(nk_layout_article_heights(layout, "[1]", &out) == 3)
        var height = 0.0
        #expect(nk_layout_article_height(layout, -5, &height) == 3)
        #expect(nk_layout_bubble(layout, 42, &out) == 3)
        #expect(nk_layout_bubbles(layout, "[1, 2", &out) == 1)
        #expect(nk_layout_render_conversation(layout, 42, "/tmp/noteskit-never-written.png", &out) == 3)
        #expect(nk_layout_render_conversation(layout, 42, nil, &out) == 1)
        var measured: Int64 = -1
        #expect(nk_layout_prefetch(layout, "bubble", "[]", 1, &measured) == 1)
        #expect(nk_style_resolve("article_row", "{\"top_padding\": -1}", &out) == 2)
        #expect(nk_style_resolve("article_row", "{\"colour\": 1}", &out) == 2)
        #expect(nk_style_resolve("poster", nil, &out) == 1)
        #expect(nk_keyboard_apply(nil, "{\"event\": \"show\"}", &out) == 2)
        #expect(nk_search_panel_apply("[]", "{\"event\": \"drag\", \"dy\": 1}", &out) == 1)
        #expect(out == nil)
    }

    @Test("closed and wrong-kind handles are errors")
    func handles() throws {
        let (store, layout) = try openLayout()
        var height = 0.0
        #expect(nk_layout_article_height(store, 1, &height) == 1)
        var rows: OpaquePointer?
        #expect(nk_layout_rows(layout, "article", "[]", &rows) == 0)
        #expect(nk_rows_total_height(layout, &height) == 1)
        #expect(nk_layout_close(layout) == 0)
        #expect(nk_layout_close(layout) == 11)
        #expect(nk_rows_total_height(rows, &height) == 11)
        #expect(nk_rows_close(rows) == 0)
        var layout2: OpaquePointer?
        #expect(nk_layout_open(store, .nan, nil, nil, 150, 0, &layout2) == 2)
        #expect(nk_layout_open(store, 375, "{", nil, 150, 0, &layout2) == 1)
        #expect(nk_layout_open(store, 375, nil, nil, -1, 0, &layout2) == 2)
        #expect(nk_layout_open(store, 375, nil, nil, 150, -1, &layout2) == 2)
        #expect(layout2 == nil)
        #expect(nk_store_close(store) == 0)
    }
}
