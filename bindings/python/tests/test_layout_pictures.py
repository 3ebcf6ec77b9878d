"""Pictures draw the rows at exactly the computed frames."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

import noteskit as nk


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG (what cairo writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append(bytes(b for i, b in enumerate(line) if i % channels < 3))
        previous = line
    return width, height, rows


def pixel(rows: list[bytes], x: int, y: int) -> tuple[int, int, int]:
    return tuple(rows[y][3 * x:3 * x + 3])  # type: ignore[return-value]


def test_rendered_articles_put_separators_and_text_boxes_at_the_computed_frames(store, tmp_path):
    made = store.articles.create_many([{"title": f"2026-11-{n + 1:02d}", "content": "今天天气真好，出去走走。Hello! " * (n + 1)}
                                       for n in range(4)])
    ids = [a.id for a in made]
    with store.layout(width=320) as lay:
        picture = lay.render_articles(ids, tmp_path / "rows.png")
        heights = lay.article_heights(ids)
        assert (picture.width, picture.height, picture.rows) == (320, sum(heights), 4)
        width, height, rows = read_png(Path(picture.path))
        assert (width, height) == (320, sum(heights))
        style = lay.article_style
        top = 0
        for a, h in zip(made, heights):
            bottom = int(top + h)
            assert pixel(rows, 2, bottom - 1) == pixel(rows, 318, bottom - 1) != (255, 255, 255)  # the separator
            assert pixel(rows, 2, bottom - 2) == (255, 255, 255)  # white just above it, under the content view
            title_box = top + style.top_padding
            view_top = title_box + style.title_height
            view_bottom = bottom - style.extra_height - style.bottom_padding
            assert pixel(rows, 10, int(title_box) + 1) == (255, 255, 255)  # left of the title box (14 from the left)
            assert pixel(rows, 15, int(title_box) + 1) != (255, 255, 255)  # inside the title box
            assert pixel(rows, 317, int(title_box) + 1) == (255, 255, 255)  # right of it (4 from the right)
            assert pixel(rows, 9, int(view_top) + 1) != (255, 255, 255)  # the text view starts right under the box
            assert pixel(rows, 9, int(view_bottom) - 1) != (255, 255, 255)
            assert pixel(rows, 9, int(view_bottom) + 1) == (255, 255, 255)  # 5 from the bottom
            assert pixel(rows, 6, int(view_top) + 1) == (255, 255, 255)  # 8 from the left
            top = bottom


def test_render_refuses_an_empty_list_a_bad_path_and_an_unknown_id(store, tmp_path):
    a = store.articles.create(title="t", content="c")
    with store.layout(width=375) as lay:
        with pytest.raises(nk.ValidationError):
            lay.render_articles([], tmp_path / "x.png")
        with pytest.raises(nk.NotFoundError):
            lay.render_articles([a.id, 12345], tmp_path / "x.png")
        with pytest.raises(nk.StorageError):
            lay.render_articles([a.id], tmp_path / "missing-folder" / "x.png")
        with pytest.raises(nk.ValidationError):
            lay.render_articles([a.id], "")
