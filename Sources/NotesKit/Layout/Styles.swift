/// The numbers of an article row in the notes list. Immutable; ``fingerprint`` identifies it in the
/// height cache.
///
/// A row is, top to bottom: `topPadding`, the title on one line (ellipsized), `titleSpacing`, the
/// whole content wrapped at `width − 2 × horizontalPadding`, `bottomPadding`, then the separator:
///
///     height = topPadding + title.height + titleSpacing + content.height + bottomPadding + separator
///
/// Defaults, from the notes app: the list inset its labels by 8 on each side (content wrapped at
/// `width − 16`) and drew a 1-pixel separator under each row; the title used UIKit's default label
/// font size (17) and the body a size smaller (15, the size iOS uses for list previews); 8 above
/// and below the labels and 4 between them. Both labels use WenQuanYi Micro Hei (the CJK font,
/// which also covers Latin).
public struct ArticleRowStyle: Equatable, Hashable, Sendable {
    public var titleFont: String = Fonts.cjkFamily
    public var titleSize: Double = 17
    public var contentFont: String = Fonts.cjkFamily
    public var contentSize: Double = 15
    /// Inset of both labels from each side of the row; the content wraps at `width − 2 ×` this.
    public var horizontalPadding: Double = 8
    public var topPadding: Double = 8
    /// Between the title and the content.
    public var titleSpacing: Double = 4
    public var bottomPadding: Double = 8
    /// The separator line under each row.
    public var separator: Double = 1

    public init() {}

    /// The style with its fonts checked (`.font`) and every number finite, within its range
    /// (`.validation` naming the field in snake case, as the C ABI and Python spell it).
    public func validated() throws -> ArticleRowStyle {
        var style = self
        style.titleFont = try FontSpec(family: titleFont, size: titleSize, field: "title_size").family
        style.contentFont = try FontSpec(family: contentFont, size: contentSize, field: "content_size").family
        try checkLength(horizontalPadding, "horizontal_padding")
        try checkLength(topPadding, "top_padding")
        try checkLength(titleSpacing, "title_spacing")
        try checkLength(bottomPadding, "bottom_padding")
        try checkLength(separator, "separator")
        return style
    }

    var titleFontSpec: FontSpec { FontSpec(checkedFamily: titleFont, size: titleSize) }
    var contentFontSpec: FontSpec { FontSpec(checkedFamily: contentFont, size: contentSize) }

    /// The narrowest layout width this style can lay out (the labels need at least 1 pixel).
    var minimumWidth: Double { 2 * horizontalPadding + 1 }

    /// The row height for a title and a content of these measured heights.
    func rowHeight(titleHeight: Int, contentHeight: Int) -> Double {
        topPadding + Double(titleHeight) + titleSpacing + Double(contentHeight) + bottomPadding + separator
    }

    /// A stable identity of the style's numbers: 16 hex digits, the same in every process and
    /// version of NotesKit for equal styles.
    public var fingerprint: String {
        Fingerprint.of("article_row/1", [
            ("title_font", titleFont), ("title_size", "\(titleSize)"), ("content_font", contentFont),
            ("content_size", "\(contentSize)"), ("horizontal_padding", "\(horizontalPadding)"),
            ("top_padding", "\(topPadding)"), ("title_spacing", "\(titleSpacing)"),
            ("bottom_padding", "\(bottomPadding)"), ("separator", "\(separator)"),
        ])
    }
}

/// The numbers of a chat bubble. Immutable; ``fingerprint`` identifies it in the height cache.
///
/// The text wraps at `min(maxTextWidth, width − 2 × sideMargin − 2 × insetSide − tailMargin)`;
/// the bubble is the text rect plus the label insets (`insetSide` on both sides, `tailMargin` more
/// on the tail's side, `insetTop`/`insetBottom`); it sits `sideMargin` from the right edge when
/// sent by me, from the left edge otherwise; the row adds `rowMarginTop` and `rowMarginBottom`:
///
///     bubble.width  = text.width + 2 × insetSide + tailMargin
///     bubble.height = text.height + insetTop + insetBottom
///     bubble.x      = fromMe ? width − sideMargin − bubble.width : sideMargin
///     rowHeight     = rowMarginTop + bubble.height + rowMarginBottom
///
/// Defaults, from the chat app: 16-pixel text at most 240 wide; the label inset 10 from the top
/// and bottom of the bubble image and 12 from its sides, plus 6 for the tail; bubbles 10 from the
/// screen edge and rows 5 apart above and below.
public struct BubbleStyle: Equatable, Hashable, Sendable {
    public var font: String = Fonts.cjkFamily
    public var size: Double = 16
    public var maxTextWidth: Double = 240
    public var insetTop: Double = 10
    public var insetBottom: Double = 10
    /// Between the text and each side of the bubble.
    public var insetSide: Double = 12
    /// Extra room on the tail's side of the bubble (right when sent by me, left otherwise).
    public var tailMargin: Double = 6
    /// Between the bubble and the edge of the screen.
    public var sideMargin: Double = 10
    public var rowMarginTop: Double = 5
    public var rowMarginBottom: Double = 5

    public init() {}

    /// The style with its font checked (`.font`) and every number finite and within its range
    /// (`.validation` naming the field in snake case).
    public func validated() throws -> BubbleStyle {
        var style = self
        style.font = try FontSpec(family: font, size: size, field: "size").family
        try TextMeasurer.checkWidth(maxTextWidth, field: "max_text_width")
        try checkLength(insetTop, "inset_top")
        try checkLength(insetBottom, "inset_bottom")
        try checkLength(insetSide, "inset_side")
        try checkLength(tailMargin, "tail_margin")
        try checkLength(sideMargin, "side_margin")
        try checkLength(rowMarginTop, "row_margin_top")
        try checkLength(rowMarginBottom, "row_margin_bottom")
        return style
    }

    var fontSpec: FontSpec { FontSpec(checkedFamily: font, size: size) }

    /// The widest the text may be in a layout `width` wide.
    func textWidthLimit(width: Double) -> Double {
        min(maxTextWidth, width - 2 * sideMargin - 2 * insetSide - tailMargin)
    }

    /// The narrowest layout width this style can lay out (the text needs at least 1 pixel).
    var minimumWidth: Double { 2 * sideMargin + 2 * insetSide + tailMargin + 1 }

    public var fingerprint: String {
        Fingerprint.of("bubble/1", [
            ("font", font), ("size", "\(size)"), ("max_text_width", "\(maxTextWidth)"),
            ("inset_top", "\(insetTop)"), ("inset_bottom", "\(insetBottom)"), ("inset_side", "\(insetSide)"),
            ("tail_margin", "\(tailMargin)"), ("side_margin", "\(sideMargin)"),
            ("row_margin_top", "\(rowMarginTop)"), ("row_margin_bottom", "\(rowMarginBottom)"),
        ])
    }
}

/// The largest padding, margin or spacing a style accepts, in pixels.
let maxStyleLength = 10_000.0

private func checkLength(_ value: Double, _ field: String) throws {
    guard value.isFinite, value >= 0, value <= maxStyleLength else {
        throw NotesError.validation(field, "\(field) must be a number of pixels between 0 and \(Int(maxStyleLength)), got \(value)")
    }
}

extension FontSpec {
    /// A spec from a style that was validated already.
    init(checkedFamily family: String, size: Double) {
        self.family = family
        self.size = size
    }
}

/// FNV-1a, 64 bits, over `name` and `key=value` fields: stable across processes and platforms
/// (Swift's `Hasher` is seeded per process, so it cannot be used).
enum Fingerprint {
    static func of(_ name: String, _ fields: [(String, String)]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            hash ^= 0x1F
            hash = hash &* 0x0000_0100_0000_01b3
        }
        add(name)
        for (key, value) in fields { add(key); add(value) }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
