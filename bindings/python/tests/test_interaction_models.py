"""The keyboard and the search panel behave as the apps defined (design §4)."""
from __future__ import annotations

import math

import pytest

import noteskit as nk


def test_showing_the_keyboard_moves_the_chat_and_the_search_panel_up_and_insets_the_editor():
    kb = nk.KeyboardModel()
    assert (kb.shown, kb.mask_visible, kb.editor_bottom_inset, kb.chat_offset, kb.search_panel_offset) == (False, False, 46, 0, 0)
    kb.show(336)
    assert (kb.shown, kb.mask_visible, kb.keyboard_height) == (True, True, 336)
    assert (kb.editor_bottom_inset, kb.chat_offset, kb.search_panel_offset) == (341, -336, -(336 + 105))


def test_a_repeated_show_is_idempotent_one_mask_never_three():
    kb = nk.KeyboardModel()
    for _ in range(3):
        kb.show(291)
    assert kb.mask_count == 1 and kb.editor_bottom_inset == 296
    kb.show(336)  # the keyboard changed its frame (another input method)
    assert kb.mask_count == 1 and kb.chat_offset == -336


def test_hiding_the_keyboard_puts_everything_back():
    kb = nk.KeyboardModel()
    kb.show(336)
    kb.hide()
    kb.hide()
    assert (kb.mask_count, kb.editor_bottom_inset, kb.chat_offset, kb.search_panel_offset, kb.keyboard_height) == (0, 46, 0, 0, 0)


@pytest.mark.parametrize("height", [-1, math.nan, math.inf, 1e9])
def test_an_impossible_keyboard_height_is_refused(height):
    kb = nk.KeyboardModel()
    with pytest.raises(nk.ValidationError) as e:
        kb.show(height)
    assert e.value.field == "keyboard_height"
    assert not kb.shown


def test_the_search_panel_snaps_open_when_at_least_91_of_105_are_revealed():
    panel = nk.SearchPanel()
    assert (panel.state, panel.revealed) == ("hidden", 0)
    panel.drag(-50)
    panel.drag(-41)
    assert panel.dragging and panel.revealed == 91
    assert panel.end_drag() == "shown" and panel.revealed == 105 and panel.offset == -105


def test_the_search_panel_snaps_closed_below_91():
    panel = nk.SearchPanel()
    panel.drag(-90.5)
    assert panel.end_drag() == "hidden" and panel.revealed == 0
    panel.show()
    panel.drag(15)  # dragged down: 90 left showing
    assert panel.revealed == 90 and panel.end_drag() == "hidden"


def test_the_search_panel_never_moves_past_its_105():
    panel = nk.SearchPanel()
    panel.drag(-500)
    assert panel.revealed == 105
    panel.drag(1000)
    assert panel.revealed == 0
    with pytest.raises(nk.ValidationError):
        panel.drag(math.nan)


def test_the_layout_docstring_examples_run():
    import doctest

    import noteskit.layout

    assert doctest.testmod(noteskit.layout).failed == 0
