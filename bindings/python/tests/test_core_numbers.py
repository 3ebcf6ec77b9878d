"""The package says nothing the library does not: style fields and defaults, and the interaction
models' numbers, come from the library (one table in the core), so the two cannot disagree."""
from __future__ import annotations

import dataclasses
import json

import pytest

import noteskit as nk
from noteskit import _ffi


def _core(kind: str, fields: object = None):
    return _ffi.call_json(_ffi.nk_style_resolve, kind.encode(), None if fields is None else json.dumps(fields).encode())


@pytest.mark.parametrize("cls, kind", [(nk.ArticleRowStyle, "article_row"), (nk.BubbleStyle, "bubble")])
def test_a_python_style_has_exactly_the_libraries_fields_in_its_order_with_its_defaults(cls, kind):
    core = _core(kind)
    fingerprint = core.pop("fingerprint")
    python = {f.name: f.default for f in dataclasses.fields(cls) if f.init}
    assert list(python) == list(core)
    assert python == core
    assert cls().fingerprint == fingerprint


def test_the_named_row_style_is_the_libraries_too():
    core = _core("article_row.two_labels")
    assert dataclasses.asdict(nk.ArticleRowStyle.two_labels()) == core


def test_the_interaction_models_numbers_are_the_libraries():
    core = _ffi.call_json(_ffi.nk_interaction_constants)
    panel = core["search_panel"]
    assert (nk.SearchPanel.height, nk.SearchPanel.strip, nk.SearchPanel.snap_threshold) == (
        panel["height"], panel["strip"], panel["snap_threshold"]) == (105, 50, 91)
    keyboard = core["keyboard"]
    assert (nk.KeyboardModel.editor_gap_above_keyboard, nk.KeyboardModel.editor_resting_inset) == (
        keyboard["editor_gap_above_keyboard"], keyboard["editor_resting_inset"]) == (5, 46)


def test_the_panel_snaps_exactly_at_the_libraries_threshold():
    for revealed, expected in [(nk.SearchPanel.snap_threshold, "shown"), (nk.SearchPanel.snap_threshold - 0.5, "hidden")]:
        panel = nk.SearchPanel()
        panel.drag(-revealed)
        assert panel.end_drag() == expected
        assert panel.top_offset == -nk.SearchPanel.strip - (nk.SearchPanel.height if expected == "shown" else 0)
