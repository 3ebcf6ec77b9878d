/// A chat bubble's frame in its row, as the chat app computed it (see ``BubbleStyle``).
///
/// `x` is from the left edge of the layout; the bubble's top is the style's `rowMarginTop` below
/// the top of its row. The text sits `insetSide` inside the bubble (plus `tailMargin` on the left
/// when the tail is there, i.e. when not `fromMe`) and `insetTop` below its top.
public struct Bubble: Equatable, Sendable {
    public var x: Double
    public var width: Double
    public var height: Double
    public var textWidth: Double
    public var textHeight: Double
    public var fromMe: Bool
    public var rowHeight: Double
}

extension Layout {
    /// The bubble of message `id`: cached, or measured now and cached. `.notFound` for an unknown
    /// id. O(1) when cached.
    public func bubble(_ messageId: Int64) throws -> Bubble {
        try bubbles([messageId])[0]
    }

    /// The bubbles of many messages in one call, in the order of `ids`.
    public func bubbles(_ ids: [Int64]) throws -> [Bubble] {
        try entries(ids, kind: .message).map(bubble(of:))
    }

    /// The bubble a cache entry stands for.
    func bubble(of entry: HeightCache.Entry) -> Bubble {
        let style = bubbleStyle
        let width = Double(entry.first) + 2 * style.insetSide + style.tailMargin
        let textHeight = style.textHeight(measured: Int(entry.second))
        let height = textHeight + style.insetTop + style.insetBottom
        let x = entry.flag ? self.width - style.sideMargin - width : style.sideMargin
        return Bubble(x: x, width: width, height: height, textWidth: Double(entry.first), textHeight: textHeight,
                      fromMe: entry.flag, rowHeight: style.rowMarginTop + height + style.rowMarginBottom)
    }

    /// Measures a message's text at the bubble's text width limit.
    func measure(_ message: Message, with measurer: TextMeasurer) throws -> HeightCache.Entry {
        let text = try measurer.measure(message.content, maxWidth: bubbleStyle.textWidthLimit(width: width), font: bubbleStyle.fontSpec)
        return HeightCache.Entry(key: CacheKey.message(message.id), revision: 0, first: Int32(clamping: text.width),
                                 second: Int32(clamping: text.height), flag: message.fromMe)
    }

    /// Draws conversation `conversationId` into a PNG at `path` as the chat showed it: oldest at the
    /// top, each bubble at exactly its computed frame (right-aligned and green when sent by me,
    /// white on the left otherwise) with its text. When the whole history would be taller than
    /// ``maxPictureHeight``, draws the newest messages that fit. Measures (and caches) the bubbles
    /// not cached yet.
    ///
    /// `.notFound` for an unknown conversation, `.validation` for one without messages, `.storage`
    /// when the file cannot be written.
    @discardableResult
    public func renderConversation(_ conversationId: Int64, to path: String) throws -> Picture {
        try checkOpen()
        try checkPicturePath(path)
        var shown: [(Message, Bubble)] = []  // newest first
        var total = 0.0
        var cursor: String? = nil
        collect: repeat {
            let page = try store.messages.history(of: conversationId, limit: 500, before: cursor)
            let bubbles = try self.bubbles(page.items.map(\.id))
            for (message, bubble) in zip(page.items, bubbles).reversed() {
                if total + bubble.rowHeight > Double(Layout.maxPictureHeight) { break collect }
                shown.append((message, bubble))
                total += bubble.rowHeight
            }
            cursor = page.nextCursor
        } while cursor != nil
        guard !shown.isEmpty else {
            throw NotesError.validation("conversation_id", "conversation \(conversationId) has no messages to draw")
        }
        let canvas = try Canvas(width: width, height: total, background: Canvas.chatBackground)
        let measurer = try TextMeasurer.current()
        let style = bubbleStyle
        var y = 0.0
        for (message, bubble) in shown.reversed() {
            let top = y + style.rowMarginTop
            canvas.bubble(bubble.x, top, bubble.width, bubble.height, tail: style.tailMargin, tailOnRight: bubble.fromMe,
                          bubble.fromMe ? Canvas.bubbleMine : Canvas.bubbleTheirs)
            let textX = bubble.x + style.insetSide + (bubble.fromMe ? 0 : style.tailMargin)
            _ = try measurer.render(message.content, maxWidth: style.textWidthLimit(width: width), font: style.fontSpec,
                                    into: &canvas.text, x: pixel(textX), y: pixel(top + style.insetTop), clipHeight: style.maxTextHeight)
            y += bubble.rowHeight
        }
        canvas.paintText(Canvas.ink)
        try canvas.write(path)
        return Picture(path: path, width: canvas.width, height: canvas.height, rows: shown.count)
    }
}
