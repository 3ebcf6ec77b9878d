"""Pango called independently of NotesKit: Debian's PyGObject (python3-gi, gir1.2-pango-1.0).

Run as a subprocess with FONTCONFIG_FILE set to NotesKit's font configuration (fontconfig reads it
once, at start-up). Reads JSON from stdin: {"dpi": 72, "language": "zh-cn", "items": [[text,
max_width, font, size], ...]}; writes [[width, height, line_count, unknown_glyphs], ...].
"""
import json
import sys

import gi

gi.require_version("Pango", "1.0")
gi.require_version("PangoFT2", "1.0")
from gi.repository import Pango, PangoFT2  # noqa: E402


def main() -> None:
    request = json.load(sys.stdin)
    font_map = PangoFT2.FontMap.new()
    font_map.set_resolution(request["dpi"], request["dpi"])
    context = Pango.FontMap.create_context(font_map)
    context.set_language(Pango.Language.from_string(request["language"]))
    layout = Pango.Layout.new(context)
    layout.set_wrap(Pango.WrapMode.WORD_CHAR)
    out = []
    for text, max_width, font, size in request["items"]:
        layout.set_font_description(Pango.FontDescription.from_string(f"{font} {size}"))
        layout.set_width(int(max_width * Pango.SCALE))
        layout.set_text(text, -1)
        width, height = layout.get_pixel_size()
        out.append([width, height, layout.get_line_count(), layout.get_unknown_glyphs_count()])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
