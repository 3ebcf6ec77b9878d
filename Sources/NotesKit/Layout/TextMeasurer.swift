import CPango
#if canImport(Glibc)
import Glibc
#endif

/// What Pango reports for a text laid out at a maximum width: pixel sizes as
/// `pango_layout_get_pixel_size` gives them (the logical extents, rounded out to whole pixels).
public struct TextMetrics: Equatable, Sendable {
    /// The width of the widest line, at most the maximum width (unless one glyph is wider).
    public var width: Int
    public var height: Int
    public var lineCount: Int
    /// Characters no pinned font can draw (shown as boxes). Reported, never hidden.
    public var unknownGlyphs: Int

    public init(width: Int, height: Int, lineCount: Int, unknownGlyphs: Int) {
        self.width = width
        self.height = height
        self.lineCount = lineCount
        self.unknownGlyphs = unknownGlyphs
    }
}

/// A font family (one of ``Fonts/families``) at a size in pixels.
public struct FontSpec: Hashable, Sendable {
    public var family: String
    public var size: Double

    /// The largest size accepted, in pixels.
    public static let maxSize = 1_000.0

    /// Checks the family (a `.font` error if it is not pinned) and the size (`.validation` on
    /// `field` unless finite and within 1...1000).
    public init(family: String, size: Double, field: String = "size") throws {
        try FontSpec.checkSize(size, field: field)
        self.family = try Fonts.family(family)
        self.size = size
    }

    static func checkSize(_ size: Double, field: String) throws {
        guard size.isFinite, size >= 1, size <= FontSpec.maxSize else {
            throw NotesError.validation(field, "\(field) must be a number of pixels between 1 and \(Int(FontSpec.maxSize)), got \(size)")
        }
    }
}

/// Measures `text` wrapped at `maxWidth` pixels (Pango, `PANGO_WRAP_WORD_CHAR`: at word
/// boundaries, inside a word only when it does not fit), with the pinned fonts at 72 dpi.
///
/// `text` must not contain NUL and is at most ``TextRules/maxContentLength`` code points;
/// `maxWidth` must be a finite number of pixels in 1...``TextMeasurer/maxWidth``. Costs about
/// 100 µs for 150 mixed CJK/Latin characters (O(n) in the text); the first call on a thread also
/// loads that thread's font map (a few milliseconds).
///
/// ```swift
/// let m = try measureText("今天天气真好", maxWidth: 100, size: 17)   // m.lineCount == 1
/// ```
public func measureText(_ text: String, maxWidth: Double, font: String = Fonts.cjkFamily, size: Double = 17) throws -> TextMetrics {
    try TextRules.checkText(text, field: "text", limit: TextRules.maxContentLength)
    try TextMeasurer.checkWidth(maxWidth, field: "max_width")
    let spec = try FontSpec(family: font, size: size)
    return try TextMeasurer.current().measure(text, maxWidth: maxWidth, font: spec)
}

/// One thread's Pango objects: an FT2 font map over the pinned fontconfig configuration, its
/// context and two reusable layouts (wrapping, and single-line for titles).
///
/// Pango font maps must not be shared between threads (two threads sharing one
/// `PangoFT2FontMap` crash on Pango 1.50), so each thread gets its own through ``current()``;
/// it is released when the thread exits. Not thread-safe by design: only its thread uses it.
final class TextMeasurer {
    /// The widest layout accepted, in pixels (Pango units must fit in 32 bits).
    static let maxWidth = 1_000_000.0

    private let fontMap: UnsafeMutablePointer<PangoFontMap>
    private let context: OpaquePointer
    private let wrapping: OpaquePointer
    private let singleLine: OpaquePointer
    /// Long texts' windows (see `measureInWindows`): on their own context, whose base direction is
    /// set to each window's paragraph direction.
    let windowContext: OpaquePointer
    let windowed: OpaquePointer
    private var descriptions: [FontSpec: OpaquePointer] = [:]

    private init(config: Fonts.Config) throws {
        guard let fontMap = pango_ft2_font_map_new() else { throw NotesError(.internalError, "Pango could not create a font map") }
        cpango_font_map_set_config(fontMap, config.pointer)
        cpango_ft2_font_map_set_resolution(fontMap, Fonts.dpi)
        guard let context = pango_font_map_create_context(fontMap) else {
            cpango_object_unref(fontMap)
            throw NotesError(.internalError, "Pango could not create a context")
        }
        pango_context_set_language(context, pango_language_from_string(Fonts.language))
        self.fontMap = fontMap
        self.context = context
        wrapping = pango_layout_new(context)
        pango_layout_set_wrap(wrapping, PANGO_WRAP_WORD_CHAR)
        singleLine = pango_layout_new(context)
        pango_layout_set_single_paragraph_mode(singleLine, 1)
        pango_layout_set_ellipsize(singleLine, PANGO_ELLIPSIZE_END)
        guard let windowContext = pango_font_map_create_context(fontMap) else {
            throw NotesError(.internalError, "Pango could not create a context")
        }
        pango_context_set_language(windowContext, pango_language_from_string(Fonts.language))
        self.windowContext = windowContext
        windowed = pango_layout_new(windowContext)
        pango_layout_set_wrap(windowed, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_auto_dir(windowed, 0)
    }

    deinit {
        for description in descriptions.values { pango_font_description_free(description) }
        cpango_object_unref(UnsafeMutableRawPointer(wrapping))
        cpango_object_unref(UnsafeMutableRawPointer(singleLine))
        cpango_object_unref(UnsafeMutableRawPointer(windowed))
        cpango_object_unref(UnsafeMutableRawPointer(windowContext))
        cpango_object_unref(UnsafeMutableRawPointer(context))
        cpango_object_unref(fontMap)
    }

    /// Lays out `text` wrapped at `maxWidth`, or, with `singleLine`, on one line ellipsized at
    /// `maxWidth` (line breaks shown as glyphs), and returns Pango's pixel metrics.
    /// A long text is laid out in windows (`TextMeasurer+Windows.swift`): the metrics a whole
    /// layout would have if Pango's sums did not overflow, in linear time.
    func measure(_ text: String, maxWidth: Double, font: FontSpec, singleLine: Bool = false) throws -> TextMetrics {
        if !singleLine && TextMeasurer.needsWindows(text, size: font.size) {
            return try measureInWindows(text, maxWidth: maxWidth, font: font)
        }
        let layout = try prepare(text, maxWidth: maxWidth, font: font, singleLine: singleLine)
        var width: Int32 = 0, height: Int32 = 0
        pango_layout_get_pixel_size(layout, &width, &height)
        return TextMetrics(width: Int(width), height: Int(height), lineCount: Int(pango_layout_get_line_count(layout)),
                           unknownGlyphs: Int(pango_layout_get_unknown_glyphs_count(layout)))
    }

    /// Draws `text`, laid out exactly as ``measure(_:maxWidth:font:singleLine:)`` lays it out,
    /// into an 8-bit coverage bitmap with its top-left corner at (`x`, `y`); returns its metrics.
    /// With `clipHeight`, only the lines that end within that height are drawn.
    func render(_ text: String, maxWidth: Double, font: FontSpec, singleLine: Bool = false,
                into bitmap: inout FT_Bitmap, x: Int32, y: Int32, clipHeight: Double? = nil) throws -> TextMetrics {
        let clip = clipHeight.map { Int64(($0 * Double(cpango_scale())).rounded(.down)) } ?? .max
        return try withUnsafeMutablePointer(to: &bitmap) { target in
            // A line at (lineX, baseline), ending at `bottom`, in Pango units from the text's corner.
            func draw(_ line: UnsafeMutablePointer<PangoLayoutLine>, _ lineX: Int64, _ baseline: Int64, _ bottom: Int64) {
                guard bottom <= clip else { return }
                pango_ft2_render_layout_line(target, line, x + Int32(clamping: (lineX + 512) >> 10), y + Int32(clamping: (baseline + 512) >> 10))
            }
            if !singleLine && TextMeasurer.needsWindows(text, size: font.size) {
                return try measureInWindows(text, maxWidth: maxWidth, font: font, visit: draw)
            }
            let metrics = try measure(text, maxWidth: maxWidth, font: font, singleLine: singleLine)
            let layout = singleLine ? self.singleLine : wrapping
            guard clipHeight != nil else {
                pango_ft2_render_layout(target, layout, x, y)
                return metrics
            }
            guard let iter = pango_layout_get_iter(layout) else { return metrics }
            defer { pango_layout_iter_free(iter) }
            repeat {
                var logical = PangoRectangle()
                pango_layout_iter_get_line_extents(iter, nil, &logical)
                if let line = pango_layout_iter_get_line_readonly(iter) {
                    draw(line, Int64(logical.x), Int64(pango_layout_iter_get_baseline(iter)), Int64(logical.y) + Int64(logical.height))
                }
            } while pango_layout_iter_next_line(iter) != 0
            return metrics
        }
    }

    private func prepare(_ text: String, maxWidth: Double, font: FontSpec, singleLine: Bool) throws -> OpaquePointer {
        let layout = singleLine ? self.singleLine : wrapping
        // A C string of `text` (it has no NUL: callers check), so an empty text has an address too.
        pango_layout_set_text(layout, text, Int32(text.utf8.count))
        pango_layout_set_font_description(layout, try description(font))
        pango_layout_set_width(layout, Int32((maxWidth * Double(cpango_scale())).rounded(.down)))
        return layout
    }

    func description(_ font: FontSpec) throws -> OpaquePointer {
        if let found = descriptions[font] { return found }
        guard let description = pango_font_description_new() else { throw NotesError(.internalError, "out of memory") }
        pango_font_description_set_family(description, font.family)
        pango_font_description_set_style(description, PANGO_STYLE_NORMAL)
        pango_font_description_set_weight(description, PANGO_WEIGHT_NORMAL)
        pango_font_description_set_variant(description, PANGO_VARIANT_NORMAL)
        pango_font_description_set_stretch(description, PANGO_STRETCH_NORMAL)
        pango_font_description_set_size(description, Int32((font.size * Double(cpango_scale())).rounded()))
        descriptions[font] = description
        return description
    }

    /// Refuses a width that is not a finite number of pixels in 1...maxWidth, naming `field`.
    static func checkWidth(_ width: Double, field: String) throws {
        guard width.isFinite, width >= 1, width <= maxWidth else {
            throw NotesError.validation(field, "\(field) must be a number of pixels between 1 and \(Int(maxWidth)), got \(width)")
        }
    }

    // MARK: - One per thread

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<TextMeasurer>.fromOpaque(pointer).release() }
        }
        return key
    }()

    /// This thread's measurer, made on first use.
    static func current() throws -> TextMeasurer {
        if let pointer = pthread_getspecific(key) { return Unmanaged<TextMeasurer>.fromOpaque(pointer).takeUnretainedValue() }
        let measurer = try TextMeasurer(config: Fonts.config())
        pthread_setspecific(key, Unmanaged.passRetained(measurer).toOpaque())
        return measurer
    }
}
