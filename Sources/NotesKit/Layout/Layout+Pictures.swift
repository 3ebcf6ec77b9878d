import CPango

/// A PNG written by ``Layout/renderArticles(_:to:)`` or ``Layout/renderConversation(_:to:)``.
public struct Picture: Equatable, Sendable {
    public var path: String
    public var width: Int
    public var height: Int
    /// How many rows it draws.
    public var rows: Int
}

extension Layout {
    /// The tallest picture drawn, in pixels (cairo's image surfaces stop at 32767).
    public static let maxPictureHeight = 32_000

    /// Draws the rows of `ids`, top to bottom, into a PNG at `path`, exactly at the frames the
    /// layout computes: each row's title box and content view are tinted (blue and yellow) behind
    /// their text (the title centred in its box, as a label centres it; the content inside the view's
    /// insets and padding), and the separator is drawn over the row's bottom. The text is rasterized
    /// from the very Pango layouts that were measured. Measures (and caches) rows not cached yet.
    ///
    /// `.validation` for an empty list or a picture taller than ``maxPictureHeight``; `.storage`
    /// when the file cannot be written.
    @discardableResult
    public func renderArticles(_ ids: [Int64], to path: String) throws -> Picture {
        try checkOpen()
        try checkPicturePath(path)
        guard !ids.isEmpty else { throw NotesError.validation("ids", "there are no rows to draw: ids is empty") }
        let heights = try articleHeights(ids)
        let canvas = try Canvas(width: width, height: heights.reduce(0, +))
        let articles = try readArticles(ids)
        let measurer = try TextMeasurer.current()
        let style = articleStyle
        var y = 0.0
        for (article, rowHeight) in zip(articles, heights) {
            let titleTop = y + style.topPadding
            let titleLine = try measurer.measure(article.title, maxWidth: style.titleWidth(width), font: style.titleFontSpec, singleLine: true)
            let titleBox = style.titleBoxHeight(measured: titleLine.height)
            canvas.fill(style.titleLeft, titleTop, style.titleWidth(width), titleBox, Canvas.titleTint)
            _ = try measurer.render(article.title, maxWidth: style.titleWidth(width), font: style.titleFontSpec, singleLine: true,
                                    into: &canvas.text, x: pixel(style.titleLeft),
                                    y: pixel(titleTop + (titleBox - Double(titleLine.height)) / 2))
            let viewTop = titleTop + titleBox + style.titleSpacing
            let content = try measurer.render(article.content, maxWidth: style.contentTextWidth(width), font: style.contentFontSpec,
                                              into: &canvas.text, x: pixel(style.contentLeft + style.contentPadding),
                                              y: pixel(viewTop + style.contentInsetTop))
            canvas.fill(style.contentLeft, viewTop, style.contentViewWidth(width),
                        style.contentInsetTop + Double(content.height) + style.contentInsetBottom, Canvas.contentTint)
            canvas.fill(0, y + rowHeight - style.separator, width, style.separator, Canvas.separator)
            y += rowHeight
        }
        canvas.paintText(Canvas.ink)
        try canvas.write(path)
        return Picture(path: path, width: canvas.width, height: canvas.height, rows: ids.count)
    }

    func checkPicturePath(_ path: String) throws {
        guard !path.isEmpty else { throw NotesError.validation("path", "path is empty") }
        guard !path.utf8.contains(0) else { throw NotesError.validation("path", "path contains a NUL character") }
    }

    func pixel(_ value: Double) -> Int32 { Int32(clamping: Int(value.rounded())) }
}

/// A white picture being drawn with cairo, with an 8-bit coverage layer that Pango renders text
/// into and that is painted over it at the end.
final class Canvas {
    typealias Color = (Double, Double, Double)
    static let background: Color = (1, 1, 1)
    static let titleTint: Color = (0.91, 0.94, 1.0)
    static let contentTint: Color = (1.0, 0.97, 0.88)
    static let separator: Color = (0.82, 0.82, 0.84)
    static let ink: Color = (0.1, 0.1, 0.1)
    static let chatBackground: Color = (0.93, 0.93, 0.93)
    static let bubbleMine: Color = (0.584, 0.925, 0.412)
    static let bubbleTheirs: Color = (1, 1, 1)

    let width: Int
    let height: Int
    private let surface: OpaquePointer
    private let cairo: OpaquePointer
    private let coverage: OpaquePointer
    /// Pango's view of `coverage`'s pixels.
    var text: FT_Bitmap

    init(width: Double, height: Double, background: Color = Canvas.background) throws {
        self.width = Int(width.rounded(.up))
        self.height = Int(height.rounded(.up))
        guard self.height <= Layout.maxPictureHeight else {
            throw NotesError.validation("ids", "the picture would be \(self.height) pixels tall, more than the \(Layout.maxPictureHeight) a picture can be: draw fewer rows")
        }
        guard self.width > 0, self.height > 0 else { throw NotesError.validation("ids", "the picture would be empty") }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(self.width), Int32(self.height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw NotesError(.internalError, "cairo could not make a \(self.width)×\(self.height) picture (out of memory?)")
        }
        guard let coverage = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(self.width), Int32(self.height)),
              cairo_surface_status(coverage) == CAIRO_STATUS_SUCCESS, let pixels = cairo_image_surface_get_data(coverage) else {
            cairo_surface_destroy(surface)
            throw NotesError(.internalError, "cairo could not make a \(self.width)×\(self.height) text layer (out of memory?)")
        }
        guard let cairo = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            cairo_surface_destroy(coverage)
            throw NotesError(.internalError, "cairo could not draw (out of memory?)")
        }
        self.surface = surface
        self.coverage = coverage
        self.cairo = cairo
        cairo_surface_flush(coverage)
        text = FT_Bitmap(rows: UInt32(self.height), width: UInt32(self.width), pitch: cairo_image_surface_get_stride(coverage),
                         buffer: pixels, num_grays: 256, pixel_mode: UInt8(FT_PIXEL_MODE_GRAY.rawValue), palette_mode: 0, palette: nil)
        fill(0, 0, Double(self.width), Double(self.height), background)
    }

    deinit {
        cairo_destroy(cairo)
        cairo_surface_destroy(coverage)
        cairo_surface_destroy(surface)
    }

    func fill(_ x: Double, _ y: Double, _ w: Double, _ h: Double, _ color: Color) {
        cairo_set_source_rgb(cairo, color.0, color.1, color.2)
        cairo_rectangle(cairo, x, y, w, h)
        cairo_fill(cairo)
    }

    /// A rounded rectangle, with a small tail in `tail` pixels on the left or right side.
    func bubble(_ x: Double, _ y: Double, _ w: Double, _ h: Double, tail: Double, tailOnRight: Bool, _ color: Color) {
        let bodyX = tailOnRight ? x : x + tail
        let bodyW = w - tail
        let r = min(6, bodyW / 2, h / 2)
        cairo_set_source_rgb(cairo, color.0, color.1, color.2)
        cairo_new_sub_path(cairo)
        cairo_arc(cairo, bodyX + bodyW - r, y + r, r, -Double.pi / 2, 0)
        cairo_arc(cairo, bodyX + bodyW - r, y + h - r, r, 0, Double.pi / 2)
        cairo_arc(cairo, bodyX + r, y + h - r, r, Double.pi / 2, Double.pi)
        cairo_arc(cairo, bodyX + r, y + r, r, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(cairo)
        cairo_fill(cairo)
        guard tail > 0 else { return }
        let tipY = y + min(h / 2, 18)
        let edge = tailOnRight ? bodyX + bodyW : bodyX
        let tip = tailOnRight ? x + w : x
        cairo_move_to(cairo, edge, tipY - min(tail, 6))
        cairo_line_to(cairo, tip, tipY)
        cairo_line_to(cairo, edge, tipY + min(tail, 6))
        cairo_close_path(cairo)
        cairo_fill(cairo)
    }

    /// Paints the text layer in `color`.
    func paintText(_ color: Color) {
        cairo_surface_mark_dirty(coverage)
        cairo_set_source_rgb(cairo, color.0, color.1, color.2)
        cairo_mask_surface(cairo, coverage, 0, 0)
    }

    func write(_ path: String) throws {
        cairo_surface_flush(surface)
        let status = cairo_surface_write_to_png(surface, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw NotesError(.storage, "cannot write the picture to \(path): \(String(cString: cairo_status_to_string(status)))")
        }
    }
}
