import Testing
@testable import NotesKit

@Suite("Layout in the core: measuring, the height cache, row offsets, interaction models")
struct LayoutTests {
    @Test("measuring wraps at the width with the pinned fonts")
    func measuring() throws {
        let one = try measureText("hello world", maxWidth: 1_000, font: "DejaVu Sans")
        let two = try measureText("hello world", maxWidth: Double(one.width - 1), font: "DejaVu Sans")
        #expect(one.lineCount == 1 && two.lineCount == 2 && two.height > one.height)
        #expect(try measureText("\u{1FA90}", maxWidth: 100).unknownGlyphs == 1)
        let font = try #require(throws: NotesError.self) { try measureText("x", maxWidth: 100, font: "Helvetica") }
        #expect(font.kind == .font)
        for width in [0, -1, Double.nan, .infinity] {
            let error = try #require(throws: NotesError.self) { try measureText("x", maxWidth: width) }
            #expect(error.kind == .validation && error.field == "max_width")
        }
    }

    @Test("measuring on many threads at once, each with its own font map, gives the same answers")
    func threads() async throws {
        let texts = (0..<40).map { String(repeating: "今天天气真好 hello ", count: $0 + 1) }
        let expected = try texts.map { try measureText($0, maxWidth: 200) }
        try await withThrowingTaskGroup(of: [TextMetrics].self) { group in
            for _ in 0..<4 { group.addTask { try texts.map { try measureText($0, maxWidth: 200) } } }
            for try await result in group { #expect(result == expected) }
        }
    }

    @Test("the height cache keeps the most recently used entries within its bound")
    func cacheAgainstAModel() throws {
        var cache = try HeightCache(capacityBytes: 4_096)
        var model: [UInt64: Int32] = [:]
        var order: [UInt64] = []  // most recent last
        var rng = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let key = UInt64.random(in: 1...300, using: &rng) | (step % 3 == 0 ? 1 << 63 : 0)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                cache.insert(HeightCache.Entry(key: key, revision: 1, first: Int32(step), second: 0))
                model[key] = Int32(step)
                order.removeAll { $0 == key }
                order.append(key)
                if order.count > cache.maxEntries { model[order.removeFirst()] = nil }
            case 5..<8:
                let found = cache.lookup(key)
                #expect(found?.first == model[key])
                if found != nil { order.removeAll { $0 == key }; order.append(key) }
            default:
                #expect(cache.remove(key) == (model.removeValue(forKey: key) != nil))
                order.removeAll { $0 == key }
            }
            #expect(cache.count == model.count)
        }
        #expect(cache.bytes <= 4_096)
        for (key, value) in model { #expect(cache.peek(key)?.first == value) }
    }

    @Test("a million cached rows fit in 64 MB")
    func compact() {
        let fitting = HeightCache.entriesFitting(64 << 20)
        #expect(fitting >= 1_000_000)
        #expect(HeightCache.entryBytes <= 40)
    }

    @Test("any cache bound up to Int.max is accepted without overflow", arguments: [Int.max, Int.max / 3, 1 << 62, 1_000_000_000_000_000_000])
    func hugeBound(bytes: Int) {
        #expect(HeightCache.entriesFitting(bytes) > 1_000_000)
    }

    @Test("heights follow edits and deletes through the change feed")
    func invalidation() throws {
        let store = try Store.memory()
        let a = try store.articles.create(title: "t", content: "short")
        let layout = try store.layout(width: 375)
        let before = try layout.articleHeight(a.id)
        _ = try store.articles.update(a.id, content: String(repeating: "longer text ", count: 40))
        #expect(try layout.articleHeight(a.id) > before)
        #expect(layout.stats().invalidations == 1 && layout.stats().misses == 2)
        try store.articles.delete(a.id)
        let gone = try #require(throws: NotesError.self) { try layout.articleHeight(a.id) }
        #expect(gone.kind == .notFound)
    }

    @Test("a measurement that raced with a write to its row is not cached; others are")
    func raceWithAWrite() throws {
        var state = Layout.State(cache: try HeightCache(capacityBytes: 1 << 20), syncedSeq: 10, recentFloor: 10)
        let at = Timestamp(milliseconds: 0)
        _ = state.apply([Change(seq: 11, entity: "article", operation: .update, entityId: 7, uid: "u", revision: 2, at: at),
                         Change(seq: 12, entity: "message", operation: .delete, entityId: 7, uid: "v", revision: nil, at: at)])
        #expect(!state.mayStore(CacheKey.article(7), readAt: 10))   // read at revision 1, before the update
        #expect(state.mayStore(CacheKey.article(7), readAt: 11))    // read after it
        #expect(state.mayStore(CacheKey.article(8), readAt: 10))    // another row
        #expect(!state.mayStore(CacheKey.message(7), readAt: 11))   // a message deleted after the read
        #expect(state.mayStore(CacheKey.message(7), readAt: 12))
        #expect(!state.mayStore(CacheKey.article(8), readAt: 9))    // older than what is remembered: unknown
    }

    @Test("prefetch on two threads fills the cache")
    func prefetch() throws {
        let store = try Store.memory()
        let made = try store.articles.createMany((0..<100).map { NewArticle(title: "t\($0)", content: String(repeating: "字", count: $0 + 1)) })
        let layout = try store.layout(width: 320)
        #expect(try layout.prefetch(made.map(\.id), threads: 2) == 100)
        #expect(layout.stats().entries == 100)
        let reference = try store.layout(width: 320)
        #expect(try layout.articleHeights(made.map(\.id)) == reference.articleHeights(made.map(\.id)))
    }

    @Test("row offsets agree with a walk over the heights")
    func rowOffsets() throws {
        let store = try Store.memory()
        let made = try store.articles.createMany((0..<50).map { NewArticle(title: "t", content: String(repeating: "word ", count: $0 * 7 + 1)) })
        let layout = try store.layout(width: 200)
        let ids = made.map(\.id)
        _ = try layout.articleHeights(ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        let rows = try layout.rows(ids)
        let heights = try (0..<ids.count).map { try rows.height(of: $0) }
        var top = 0.0
        for (row, height) in heights.enumerated() {
            #expect(try rows.offset(of: row) == top)
            #expect(try rows.row(at: top + height / 2) == row)
            top += height
        }
        #expect(try rows.totalHeight() == top)
        #expect(try rows.row(at: top) == nil)
        #expect(try rows.visible(offset: heights[0] - 1, height: heights[1] + 2) == 0..<3)
    }

    @Test("a bubble is the measured text plus the insets, right-aligned when sent by me")
    func bubbles() throws {
        let store = try Store.memory()
        let conversation = try store.conversations.create(title: "Alice")
        let mine = try store.messages.send("今天有空吗？", in: conversation.id)
        let theirs = try store.messages.receive("有的", in: conversation.id)
        let layout = try store.layout(width: 375)
        let style = layout.bubbleStyle
        let text = try measureText(mine.content, maxWidth: style.maxTextWidth, size: style.size)
        let bubble = try layout.bubble(mine.id)
        #expect(bubble.textWidth == Double(text.width) && bubble.height == Double(text.height) + style.insetTop + style.insetBottom)
        #expect(bubble.x + bubble.width == 375 - style.sideMargin && bubble.fromMe)
        #expect(try layout.bubble(theirs.id).x == style.sideMargin)
        try store.messages.delete(mine.id)
        let gone = try #require(throws: NotesError.self) { try layout.bubble(mine.id) }
        #expect(gone.kind == .notFound)
    }

    @Test("the keyboard and the search panel")
    func models() throws {
        var keyboard = KeyboardModel()
        try keyboard.show(keyboardHeight: 300)
        try keyboard.show(keyboardHeight: 300)
        #expect(keyboard.editorBottomInset == 305 && keyboard.chatOffset == -300)
        keyboard.hide()
        #expect(keyboard.editorBottomInset == 46 && keyboard.chatOffset == 0)
        var panel = SearchPanel()
        #expect(panel.topOffset == -50)
        try panel.drag(translation: -60)
        try panel.drag(translation: -91)  // the total since the drag began, not one more step
        #expect(panel.topOffset == -141)
        #expect(panel.endDrag() == .shown && panel.topOffset == -155)
        try panel.keyboardWillShow(height: 300)
        try panel.keyboardWillShow(height: 300)
        #expect(panel.topOffset == -455 && panel.maskCount == 1)
        try panel.drag(translation: 15)     // dragging dismisses the keyboard; the panel stays under the finger
        #expect(!panel.isKeyboardShown && panel.maskCount == 0 && panel.topOffset == -440)
        #expect(panel.endDrag() == .shown && panel.topOffset == -155)
        try panel.drag(translation: 15)
        #expect(panel.endDrag() == .hidden && panel.topOffset == -50)
    }

    @Test("events applied through apply(_:) move the models as their methods do")
    func appliedEvents() throws {
        var keyboard = KeyboardModel()
        try keyboard.apply(.show(keyboardHeight: 336))
        #expect(keyboard.editorBottomInset == 341 && keyboard.chatOffset == -336)
        try keyboard.apply(.hide)
        #expect(keyboard == KeyboardModel())
        let tooTall = try #require(throws: NotesError.self) { try keyboard.apply(.show(keyboardHeight: 1e9)) }
        #expect(tooTall.field == "keyboard_height" && !keyboard.isShown)
        var panel = SearchPanel()
        for event: SearchPanel.Event in [.drag(translation: -60), .drag(translation: -95), .endDrag,
                                         .keyboardWillShow(height: 336), .keyboardWillShow(height: 336)] {
            try panel.apply(event)
        }
        #expect(panel.state == .shown && panel.topOffset == -491 && panel.maskCount == 1)
        try panel.apply(.keyboardWillHide)
        #expect(panel == SearchPanel())
        try panel.apply(.show)
        try panel.apply(.hide)
        #expect(panel == SearchPanel())
        #expect(try SearchPanel(state: .shown).topOffset == SearchPanel.restingOffset(.shown))
    }

    @Test("a style's table lists every field once and keeps the fingerprints of earlier versions")
    func styleTables() throws {
        #expect(ArticleRowStyle().fingerprint == "9437c958909c93e1")
        #expect(BubbleStyle().fingerprint == "f1e31d863b0faa6a")
        #expect(Set(ArticleRowStyle.fields.map(\.name)).count == ArticleRowStyle.fields.count)
        #expect(Set(BubbleStyle.fields.map(\.name)).count == BubbleStyle.fields.count)
        // Every field takes part: changing any one changes the fingerprint.
        for field in ArticleRowStyle.fields {
            var style = ArticleRowStyle()
            field.set(field.rule == .font ? .font("DejaVu Sans") : .number(3), in: &style)
            #expect(style.fingerprint != ArticleRowStyle().fingerprint, "\(field.name)")
        }
        var style = BubbleStyle()
        BubbleStyle.fields.first { $0.name == "inset_side" }?.set(.number(.nan), in: &style)
        let error = try #require(throws: NotesError.self) { try style.validated() }
        #expect(error.field == "inset_side")
        var capped = BubbleStyle()
        capped.maxTextHeight = 999
        #expect(try capped.validated() == capped && capped.fingerprint != BubbleStyle().fingerprint)
    }
}
