import NotesKit

// Text measurement, layouts (heights, bubbles, row offsets, pictures) and the interaction models.

@_cdecl("nk_measure_text")
public func nk_measure_text(_ text: UnsafePointer<CChar>?, _ maxWidth: Double, _ font: UnsafePointer<CChar>?, _ size: Double,
                            _ out: OutJSON?) -> Int32 {
    call {
        let out = try outPointer(out, "out_json")
        let metrics = try measureText(try string(text, "text"), maxWidth: maxWidth,
                                      font: try optionalString(font, "font") ?? Fonts.cjkFamily, size: size)
        try put(JSONWriter.encode { $0.metrics(metrics) }, out)
    }
}
