"""Long texts measure right: past Pango's 32-bit sums, as the pieces Pango can measure add up, and
equal to Pango measuring the whole text wherever Pango can."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import noteskit as nk
from test_layout_measurement import corpus, oracle
from test_layout_pictures import pixel, read_png

DEFAULT = "WenQuanYi Micro Hei"


def per_line(char: str, width: float, size: float) -> int:
    """How many of ``char`` a broken line of an unbroken run holds (a line that breaks a Latin
    word also holds a hyphen, so the last line of a run may hold more)."""
    def lines(n: int) -> int:
        return nk.measure_text(char * n, width, size=size).line_count

    two = next(n for n in range(1, 10_000) if lines(n) == 2)
    three = next(n for n in range(two, 20_000) if lines(n) == 3)
    return three - two


def measured_in_pieces(char: str, count: int, width: float, size: float) -> nk.TextMetrics:
    """A run of ``count`` unbroken ``char`` cut into pieces of exactly 1024 lines and a rest, each
    measured by Pango itself (small enough for its 32-bit sums), added up.

    A piece of 1024 lines is exactly as many pixels tall as one line is Pango units (1/1024 px),
    so the whole run's height, rounded up to pixels once, is the pieces' pixel heights added up.
    """
    piece = per_line(char, width, size) * 1024
    full_pieces, rest = divmod(count, piece)
    items = [[char * piece, width, DEFAULT, size]] + ([[char * rest, width, DEFAULT, size]] if rest else [])
    measured = [nk.TextMetrics(*m) for m in oracle(items)]
    assert measured[0].line_count == 1024
    counts = [full_pieces, 1][: len(measured)]
    return nk.TextMetrics(max(m.width for m in measured), sum(n * m.height for n, m in zip(counts, measured)),
                          sum(n * m.line_count for n, m in zip(counts, measured)),
                          sum(n * m.unknown_glyphs for n, m in zip(counts, measured)))


@pytest.mark.parametrize("char, count, size", [("长", 131_072, 16), ("长", 140_000, 17), ("x", 270_000, 15)])
def test_an_unbroken_run_past_pangos_32_bit_sums_measures_as_its_pieces_add_up(char, count, size):
    whole = nk.measure_text(char * count, 60, size=size)
    assert whole == measured_in_pieces(char, count, 60, size)
    assert whole.line_count >= count // per_line(char, 60, size) and whole.width > 40


def test_the_longest_content_with_no_break_opportunity_measures_as_its_pieces_add_up():
    whole = nk.measure_text("长" * 1_000_000, 100, size=13)
    assert whole == measured_in_pieces("长", 1_000_000, 100, 13)


def test_article_rows_and_bubbles_over_a_long_unbroken_text_get_its_true_height(store):
    text = "长" * 131_072
    article = store.articles.create(title="长", content=text)
    message = store.conversations.create("Alice").send(text)
    with store.layout(width=100) as lay:
        content = measured_in_pieces("长", 131_072, 100 - 26, lay.article_style.content_size)
        assert lay.article_height(article.id) == 8 + 21 + content.height + 16 + 5 + 1
        bubble = lay.bubble(message.id)
        assert bubble.text_height == measured_in_pieces("长", 131_072, 50, lay.bubble_style.size).height


def long_texts() -> list[str]:
    """Texts over the length NotesKit lays out in one piece: mixed scripts, paragraphs of both
    directions (and neutral ones after them), CRLF, tabs, emoji, runs of combining marks and of
    zero-width spaces, long words."""
    rng = random.Random(20261130)
    texts = corpus()
    mixed = "\n".join(texts)
    words = " ".join(t for t in texts if t)
    rtl = "\n".join(["שלום עולם, זה טקסט ארוך " * 30, "12345 67890 " * 40, "hello world " * 50, "", "مرحبا بالعالم " * 40] * 4)
    neutral_first = "123 456 … " * 200 + "\n" + "שלום " * 300 + "\n" + "... " * 300
    marks = ("a" + "\u0301" * 40 + " ") * 80 + "\u200b".join("x" * 30 for _ in range(100))
    crlf = "\r\n".join("line " * rng.randint(0, 40) for _ in range(100)) + "\t\ttabbed\t" * 100
    cjk = "今天天气真好，我们去公园散步吧。" * 400 + "😀🎉👍🏽" * 300
    return [mixed, words, rtl, neutral_first, marks, crlf, cjk]


def test_long_texts_measure_as_pango_measures_them_whole():
    items = [[text, width, font, size] for text in long_texts() for width in (37, 359.5)
             for font, size in (("WenQuanYi Micro Hei", 17), ("DejaVu Sans", 13))]
    assert min(len(text) for text, *_ in items) > 3_000
    expected = oracle(items)
    mismatches = []
    for (text, width, font, size), want in zip(items, expected):
        got = nk.measure_text(text, width, font=font, size=size)
        if [got.width, got.height, got.line_count, got.unknown_glyphs] != want:
            mismatches.append((text[:20], len(text), width, font, got, want))
    assert not mismatches, mismatches[:5]


def test_a_long_content_is_drawn_line_by_line_down_to_its_last_line(store, tmp_path):
    content = "今天天气真好，我们去公园散步吧。" * 300 + "最后一行"
    article = store.articles.create(title="长文", content=content)
    with store.layout(width=375) as lay:
        height = lay.article_height(article.id)
        picture = lay.render_articles([article.id], tmp_path / "long.png")
    assert picture.height == height
    _, _, rows = read_png(Path(picture.path))
    text_bottom = int(height - 1 - 5 - 8)  # above the +1, the bottom padding and the view's inset
    line = nk.measure_text("最", 349, size=13).height

    def inked(y: int) -> bool:
        return any(max(pixel(rows, x, y)) < 128 for x in range(13, 13 + 60))

    assert any(inked(y) for y in range(text_bottom - line, text_bottom))  # "最后一行", the last line
    assert not any(inked(y) for y in range(text_bottom + 1, int(height)))
