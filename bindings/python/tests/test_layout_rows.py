"""Row offsets: total height, offset of a row, row at an offset, visible rows; updated in place."""
from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noteskit as nk


def brute_row_at(heights: list[float], y: float):
    top = 0.0
    for row, h in enumerate(heights):
        if top <= y < top + h:
            return row
        top += h
    return None


def brute_visible(heights: list[float], offset: float, viewport: float) -> list[int]:
    tops = [0.0, *itertools.accumulate(heights)]
    return [r for r, h in enumerate(heights) if h > 0 and tops[r] < offset + viewport and tops[r] + h > offset
            ] if viewport > 0 else []


@pytest.fixture(scope="module")
def setup():
    with nk.Store.memory() as store:
        made = store.articles.create_many([{"title": f"t{n}", "content": "今天天气真好 " * (n % 17 + 1)} for n in range(60)])
        with store.layout(width=320) as lay:
            yield store, lay, [a.id for a in made]


def test_unmeasured_rows_count_with_the_estimated_height(setup):
    store, lay, ids = setup
    with store.layout(width=300, estimated_height=100) as fresh:
        rows = fresh.rows(ids[:10])
        assert len(rows) == 10 and rows.total_height == 1000
        assert (rows.offset_of(3), rows.row_at(350), rows.row_at(-1), rows.row_at(1000)) == (300, 3, None, None)
        assert rows.visible(250, 200) == range(2, 5)
        assert not rows.is_measured(0)


def test_rows_update_in_place_when_the_layout_measures_them(setup):
    store, lay, ids = setup
    with store.layout(width=300) as fresh:
        rows = fresh.rows(ids)
        visible = rows.visible(0, 600)
        heights = fresh.article_heights([ids[r] for r in visible])
        assert [rows.height_of(r) for r in visible] == heights
        assert all(rows.is_measured(r) for r in visible)
        assert rows.total_height == sum(heights) + 150 * (len(ids) - len(visible))
        fresh.prefetch(ids, threads=2)
        assert rows.total_height == sum(fresh.article_heights(ids))


def test_a_changed_row_goes_back_to_the_estimate_until_measured_again(store):
    a, b = store.articles.create_many([{"title": "a", "content": "x"}, {"title": "b", "content": "y"}])
    with store.layout(width=375) as lay:
        lay.article_heights([a.id, b.id])
        rows = lay.rows([a.id, b.id])
        measured = rows.offset_of(1)
        store.articles.update(a.id, content="much longer\n" * 5)
        assert rows.offset_of(1) == 150 and not rows.is_measured(0)
        height = lay.article_height(a.id)
        assert rows.offset_of(1) == height > measured


def test_queries_agree_with_a_brute_force_walk(setup):
    store, lay, ids = setup
    lay.prefetch(ids[::2])
    rows = lay.rows(ids)
    heights = [rows.height_of(r) for r in range(len(ids))]
    assert rows.total_height == sum(heights)
    for y in [0, 0.5, 149.9, 150, 151, 1234.5, rows.total_height - 0.01, rows.total_height, -3]:
        assert rows.row_at(y) == brute_row_at(heights, y), y
    for offset, viewport in [(0, 667), (500, 667), (-100, 200), (rows.total_height - 10, 100), (0, 0), (10**9, 5)]:
        assert list(rows.visible(offset, viewport)) == brute_visible(heights, offset, viewport), (offset, viewport)
    tops = [0.0, *itertools.accumulate(heights)]
    assert [rows.offset_of(r) for r in range(len(ids) + 1)] == tops


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 59), min_size=0, max_size=60, unique=True), st.floats(-500, 9000), st.floats(0, 2000))
def test_row_queries_match_brute_force_for_any_list(setup, order, offset, viewport):
    store, lay, ids = setup
    chosen = [ids[i] for i in order]
    rows = lay.rows(chosen)
    heights = [rows.height_of(r) for r in range(len(chosen))]
    assert math.isclose(rows.total_height, sum(heights))
    assert rows.row_at(offset) == brute_row_at(heights, offset)
    assert list(rows.visible(offset, viewport)) == brute_visible(heights, offset, viewport)


def test_bad_row_queries_are_refused(setup):
    store, lay, ids = setup
    rows = lay.rows(ids[:5])
    with pytest.raises(IndexError):
        rows.offset_of(6)
    with pytest.raises(IndexError):
        rows.height_of(5)
    with pytest.raises(nk.ValidationError):
        rows.row_at(math.nan)
    with pytest.raises(nk.ValidationError):
        rows.visible(0, -1)
    with pytest.raises(nk.ValidationError):
        lay.rows([ids[0], ids[0]])
    with pytest.raises(nk.InvalidArgumentError):
        lay.rows(ids, kind="paragraph")
    rows.close()
    with pytest.raises(nk.ClosedError):
        rows.total_height


def test_rows_of_a_closed_layout_are_closed(store):
    a = store.articles.create(title="t", content="c")
    lay = store.layout(width=375)
    rows = lay.rows([a.id])
    lay.close()
    with pytest.raises(nk.ClosedError):
        rows.total_height
