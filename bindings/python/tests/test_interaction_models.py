"""The keyboard and the search panel behave as the apps moved them (design §4, seed-facts "List and search")."""
from __future__ import annotations

import math

import pytest

import noteskit as nk


def test_showing_the_keyboard_moves_the_chat_up_and_insets_the_editor():
    kb = nk.KeyboardModel()
    assert (kb.shown, kb.editor_bottom_inset, kb.chat_offset) == (False, 46, 0)
    kb.show(336)
    assert (kb.shown, kb.keyboard_height, kb.editor_bottom_inset, kb.chat_offset) == (True, 336, 341, -336)
    kb.show(291)  # the keyboard changed its frame (another input method)
    assert (kb.editor_bottom_inset, kb.chat_offset) == (296, -291)


def test_hiding_the_keyboard_puts_everything_back():
    kb = nk.KeyboardModel()
    kb.show(336)
    kb.hide()
    kb.hide()
    assert (kb.editor_bottom_inset, kb.chat_offset, kb.keyboard_height) == (46, 0, 0)


@pytest.mark.parametrize("height", [-1, math.nan, math.inf, 1e9])
def test_an_impossible_keyboard_height_is_refused(height):
    kb = nk.KeyboardModel()
    with pytest.raises(nk.ValidationError) as e:
        kb.show(height)
    assert e.value.field == "keyboard_height"
    assert not kb.shown
    panel = nk.SearchPanel()
    with pytest.raises(nk.ValidationError):
        panel.keyboard_will_show(height)


def test_the_search_panel_rests_with_a_50_point_strip_showing():
    panel = nk.SearchPanel()
    assert (panel.state, panel.top_offset, panel.revealed, panel.mask_count) == ("hidden", -50, 0, 0)
    panel.show()
    assert (panel.state, panel.top_offset, panel.revealed) == ("shown", -155, 105)


def test_a_drag_reports_the_total_translation_since_it_began_frame_by_frame():
    panel = nk.SearchPanel()
    frames = []
    for translation in (-10, -40, -80, -95):  # what a pan gesture reports: totals, not steps
        panel.drag(translation)
        frames.append(panel.top_offset)
    assert frames == [-60, -90, -130, -145] and panel.dragging
    assert panel.end_drag() == "shown" and panel.top_offset == -155
    panel.drag(10)  # a new drag starts from where the panel rests now
    assert panel.top_offset == -145


def test_the_search_panel_snaps_open_at_91_of_105_revealed_and_closed_below():
    panel = nk.SearchPanel()
    panel.drag(-91)
    assert panel.end_drag() == "shown"
    panel.drag(15)  # dragged down: 90 left above the strip
    assert panel.revealed == 90 and panel.end_drag() == "hidden" and panel.top_offset == -50
    panel.drag(-90.5)
    assert panel.end_drag() == "hidden"


def test_the_panel_follows_the_finger_unclamped_as_the_app_did():
    panel = nk.SearchPanel()
    panel.drag(-500)
    assert panel.top_offset == -550
    panel.drag(100)
    assert panel.top_offset == 50  # below the screen's bottom edge while the finger is there
    assert panel.end_drag() == "hidden"
    with pytest.raises(nk.ValidationError):
        panel.drag(math.nan)


def test_moves_requested_while_dragging_are_ignored():
    panel = nk.SearchPanel()
    panel.drag(-30)
    panel.show()
    panel.hide()
    assert (panel.top_offset, panel.state, panel.dragging) == (-80, "hidden", True)
    panel.end_drag()
    panel.show()
    assert panel.top_offset == -155


def test_only_a_shown_panel_follows_the_keyboard_with_one_mask_however_often_it_shows():
    panel = nk.SearchPanel()
    panel.keyboard_will_show(336)
    assert (panel.top_offset, panel.mask_count) == (-50, 0)  # hidden: not listening
    panel.keyboard_will_hide()
    panel.show()
    for _ in range(3):  # iOS 8 sent "will show" three times for a Chinese keyboard
        panel.keyboard_will_show(252)
    assert (panel.top_offset, panel.mask_count, panel.keyboard_shown) == (-(50 + 252 + 105), 1, True)


def test_a_keyboard_hide_sends_the_shown_panel_back_to_hidden():
    panel = nk.SearchPanel()
    panel.show()
    panel.keyboard_will_show(336)
    panel.keyboard_will_hide()
    assert (panel.state, panel.top_offset, panel.mask_count, panel.keyboard_shown) == ("hidden", -50, 0, False)
    panel.keyboard_will_show(336)  # hidden now: no longer listening
    assert (panel.top_offset, panel.mask_count) == (-50, 0)


def test_dragging_dismisses_the_keyboard_and_the_panel_stays_under_the_finger():
    panel = nk.SearchPanel()
    panel.show()
    panel.keyboard_will_show(336)
    assert panel.top_offset == -491
    panel.drag(20)
    # The keyboard went down (mask removed) but its "back to hidden" was a move during a drag.
    assert (panel.keyboard_shown, panel.mask_count, panel.top_offset, panel.state) == (False, 0, -471, "shown")
    panel.drag(400)
    assert panel.end_drag() == "hidden" and panel.top_offset == -50


def test_the_layout_docstring_examples_run():
    import doctest

    import noteskit.layout

    assert doctest.testmod(noteskit.layout).failed == 0
