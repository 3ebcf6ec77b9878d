import CPango

/// Long texts, measured in windows so that every text the store accepts gets the answer an
/// unbounded Pango would give, in time linear in its length.
///
/// Pango 1.50 cannot lay out long texts itself: it adds the widths of an item's glyphs in 32-bit
/// Pango units (1/1024 px), so once a run of text is wider than 2³¹ units (about 131 000 CJK
/// characters at 16 px) the sum wraps around and the text "fits" on one line of width 0; and for
/// every line it breaks off an item it walks the whole rest of that item (`process_item` sums the
/// remaining log widths and, with no break opportunity, scans every remaining character twice), so
/// a long run costs O(n² / chars per line).
///
/// Pango's line breaker is greedy and local: a line's end depends on the text from its start to a
/// few characters past its end (it stops looking 3 average character widths beyond the line's
/// width; break opportunities and shaping depend on neighbouring characters only). So a long text
/// is laid out in windows of a few lines: each window starts at a line start, is laid out by Pango,
/// and its lines are kept up to the last one that starts at least ``margin`` code points before the
/// window's end and is followed by one more whole line (its text and the context Pango looks at
/// after it are all inside the window); the next window
/// starts where the first line not kept starts. A window that keeps no line is doubled. A window
/// never spans paragraphs of different base directions, and it is given its paragraph's direction
/// as Pango resolves it for the whole text (the first strong character of the paragraph, else the
/// previous paragraph's direction, else the first strong character of the text), so right-to-left
/// lines are placed where the whole layout would place them. The lines' logical rectangles are
/// combined exactly as `pango_layout_get_extents` combines them, in 64-bit Pango units, and turned
/// into pixels once, as `pango_layout_get_pixel_size` does.
///
/// Texts Pango can do (at most ``wholeLimit`` code points, and short enough at their size that no
/// sum can pass 2³¹) are laid out whole, so their answer is Pango's, bit for bit.
extension TextMeasurer {
    /// Texts up to this many code points are laid out by Pango in one piece (fewer at large sizes).
    static let wholeLimit = 3_000
    /// Code points of context kept after the last line a window keeps.
    static let margin = 32
    /// Lines a window aims at (besides its margin).
    static let windowLines = 6

    /// Whether `text` is laid out in windows: longer than ``wholeLimit`` code points, or long
    /// enough at `size` that 8 em per character would pass 2³¹ Pango units.
    static func needsWindows(_ text: String, size: Double) -> Bool {
        let bytes = text.utf8.count
        let limit = min(wholeLimit, Int((Double(Int32.max) / (8 * 1024 * size)).rounded(.down)))
        if bytes <= limit { return false }
        return text.unicodeScalars.count > limit
    }

    /// Lays out `text` wrapped at `maxWidth` in windows (see above) and returns the metrics the
    /// whole layout has; `visit` gets each line with its origin (x, baseline) and its bottom, in Pango
    /// units from the text's top-left corner.
    func measureInWindows(_ text: String, maxWidth: Double, font: FontSpec,
                          visit: ((UnsafeMutablePointer<PangoLayoutLine>, Int64, Int64, Int64) -> Void)? = nil) throws -> TextMetrics {
        let layout = windowed
        pango_layout_set_font_description(layout, try description(font))
        let layoutWidth = Int32((maxWidth * Double(cpango_scale())).rounded(.down))
        pango_layout_set_width(layout, layoutWidth)
        var bytes = Array(text.utf8)
        let n = bytes.count
        bytes.append(0)
        return bytes.withUnsafeBufferPointer { buffer -> TextMetrics in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var top: Int64 = 0, minX = Int64.max, maxX = Int64.min
            var lineCount = 0, unknown = 0
            var window = 512
            for run in TextMeasurer.directionRuns(base, n) {
                pango_context_set_base_dir(windowContext, run.direction)
                let rightToLeft = run.direction == PANGO_DIRECTION_RTL
                var start = run.start
                while start < run.end {
                    let end = TextMeasurer.advance(buffer, from: start, codePoints: window, limit: run.end)
                    pango_layout_set_text(layout, base + start, Int32(end - start))
                    // Which lines to keep, and where the next window starts.
                    var keep: Int
                    var next: Int
                    let lines = pango_layout_get_lines_readonly(layout)
                    if end == run.end {
                        keep = Int(pango_layout_get_line_count(layout)) - (run.endsWithDelimiter ? 1 : 0)
                        next = run.end
                    } else {
                        let limit = TextMeasurer.retreat(buffer, from: end, codePoints: TextMeasurer.margin, floor: start)
                        // Keep up to the last line starting `margin` before the end that is
                        // followed by one more whole line in the window.
                        var starts: [Int] = []
                        var node = lines
                        while let current = node, let line = cpango_lines_line(current) {
                            let lineStart = start + Int(line.pointee.start_index)
                            if lineStart > limit { break }
                            starts.append(lineStart)
                            node = current.pointee.next
                        }
                        keep = min(starts.count - 1, Int(pango_layout_get_line_count(layout)) - 2)
                        next = keep > 0 ? starts[keep] : start
                        if keep <= 0 {  // no line ends well inside the window: a bigger one
                            window *= 2
                            continue
                        }
                    }
                    var node = lines, kept = 0
                    while let current = node, kept < keep {
                        guard let line = cpango_lines_line(current) else { break }
                        var logical = PangoRectangle()
                        pango_layout_line_get_extents(line, nil, &logical)
                        // get_x_offset: a right-to-left paragraph is aligned right (auto_dir flips LEFT).
                        let x = (rightToLeft ? Int64(layoutWidth) - Int64(logical.width) : 0) + Int64(logical.x)
                        minX = min(minX, x)
                        maxX = max(maxX, x + Int64(logical.width))
                        visit?(line, x, top - Int64(logical.y), top + Int64(logical.height))
                        top += Int64(logical.height)
                        unknown += Int(cpango_line_unknown_glyphs(line))
                        lineCount += 1
                        kept += 1
                        node = current.pointee.next
                    }
                    if end != run.end {
                        let chars = UTF8.codePoints(in: UnsafeBufferPointer(rebasing: buffer[start..<next]))
                        window = max(128, min(1 << 16, chars * TextMeasurer.windowLines / keep + TextMeasurer.margin))
                    }
                    start = next
                }
            }
            if lineCount == 0 { minX = 0; maxX = 0 }
            // pango_extents_to_pixels (inclusive), as pango_layout_get_pixel_size does; y is 0.
            let x = floorDiv(minX, 1024)
            let right = floorDiv(maxX + 1023, 1024)
            return TextMetrics(width: Int(right - x), height: Int(floorDiv(top + 1023, 1024)), lineCount: lineCount,
                               unknownGlyphs: unknown)
        }
    }

    /// The text's paragraphs (as `pango_layout_check_lines` splits them) with the base direction
    /// Pango gives each, grouped into runs of one direction. A run that is not the last ends with
    /// its paragraph delimiter.
    static func directionRuns(_ text: UnsafePointer<CChar>, _ n: Int) -> [(start: Int, end: Int, direction: PangoDirection, endsWithDelimiter: Bool)] {
        var paragraphs: [(start: Int, next: Int, direction: PangoDirection)] = []
        var start = 0
        var firstStrong = PANGO_DIRECTION_NEUTRAL
        while true {
            var delimiter: Int32 = 0, next: Int32 = 0
            pango_find_paragraph_boundary(text + start, Int32(n - start), &delimiter, &next)
            let direction = cpango_find_base_dir(text + start, delimiter)
            if firstStrong == PANGO_DIRECTION_NEUTRAL { firstStrong = direction }
            paragraphs.append((start, start + Int(next), direction))
            if start + Int(delimiter) == n { break }
            start += Int(next)
        }
        var previous = firstStrong == PANGO_DIRECTION_NEUTRAL ? PANGO_DIRECTION_WEAK_LTR : firstStrong
        var runs: [(start: Int, end: Int, direction: PangoDirection, endsWithDelimiter: Bool)] = []
        for paragraph in paragraphs {
            let direction = paragraph.direction == PANGO_DIRECTION_NEUTRAL ? previous : paragraph.direction
            previous = direction
            if let last = runs.last, last.direction == direction {
                runs[runs.count - 1].end = paragraph.next
            } else {
                runs.append((paragraph.start, paragraph.next, direction, true))
            }
        }
        runs[runs.count - 1].end = n
        runs[runs.count - 1].endsWithDelimiter = false
        return runs
    }

    /// The byte offset `codePoints` code points after `offset` (at most `limit`).
    static func advance(_ text: UnsafeBufferPointer<UInt8>, from offset: Int, codePoints: Int, limit: Int) -> Int {
        var i = offset, count = 0
        while i < limit {
            if text[i] & 0xC0 != 0x80 {
                if count == codePoints { return i }
                count += 1
            }
            i += 1
        }
        return limit
    }

    /// The byte offset `codePoints` code points before `offset` (at least `floor`).
    static func retreat(_ text: UnsafeBufferPointer<UInt8>, from offset: Int, codePoints: Int, floor: Int) -> Int {
        var i = offset, count = 0
        while i > floor && count < codePoints {
            i -= 1
            if text[i] & 0xC0 != 0x80 { count += 1 }
        }
        return i
    }
}

private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
}
