"""Article row heights: the formula on top of measured text, a cache that is never wrong, prefetch."""
from __future__ import annotations

import math
import threading
from ctypes import byref, c_void_p

import pytest

import noteskit as nk
from noteskit import _ffi
from test_layout_measurement import oracle

CONTENT = "今天天气真好，我们去公园散步吧。Hello world, this is a mixed line of text that wraps. " * 2


def expected_height(title: str, content: str, width: float, style: nk.ArticleRowStyle = nk.ArticleRowStyle()) -> float:
    title_height = style.title_height
    if title_height is None:
        title_height = nk.measure_text(title, width - style.title_left - style.title_right, font=style.title_font,
                                       size=style.title_size).height
    text_width = width - style.content_left - style.content_right - 2 * style.content_padding
    content_height = nk.measure_text(content, text_width, font=style.content_font, size=style.content_size).height
    return (style.top_padding + title_height + style.title_spacing + style.content_inset_top + content_height
            + style.content_inset_bottom + style.bottom_padding + style.extra_height)


@pytest.fixture
def articles(store):
    return store.articles.create_many([{"title": f"2026-11-{n:02d}", "content": CONTENT[: 20 + 7 * n]} for n in range(1, 30)])


@pytest.mark.parametrize("width", [120, 320, 375, 768.5])
def test_a_row_is_title_plus_wrapped_content_plus_paddings_plus_the_separator(store, articles, width):
    with store.layout(width=width) as lay:
        for a in articles:
            assert lay.article_height(a.id) == expected_height(a.title, a.content, width)


def test_the_default_row_is_the_apps_cell_title_box_21_text_view_at_width_minus_16_with_its_insets(store):
    # seed-facts, "Article row": 8 + 21 + (text height at width - 26) + 16 + 5 + 1, title 14, content 13.
    content = "今天天气真好，我们去公园散步吧。Hello world, a line that wraps. " * 3
    a = store.articles.create(title="周末", content=content)
    style = nk.ArticleRowStyle()
    assert (style.title_size, style.title_height, style.content_size, style.separator) == (14, 21, 13, 0.5)
    for width in (320, 375, 414.5):
        ((_, text_height, _, _),) = oracle([[content, width - 26, "WenQuanYi Micro Hei", 13]])  # Pango, through PyGObject
        with store.layout(width=width) as lay:
            assert lay.article_height(a.id) == 8 + 21 + text_height + 16 + 5 + 1


def test_the_named_two_labels_style_keeps_the_former_heights(store):
    a = store.articles.create(title="周末", content=CONTENT)
    style = nk.ArticleRowStyle.two_labels()
    assert style == nk.ArticleRowStyle(title_size=17, title_height=None, title_left=8, title_right=8, title_spacing=4,
                                       content_size=15, content_inset_top=0, content_inset_bottom=0, content_padding=0,
                                       bottom_padding=8, separator=1)
    assert nk.ArticleRowStyle.two_labels(content_size=20).content_size == 20
    with store.layout(width=375, article_style=style) as lay:
        title = nk.measure_text(a.title, 375 - 16, size=17).height
        content = nk.measure_text(a.content, 375 - 16, size=15).height
        assert lay.article_height(a.id) == 8 + title + 4 + content + 8 + 1


def test_a_long_title_stays_on_one_line(store):
    short = store.articles.create(title="短", content="x")
    long = store.articles.create(title="很长的标题" * 50, content="x")
    with store.layout(width=375) as lay:
        assert lay.article_height(short.id) == lay.article_height(long.id)


def test_a_custom_style_changes_heights_and_its_fingerprint(store, articles):
    style = nk.ArticleRowStyle(content_size=20, top_padding=0.5, separator=0)
    assert style.fingerprint != nk.ArticleRowStyle().fingerprint
    assert style == nk.ArticleRowStyle(content_size=20.0, top_padding=0.5, separator=0)
    assert style.fingerprint == nk.ArticleRowStyle(content_size=20.0, top_padding=0.5, separator=0).fingerprint
    with store.layout(width=375, article_style=style) as lay:
        a = articles[10]
        assert lay.article_height(a.id) == expected_height(a.title, a.content, 375, style)


def test_styles_are_immutable_and_checked_when_made():
    style = nk.ArticleRowStyle()
    with pytest.raises(AttributeError):
        style.separator = 2  # type: ignore[misc]
    with pytest.raises(nk.ValidationError) as e:
        nk.ArticleRowStyle(top_padding=-1)
    assert e.value.field == "top_padding"
    with pytest.raises(nk.ValidationError) as e:
        nk.BubbleStyle(max_text_width=math.nan)
    assert e.value.field == "max_text_width"
    with pytest.raises(nk.FontError):
        nk.BubbleStyle(font="Comic Sans")


def test_heights_are_measured_once_and_then_served_from_the_cache(store, articles):
    ids = [a.id for a in articles]
    with store.layout(width=375) as lay:
        first = lay.article_heights(ids)
        assert lay.stats().misses == len(ids) and lay.stats().entries == len(ids)
        assert lay.article_heights(ids) == first
        stats = lay.stats()
        assert (stats.hits, stats.misses, stats.entries) == (len(ids), len(ids), len(ids))
        assert 0 < stats.bytes <= stats.capacity_bytes


def test_an_edited_article_is_measured_again_once_and_an_unchanged_one_never(store, articles):
    a, b = articles[0], articles[1]
    with store.layout(width=375) as lay:
        lay.article_heights([a.id, b.id])
        store.articles.update(a.id, content=CONTENT * 3)
        assert lay.article_height(a.id) == expected_height(a.title, CONTENT * 3, 375)
        lay.article_heights([a.id, b.id])
        stats = lay.stats()
        assert stats.misses == 3 and stats.invalidations == 1


def test_a_write_through_another_handle_is_seen(db_path):
    with nk.Store.open(db_path) as one, nk.Store.open(db_path) as other:
        a = one.articles.create(title="t", content="short")
        with one.layout(width=375) as lay:
            before = lay.article_height(a.id)
            other.articles.update(a.id, content=CONTENT * 4)
            after = lay.article_height(a.id)
            assert after > before and after == expected_height("t", CONTENT * 4, 375)
            other.articles.delete(a.id)
            with pytest.raises(nk.NotFoundError):
                lay.article_height(a.id)


def test_inserting_rows_above_never_shifts_a_cached_height(store, articles):
    with store.layout(width=375) as lay:
        before = {a.id: lay.article_height(a.id) for a in articles}
        store.articles.create_many([{"title": "new", "content": "a new row above " * n} for n in range(1, 20)])
        assert {a.id: lay.article_height(a.id) for a in articles} == before
        assert lay.stats().invalidations == 0


def test_a_deleted_article_drops_its_entry(store, articles):
    with store.layout(width=375) as lay:
        lay.article_height(articles[0].id)
        store.articles.delete(articles[0].id)
        with pytest.raises(nk.NotFoundError):
            lay.article_height(articles[0].id)
        assert lay.stats().entries == 0


def test_a_saved_draft_counts_as_an_edit(store, articles):
    with store.layout(width=375) as lay:
        a = articles[3]
        lay.article_height(a.id)
        d = store.articles.edit(a.id)
        d.content = CONTENT * 2
        d.save()
        assert lay.article_height(a.id) == expected_height(a.title, CONTENT * 2, 375)


def test_the_cache_is_bounded_by_bytes_and_evicts_the_least_recently_used(store):
    ids = [a.id for a in store.articles.create_many([{"title": "t", "content": f"row {n}"} for n in range(300)])]
    with store.layout(width=375, cache_bytes=4096) as lay:
        heights = lay.article_heights(ids)
        stats = lay.stats()
        assert stats.entries < len(ids) and stats.evictions == len(ids) - stats.entries
        assert stats.bytes <= 4096
        assert lay.article_heights(ids) == heights  # evicted rows are measured again, identically


def test_concurrent_readers_and_a_writer_always_see_current_heights(store, articles):
    ids = [a.id for a in articles]
    errors: list[BaseException] = []
    with store.layout(width=375) as lay:
        def read() -> None:
            try:
                for _ in range(20):
                    lay.article_heights(ids)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for n, a in enumerate(articles[:10]):
            store.articles.update(a.id, content=CONTENT[: 40 + n * 9] + "edited")
        for t in threads:
            t.join()
        assert not errors
        current = [store.articles.get(i) for i in ids]
        assert lay.article_heights(ids) == [expected_height(a.title, a.content, 375) for a in current]


def test_prefetch_measures_what_is_missing_on_several_threads(store, articles):
    ids = [a.id for a in articles]
    with store.layout(width=375) as lay:
        lay.article_height(ids[0])
        assert lay.prefetch(ids, threads=2) == len(ids) - 1
        assert lay.prefetch(ids) == 0
        hits = lay.stats().hits
        assert lay.article_heights(ids) == [expected_height(a.title, a.content, 375) for a in articles]
        assert lay.stats().hits == hits + len(ids)


def test_prefetch_reports_an_unknown_id_after_measuring_the_others(store, articles):
    with store.layout(width=375) as lay:
        with pytest.raises(nk.NotFoundError) as e:
            lay.prefetch([articles[0].id, 999_999, articles[1].id], threads=2)
        assert "999999" in str(e.value)
        assert lay.stats().entries == 2


@pytest.mark.parametrize("width", [0, -1, math.nan, math.inf, 10, 1e9])
def test_a_layout_width_that_cannot_be_laid_out_is_refused(store, width):
    with pytest.raises(nk.ValidationError) as e:
        store.layout(width=width)
    assert e.value.field == "width"


def test_unknown_ids_are_not_found_and_bad_id_lists_are_invalid(store, articles):
    with store.layout(width=375) as lay:
        for bad in (0, -1, 2 ** 63 - 1):
            with pytest.raises(nk.NotFoundError):
                lay.article_height(bad)
        with pytest.raises(nk.NotFoundError):
            lay.article_heights([articles[0].id, 424242])
        with pytest.raises(nk.InvalidArgumentError):
            lay.article_heights(["1"])  # type: ignore[list-item]
        with pytest.raises(nk.InvalidArgumentError):
            lay.article_heights("123")  # type: ignore[arg-type]
        with pytest.raises(nk.ValidationError):
            lay.article_height(2 ** 70)
        out = c_void_p()
        for raw in (b"[1,", b"{}", b"[1.5]", b"[99999999999999999999]", b"[1] x", b"\xff"):
            assert _ffi.nk_layout_article_heights(lay.handle, raw, byref(out)) == 1, raw
        assert _ffi.nk_layout_article_heights(lay.handle, None, byref(out)) == 1


def test_a_closed_layout_or_store_is_a_closed_error(db_path):
    store = nk.Store.open(db_path)
    a = store.articles.create(title="t", content="c")
    lay = store.layout(width=375)
    handle = lay.handle
    lay.close()
    lay.close()
    with pytest.raises(nk.ClosedError):
        lay.article_height(a.id)
    assert _ffi.nk_layout_article_height(handle, a.id, byref(_ffi.c_double())) == 11
    lay = store.layout(width=375)
    store.close()
    with pytest.raises(nk.ClosedError):
        lay.article_height(a.id)
    lay.close()


def test_a_store_handle_is_not_a_layout_handle(store):
    out = _ffi.c_double()
    assert _ffi.nk_layout_article_height(store.handle, 1, byref(out)) == 1
    assert _ffi.nk_layout_article_height(None, 1, byref(out)) == 1
