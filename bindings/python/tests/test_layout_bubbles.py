"""Chat bubbles: the formula on top of measured text, right-aligned when sent by me, cached, drawn."""
from __future__ import annotations

from pathlib import Path

import pytest

import noteskit as nk
from test_layout_pictures import pixel, read_png

TEXTS = ["你好", "好的，我们下午三点在公园门口见面吧！", "ok", "A longer English message that certainly has to wrap onto "
         "a second line at this width, maybe a third.", "第一行\n第二行", "😀" * 12]


def expected(text: str, from_me: bool, width: float, style: nk.BubbleStyle = nk.BubbleStyle()) -> nk.Bubble:
    limit = min(style.max_text_width, width - 2 * style.side_margin - 2 * style.inset_side - style.tail_margin)
    m = nk.measure_text(text, limit, font=style.font, size=style.size)
    text_height = m.height if style.max_text_height is None else min(m.height, style.max_text_height)
    bubble_width = m.width + 2 * style.inset_side + style.tail_margin
    height = text_height + style.inset_top + style.inset_bottom
    x = width - style.side_margin - bubble_width if from_me else style.side_margin
    return nk.Bubble(x, bubble_width, height, m.width, text_height, from_me, style.row_margin_top + height + style.row_margin_bottom)


@pytest.fixture
def chat(store):
    conv = store.conversations.create("Alice")
    messages = [conv.send(t) if n % 2 == 0 else conv.receive(t) for n, t in enumerate(TEXTS)]
    return conv, messages


@pytest.mark.parametrize("width", [150, 320, 375, 1024])
def test_a_bubble_is_the_text_rect_plus_insets_right_aligned_when_sent_by_me(store, chat, width):
    _, messages = chat
    with store.layout(width=width) as lay:
        for m in messages:
            assert lay.bubble(m.id) == expected(m.content, m.from_me, width)
        assert lay.bubbles([m.id for m in messages]) == [expected(m.content, m.from_me, width) for m in messages]


def test_bubble_text_wraps_at_the_style_maximum_text_width(store, chat):
    _, messages = chat
    style = nk.BubbleStyle(max_text_width=120, size=14, tail_margin=0)
    with store.layout(width=375, bubble_style=style) as lay:
        long = lay.bubble(messages[3].id)
        assert long.text_width <= 120 and long.height > lay.bubble(messages[2].id).height
        assert long == expected(messages[3].content, messages[3].from_me, 375, style)


def test_the_chat_demos_999_cap_on_a_bubbles_text_height_is_an_option_off_by_default(store, tmp_path):
    conv = store.conversations.create("Bob")
    long = conv.send("今天天气真好，我们去公园散步吧。" * 120)
    short = conv.receive("好的")
    assert nk.BubbleStyle().max_text_height is None
    with store.layout(width=375) as lay:
        assert lay.bubble(long.id).text_height > 999
    demo = nk.BubbleStyle(max_text_height=999)
    assert demo.fingerprint != nk.BubbleStyle().fingerprint
    with store.layout(width=375, bubble_style=demo) as lay:
        capped = lay.bubble(long.id)
        assert capped.text_height == 999 and capped == expected(long.content, True, 375, demo)
        assert lay.bubble(short.id) == expected(short.content, False, 375, demo)
        picture = lay.render_conversation(conv.id, tmp_path / "demo.png")
        assert picture.height == capped.row_height + lay.bubble(short.id).row_height
    with pytest.raises(nk.ValidationError) as e:
        nk.BubbleStyle(max_text_height=0)
    assert e.value.field == "max_text_height"


def test_sent_bubbles_end_at_the_right_margin_and_received_ones_start_at_the_left(store, chat):
    _, messages = chat
    with store.layout(width=375) as lay:
        for m in messages:
            b = lay.bubble(m.id)
            assert b.from_me == m.from_me
            assert (b.x + b.width == 365) if m.from_me else (b.x == 10)


def test_bubbles_are_cached_and_a_deleted_message_or_conversation_drops_them(store, chat):
    conv, messages = chat
    with store.layout(width=375) as lay:
        lay.bubbles([m.id for m in messages])
        lay.bubbles([m.id for m in messages])
        assert (lay.stats().hits, lay.stats().misses) == (len(messages), len(messages))
        store.messages.delete(messages[0].id)
        with pytest.raises(nk.NotFoundError):
            lay.bubble(messages[0].id)
        conv.delete()
        with pytest.raises(nk.NotFoundError):
            lay.bubble(messages[1].id)
        assert lay.stats().entries == 0


def test_message_rows_and_prefetch(store, chat):
    _, messages = chat
    ids = [m.id for m in messages]
    with store.layout(width=375) as lay:
        rows = lay.rows(ids, kind="message")
        assert rows.total_height == 150 * len(ids)
        assert lay.prefetch(ids, kind="message", threads=2) == len(ids)
        assert rows.total_height == sum(b.row_height for b in lay.bubbles(ids))
        with pytest.raises(nk.NotFoundError):
            lay.article_height(ids[0])  # a message id is not an article id


def test_unknown_messages_and_conversations_are_not_found(store, chat, tmp_path):
    conv, _ = chat
    empty = store.conversations.create("Bob")
    with store.layout(width=375) as lay:
        with pytest.raises(nk.NotFoundError):
            lay.bubble(987654)
        with pytest.raises(nk.NotFoundError):
            lay.prefetch([987654], kind="message")
        with pytest.raises(nk.NotFoundError):
            lay.render_conversation(987654, tmp_path / "x.png")
        with pytest.raises(nk.ValidationError):
            lay.render_conversation(empty.id, tmp_path / "x.png")


def test_a_rendered_conversation_draws_each_bubble_at_its_frame(store, chat, tmp_path):
    conv, messages = chat
    with store.layout(width=375) as lay:
        picture = lay.render_conversation(conv.id, tmp_path / "chat.png")
        bubbles = lay.bubbles([m.id for m in messages])
        assert (picture.width, picture.height, picture.rows) == (375, sum(b.row_height for b in bubbles), len(messages))
        _, _, rows = read_png(Path(picture.path))
        style = lay.bubble_style
        background = pixel(rows, 0, 0)
        top = 0.0
        for b in bubbles:
            mid_y = int(top + style.row_margin_top + b.height / 2)
            inside_x = int(b.x + b.width - style.tail_margin - 3) if b.from_me else int(b.x + style.tail_margin + 3)
            outside_x = int(b.x - 3) if b.from_me else int(b.x + b.width + 3)
            assert pixel(rows, inside_x, mid_y) != background
            assert pixel(rows, outside_x, mid_y) == background
            assert pixel(rows, inside_x, int(top + 1)) == background  # the row margin above the bubble
            top += b.row_height


def test_a_history_taller_than_a_picture_draws_its_newest_messages(store, tmp_path):
    conv = store.conversations.create("Long")
    made = store.messages.insert_many(conv.id, [{"content": f"消息 {n}\n第二行\n第三行", "from_me": n % 2 == 0}
                                                for n in range(500)])
    with store.layout(width=375) as lay:
        picture = lay.render_conversation(conv.id, tmp_path / "long.png")
        assert 0 < picture.rows < 500 and picture.height <= 32_000
        newest = lay.bubbles([m.id for m in made[-picture.rows:]])
        assert picture.height == sum(b.row_height for b in newest)
