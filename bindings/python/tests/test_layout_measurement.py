"""Text measurement equals Pango called independently, to the pixel; hostile inputs are refused."""
from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from ctypes import byref, c_void_p
from pathlib import Path

import pytest

import noteskit as nk
from noteskit import _ffi

ORACLE = Path(__file__).with_name("pango_oracle.py")
WIDTHS = [37, 100, 200.5, 359, 1000]


def corpus() -> list[str]:
    """CJK, Latin, emoji, long unbreakable words, explicit newlines, empty lines, mixed."""
    rng = random.Random(20261129)
    cjk = "今天天气真好我们去公园散步吧看见许多花开了心情也很愉快写一篇随笔记下来"
    words = ["hello", "world", "Pango", "measure", "the", "quick", "brown", "fox", "notes", "chat", "2026-11-29"]
    emoji = ["😀", "🎉", "👍🏽", "❤️", "👨‍👩‍👧", "🇨🇳"]
    texts = [
        "", "x", " ", "今天", "hello world", "a" * 300, "https://example.com/" + "very-long-path/" * 12,
        "第一行\n第二行\n\n第四行", "\n", "\n\n\n", "trailing newline\n", "   leading spaces", "tab\tseparated\ttext",
        "。，、；：？！“”‘’（）《》", "English, then 中文，然后 emoji 😀 and back.", "😀" * 40, "A" + "\u0301" * 5 + "B",
        "שלום עולם hello", "مرحبا بالعالم", "Ünïcödé façade naïve", "𠀀𠀁𠀂 rare CJK", "\U0001FA90\U0001FAE0 new emoji",
    ]
    for _ in range(40):
        parts = []
        for _ in range(rng.randint(1, 30)):
            pick = rng.random()
            if pick < 0.4:
                parts.append("".join(rng.choice(cjk) for _ in range(rng.randint(1, 12))))
            elif pick < 0.75:
                parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))))
            elif pick < 0.85:
                parts.append(rng.choice(emoji))
            elif pick < 0.95:
                parts.append("\n" * rng.randint(1, 3))
            else:
                parts.append("x" * rng.randint(20, 80))
        texts.append(rng.choice(["", " "]).join(parts))
    return texts


def oracle(items: list[list]) -> list[list[int]]:
    config = nk.font_configuration()
    env = dict(os.environ)
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"noteskit-fonts-{os.getpid()}.conf"), "w") as f:
        f.write(config.fontconfig)
        env["FONTCONFIG_FILE"] = f.name
    try:
        request = json.dumps({"dpi": config.dpi, "language": config.language, "items": items})
        done = subprocess.run([sys.executable, str(ORACLE)], input=request, env=env, capture_output=True, text=True,
                              check=True, timeout=120)
    finally:
        os.unlink(env["FONTCONFIG_FILE"])
    return json.loads(done.stdout)


def test_measure_text_equals_pango_called_directly_to_the_pixel_on_a_generated_corpus():
    items = [[text, width, font, size] for text in corpus() for width in WIDTHS
             for font, size in (("WenQuanYi Micro Hei", 17), ("DejaVu Sans", 15))]
    expected = oracle(items)
    mismatches = []
    for (text, width, font, size), want in zip(items, expected):
        got = nk.measure_text(text, width, font=font, size=size)
        if [got.width, got.height, got.line_count, got.unknown_glyphs] != want:
            mismatches.append((text[:30], width, font, got, want))
    assert not mismatches, mismatches[:5]
    assert len(items) >= 600


def test_glyphs_no_pinned_font_has_are_reported_not_hidden():
    assert nk.measure_text("hello", 200).unknown_glyphs == 0
    assert nk.measure_text("\U0001FA90\U0001FAE0", 200).unknown_glyphs == 2


def test_wrapping_breaks_words_only_when_a_word_does_not_fit():
    one_line = nk.measure_text("hello world", 1000, font="DejaVu Sans")
    two_lines = nk.measure_text("hello world", one_line.width - 1, font="DejaVu Sans")
    assert (one_line.line_count, two_lines.line_count) == (1, 2)
    long_word = nk.measure_text("x" * 200, 100, font="DejaVu Sans")
    assert long_word.line_count > 1 and long_word.width <= 100


def test_the_font_configuration_pins_exactly_the_two_fonts():
    config = nk.font_configuration()
    assert config.families == ["WenQuanYi Micro Hei", "DejaVu Sans"]
    assert (config.dpi, config.language) == (72, "zh-cn")
    assert "wqy-microhei.ttc" in config.fontconfig and "DejaVuSans.ttf" in config.fontconfig
    assert "<rejectfont>" in config.fontconfig


def test_missing_font_files_raise_font_error_naming_the_debian_package(tmp_path):
    script = "import noteskit as nk\ntry:\n    nk.measure_text('x', 100)\nexcept nk.FontError as e:\n    print(e)\n"
    env = dict(os.environ, NOTESKIT_FONT_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, timeout=60)
    assert "fonts-wqy-microhei" in out.stdout and "apt-get install" in out.stdout


def test_a_font_that_is_not_pinned_is_a_font_error():
    with pytest.raises(nk.FontError) as e:
        nk.measure_text("x", 100, font="Arial")
    assert "WenQuanYi Micro Hei" in str(e.value)
    assert nk.measure_text("x", 100, font="dejavu sans") == nk.measure_text("x", 100, font="DejaVu Sans")


@pytest.mark.parametrize("width", [0, -5, math.nan, math.inf, -math.inf, 1e12])
def test_a_width_that_is_not_a_positive_finite_number_is_refused(width):
    with pytest.raises(nk.ValidationError) as e:
        nk.measure_text("x", width)
    assert e.value.field == "max_width"


@pytest.mark.parametrize("size", [0, -1, math.nan, math.inf, 5000])
def test_a_size_out_of_range_is_refused(size):
    with pytest.raises(nk.ValidationError) as e:
        nk.measure_text("x", 100, size=size)
    assert e.value.field == "size"


def test_nul_and_oversized_text_are_refused_quickly():
    with pytest.raises(nk.ValidationError) as e:
        nk.measure_text("a\x00b", 100)
    assert e.value.field == "text"
    with pytest.raises(nk.ValidationError) as e:
        nk.measure_text("字" * (10 * 1024 * 1024 // 3), 100)
    assert e.value.field == "text" and "too long" in str(e.value)


def test_invalid_utf8_and_null_pointers_through_the_abi_are_invalid_arguments():
    out = c_void_p()
    assert _ffi.nk_measure_text(b"\xff\xfe bad", 100.0, None, 17.0, byref(out)) == 1
    assert isinstance(_ffi.last_error(), nk.InvalidArgumentError)
    assert _ffi.nk_measure_text(None, 100.0, None, 17.0, byref(out)) == 1
    assert _ffi.nk_measure_text(b"ok", 100.0, b"\xc3", 17.0, byref(out)) == 1
    assert _ffi.nk_measure_text(b"ok", 100.0, None, 17.0, None) == 1
    assert out.value is None


def test_wrong_argument_types_are_invalid_arguments():
    with pytest.raises(nk.InvalidArgumentError):
        nk.measure_text(b"bytes", 100)  # type: ignore[arg-type]
    with pytest.raises(nk.InvalidArgumentError):
        nk.measure_text("x", "100")  # type: ignore[arg-type]
