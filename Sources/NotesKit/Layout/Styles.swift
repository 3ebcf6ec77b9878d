/// The numbers of an article row in the notes list. Immutable; ``fingerprint`` identifies it in the
/// height cache.
///
/// A row is, top to bottom: `topPadding`, the title box (one line, ellipsized at the end, `titleLeft`
/// from the left and `titleRight` from the right; `titleHeight` tall, or as tall as its line when
/// that is nil), `titleSpacing`, the content view (`contentLeft` from the left, `contentRight` from
/// the right) holding the whole content wrapped at the view's width less `contentPadding` on each
/// side, with `contentInsetTop` above and `contentInsetBottom` below the text, then `bottomPadding`
/// and `extraHeight`; the separator, `separator` thick, is drawn over the row's bottom:
///
///     height = topPadding + (titleHeight ?? title.height) + titleSpacing
///            + contentInsetTop + content.height + contentInsetBottom + bottomPadding + extraHeight
///
/// The defaults are the notes app's own cell (MDSAritcleCell.xib, measured with
/// `systemLayoutSizeFittingSize` and then + 1): a title label of the system font at 14 in a box 21
/// tall, 8 from the top, 14 from the left and 4 from the right; directly under it a UITextView of
/// the system font at 13, 8 from the left and `width − 16` wide, with UIKit's text container insets
/// (8 top and bottom) and line fragment padding (5 on each side), so the text wraps at `width − 26`;
/// 5 from the bottom; a 0.5 separator; + 1. So a row is `8 + 21 + (text height at width − 26) + 16 +
/// 5 + 1`. Both fonts are WenQuanYi Micro Hei (the CJK font, which also covers Latin).
///
/// ``twoLabels`` is the style NotesKit used before it read the app's cell (two labels 8 from each
/// side, title 17 measured, content 15, 8 above, 4 between, 8 below, a 1-pixel separator).
public struct ArticleRowStyle: LayoutStyle {
    public var titleFont: String = Fonts.cjkFamily
    public var titleSize: Double = 14
    /// The title box's height; nil: the height of the measured title line.
    public var titleHeight: Double? = 21
    /// From the top of the row to the title box.
    public var topPadding: Double = 8
    public var titleLeft: Double = 14
    public var titleRight: Double = 4
    /// Between the title box and the content view.
    public var titleSpacing: Double = 0
    public var contentFont: String = Fonts.cjkFamily
    public var contentSize: Double = 13
    /// The content view's distance from the left and from the right of the row.
    public var contentLeft: Double = 8
    public var contentRight: Double = 8
    /// Inside the content view, above and below the text (UITextView's text container insets).
    public var contentInsetTop: Double = 8
    public var contentInsetBottom: Double = 8
    /// Inside the content view, on each side of the text (UITextView's line fragment padding).
    public var contentPadding: Double = 5
    /// From the content view to the bottom of the row (before ``extraHeight``).
    public var bottomPadding: Double = 5
    /// The thickness of the separator drawn over the bottom of the row (it adds no height).
    public var separator: Double = 0.5
    /// Added to the row's height (the app's `+ 1` after fitting the cell).
    public var extraHeight: Double = 1

    /// The notes app's cell (see above).
    public init() {}

    /// The style NotesKit used before it followed the app's cell: a measured title at 17 and the
    /// content at 15, both 8 from each side, 8 above, 4 between, 8 below, and a 1-pixel separator
    /// under each row: `8 + title + 4 + content at (width − 16) + 8 + 1`.
    public static let twoLabels: ArticleRowStyle = {
        var style = ArticleRowStyle()
        style.titleSize = 17
        style.titleHeight = nil
        style.titleLeft = 8
        style.titleRight = 8
        style.titleSpacing = 4
        style.contentSize = 15
        style.contentInsetTop = 0
        style.contentInsetBottom = 0
        style.contentPadding = 0
        style.bottomPadding = 8
        style.separator = 1
        return style
    }()

    /// Every field, in the order the fingerprint and the C ABI's JSON list them.
    public static let fields: [StyleField<ArticleRowStyle>] = [
        .font("title_font", \.titleFont), .number("title_size", \.titleSize, .fontSize),
        .optionalNumber("title_height", \.titleHeight, .length, absent: "measured"),
        .number("top_padding", \.topPadding), .number("title_left", \.titleLeft), .number("title_right", \.titleRight),
        .number("title_spacing", \.titleSpacing),
        .font("content_font", \.contentFont), .number("content_size", \.contentSize, .fontSize),
        .number("content_left", \.contentLeft), .number("content_right", \.contentRight),
        .number("content_inset_top", \.contentInsetTop), .number("content_inset_bottom", \.contentInsetBottom),
        .number("content_padding", \.contentPadding), .number("bottom_padding", \.bottomPadding),
        .number("separator", \.separator), .number("extra_height", \.extraHeight),
    ]
    public static let fingerprintName = "article_row/2"

    var titleFontSpec: FontSpec { FontSpec(checkedFamily: titleFont, size: titleSize) }
    var contentFontSpec: FontSpec { FontSpec(checkedFamily: contentFont, size: contentSize) }

    /// The narrowest layout width this style can lay out (the title and the text need at least 1 pixel).
    var minimumWidth: Double { max(titleLeft + titleRight, contentLeft + contentRight + 2 * contentPadding) + 1 }

    /// The width the title is ellipsized at in a row `width` wide.
    func titleWidth(_ width: Double) -> Double { width - titleLeft - titleRight }
    /// The content view's width in a row `width` wide.
    func contentViewWidth(_ width: Double) -> Double { width - contentLeft - contentRight }
    /// The width the content wraps at in a row `width` wide.
    func contentTextWidth(_ width: Double) -> Double { contentViewWidth(width) - 2 * contentPadding }

    /// The title box's height for a measured title line of `titleHeight` pixels.
    func titleBoxHeight(measured titleHeight: Int) -> Double { self.titleHeight ?? Double(titleHeight) }

    /// The row height for a title and a content of these measured heights.
    func rowHeight(titleHeight: Int, contentHeight: Int) -> Double {
        topPadding + titleBoxHeight(measured: titleHeight) + titleSpacing + contentInsetTop + Double(contentHeight)
            + contentInsetBottom + bottomPadding + extraHeight
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
/// `maxTextHeight` caps the text's height (nil, the default: no cap). The chat demo asked UIKit for
/// the label's text rect within `MAX_WIDTH_OF_TEXT × 999`, so its texts were at most 999 tall:
/// `BubbleStyle(maxTextHeight: 999)` reproduces it (the lines past the cap are not drawn).
///
/// Defaults (NotesKit's own: the chat demo's text gives no numbers but the 999 cap): 16-pixel text at most 240 wide; the label inset 10 from the top
/// and bottom of the bubble image and 12 from its sides, plus 6 for the tail; bubbles 10 from the
/// screen edge and rows 5 apart above and below.
public struct BubbleStyle: LayoutStyle {
    public var font: String = Fonts.cjkFamily
    public var size: Double = 16
    public var maxTextWidth: Double = 240
    /// The tallest the text may be (taller texts are cut to it); nil: no cap.
    public var maxTextHeight: Double? = nil
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

    /// Every field, in the order the fingerprint and the C ABI's JSON list them.
    public static let fields: [StyleField<BubbleStyle>] = [
        .font("font", \.font), .number("size", \.size, .fontSize),
        .number("max_text_width", \.maxTextWidth, .width),
        .optionalNumber("max_text_height", \.maxTextHeight, .width, absent: "none"),
        .number("inset_top", \.insetTop), .number("inset_bottom", \.insetBottom), .number("inset_side", \.insetSide),
        .number("tail_margin", \.tailMargin), .number("side_margin", \.sideMargin),
        .number("row_margin_top", \.rowMarginTop), .number("row_margin_bottom", \.rowMarginBottom),
    ]
    public static let fingerprintName = "bubble/2"

    var fontSpec: FontSpec { FontSpec(checkedFamily: font, size: size) }

    /// The widest the text may be in a layout `width` wide.
    func textWidthLimit(width: Double) -> Double {
        min(maxTextWidth, width - 2 * sideMargin - 2 * insetSide - tailMargin)
    }

    /// The height of a text measured `measured` pixels tall, under ``maxTextHeight``.
    func textHeight(measured: Int) -> Double {
        maxTextHeight.map { min($0, Double(measured)) } ?? Double(measured)
    }

    /// The narrowest layout width this style can lay out (the text needs at least 1 pixel).
    var minimumWidth: Double { 2 * sideMargin + 2 * insetSide + tailMargin + 1 }
}

/// A style of the layout: its numbers and fonts, each listed once in ``fields``, the one table that
/// drives its validation, its ``fingerprint`` and (at the C ABI) its encoding and decoding.
public protocol LayoutStyle: Hashable, Sendable {
    /// A style with the defaults.
    init()
    /// Every field, in the order the fingerprint and the C ABI's JSON list them.
    static var fields: [StyleField<Self>] { get }
    /// The name (and version) the fingerprint starts with.
    static var fingerprintName: String { get }
}

extension LayoutStyle {
    /// The style with its fonts checked (`.font`) and every number finite and within its range
    /// (`.validation` naming the field as ``StyleField/name`` spells it).
    public func validated() throws -> Self {
        var style = self
        for field in Self.fields { try field.set(field.checked(field.value(of: self)), in: &style) }
        return style
    }

    /// A stable identity of the style's numbers: 16 hex digits, the same in every process and
    /// version of NotesKit for equal styles.
    public var fingerprint: String {
        Fingerprint.of(Self.fingerprintName, Self.fields.map { ($0.name, $0.fingerprintText(of: self)) })
    }
}

/// One field of a style: its name (as the fingerprint, the C ABI and Python spell it), where the
/// style keeps it and the rule its value keeps.
public struct StyleField<Style>: Sendable {
    /// A field's value: a font family, a number of pixels, or none (an optional number unset).
    public enum Value: Equatable, Sendable {
        case font(String), number(Double), none
    }

    /// What a number must be.
    public enum Rule: Sendable {
        /// A pinned font family.
        case font
        /// A font size: 1...``FontSpec/maxSize``.
        case fontSize
        /// A padding, margin or spacing: 0...10 000.
        case length
        /// A width: 1...``TextMeasurer/maxWidth``.
        case width
    }

    public let name: String
    public let rule: Rule
    /// For an optional number, what the fingerprint writes when it is unset; nil: never unset.
    public let absent: String?
    private let get: @Sendable (Style) -> Value
    private let put: @Sendable (inout Style, Value) -> Void

    /// A font family.
    public static func font(_ name: String, _ path: WritableKeyPath<Style, String> & Sendable) -> StyleField {
        StyleField(name: name, rule: .font, absent: nil, get: { .font($0[keyPath: path]) },
                   put: { if case let .font(family) = $1 { $0[keyPath: path] = family } })
    }

    /// A number (a length unless `rule` says otherwise).
    public static func number(_ name: String, _ path: WritableKeyPath<Style, Double> & Sendable, _ rule: Rule = .length) -> StyleField {
        StyleField(name: name, rule: rule, absent: nil, get: { .number($0[keyPath: path]) },
                   put: { if case let .number(number) = $1 { $0[keyPath: path] = number } })
    }

    /// A number that may be unset (nil), written `absent` in the fingerprint.
    public static func optionalNumber(_ name: String, _ path: WritableKeyPath<Style, Double?> & Sendable, _ rule: Rule,
                                      absent: String) -> StyleField {
        StyleField(name: name, rule: rule, absent: absent, get: { $0[keyPath: path].map(Value.number) ?? .none },
                   put: {
                       switch $1 {
                       case let .number(number): $0[keyPath: path] = number
                       case .none: $0[keyPath: path] = nil
                       case .font: break
                       }
                   })
    }

    public func value(of style: Style) -> Value { get(style) }

    /// Sets the field in `style` (a value of another type than the field's is ignored).
    public func set(_ value: Value, in style: inout Style) { put(&style, value) }

    /// `value` checked against ``rule``: a pinned family (in its canonical spelling) or a number
    /// in range. `.font` or `.validation` naming the field otherwise.
    func checked(_ value: Value) throws -> Value {
        switch (value, rule) {
        case let (.font(family), _): return .font(try Fonts.family(family))
        case let (.number(number), .fontSize): try FontSpec.checkSize(number, field: name)
        case let (.number(number), .width): try TextMeasurer.checkWidth(number, field: name)
        case let (.number(number), _):
            guard number.isFinite, number >= 0, number <= maxStyleLength else {
                throw NotesError.validation(name, "\(name) must be a number of pixels between 0 and \(Int(maxStyleLength)), got \(number)")
            }
        case (.none, _): break
        }
        return value
    }

    func fingerprintText(of style: Style) -> String {
        switch get(style) {
        case let .font(family): family
        case let .number(number): "\(number)"
        case .none: absent ?? "none"
        }
    }
}

/// The largest padding, margin or spacing a style accepts, in pixels.
let maxStyleLength = 10_000.0

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
