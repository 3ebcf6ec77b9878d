"""Issue 12, items 2, 4 and 10: exact spans next to characters NFC replaces, cursors bound to their
search, and the chat demo's own search mode (literal, case-sensitive, chat order)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk

import search_oracle as oracle

BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)


def content_spans(store, text, query, case_sensitive=False):
    a = store.articles.create(title="t", content=text)
    hits = [h for h in store.articles.search(query, field="content", case_sensitive=case_sensitive) if h.article.id == a.id]
    store.articles.delete(a.id)
    return hits[0].spans["content"] if hits else []


# ---- Item 2: spans ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, query, expected", [
    ("10 \u2126 ab\uf900cd", " ", [(2, 3), (4, 5)]),            # not (2, 4) covering " Ω"
    ("10 \u2126 ab\uf900cd", "b", [(6, 7)]),                    # not (6, 8) covering "b豈"
    ("a\u0301\u0301\u0301b", "\u0301", [(2, 3), (3, 4)]),       # not [(0, 4), (0, 4)]
    ("10 \u2126 ab\uf900cd", "\u03a9", [(3, 4)]),              # the OHM SIGN alone
    ("10 \u2126 ab\uf900cd", "\u8c48c", [(7, 9)]),             # the compatibility ideograph and what follows
    ("cafe\u0301 cafe\u0301", "é", [(3, 5), (9, 11)]),          # a composed match still covers its two code points
    ("\u1e0b\u0323", "\u0307", [(0, 1)]),                        # ḋ + dot below is ḍ + dot above: the dot came from ḋ
])
def test_spans_next_to_characters_nfc_replaces_cover_just_what_matched(store, text, query, expected):
    assert content_spans(store, text, query) == expected
    assert oracle.spans(text, query, False) == expected


def test_a_span_slices_out_exactly_the_matched_text(store):
    text = "x\u2126y \uf900\uf900 \u212bngstr\u00f6m"
    for query, matched in [("ω", ["\u2126"]), ("豈", ["\uf900", "\uf900"]), ("å", ["\u212b"]), ("y", ["y"])]:
        spans = content_spans(store, text, query)
        assert [text[s:e] for s, e in spans] == matched


@pytest.mark.parametrize("text", ["a\u0301\u0316\u0301\u0316", "x\u0344\u0344", "\u0f73\u0f73\u0f73", "e\u0301\u0301\u0301",
                                  "\u1100\u1161\u11a8\u1161", "a\u0308\u0301\u0304\u0323"])
def test_spans_are_disjoint_and_ascending_even_inside_reordered_marks(store, text):
    for query in {text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)} | {"\u0301", "\u0316"}:
        spans = content_spans(store, text, query)
        assert spans == oracle.spans(text, query, False)
        assert all(s < e for s, e in spans)
        assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))


# ---- Item 4: cursors name their search ---------------------------------------------------------

def test_a_search_cursor_is_refused_by_another_query_field_or_case_mode(store):
    store.articles.create_many([{"title": "apple banana", "content": "apple banana"} for _ in range(5)])
    cursor = store.articles.search("banana", limit=2).next_cursor
    assert len(store.articles.search("banana", limit=2, after=cursor).items) == 2
    assert len(store.articles.search("BANANA", limit=2, after=cursor).items) == 2  # the same search, folded
    for other in [dict(query="apple"), dict(query="banana", field="title"), dict(query="banana", case_sensitive=True)]:
        query = other.pop("query")
        with pytest.raises(nk.ValidationError) as e:
            store.articles.search(query, after=cursor, **other)
        assert e.value.field == "cursor" and e.value.code == "cursor_other_search"
    with pytest.raises(nk.ValidationError) as e:
        store.articles.list(after=cursor)
    assert e.value.code == "cursor_other_list"


def test_a_message_search_cursor_is_refused_by_another_query_or_order(store):
    conv = store.conversations.create("c")
    store.messages.insert_many(conv.id, [{"content": "hit apple", "from_me": True}] * 5)
    cursor = store.messages.search("hit", limit=2).next_cursor
    for query, order in [("apple", "desc"), ("hit", "asc")]:
        with pytest.raises(nk.ValidationError) as e:
            store.messages.search(query, limit=2, after=cursor, order=order)
        assert e.value.code == "cursor_other_search"


# ---- Item 10: the chat demo's search ---------------------------------------------------------------

def demo_search(messages, query):
    """The demo: for every message in order, [content rangeOfString:query].length > 0."""
    return [m.id for m in messages if query and query in m.content]


def test_the_chat_demos_search_literal_case_sensitive_in_chat_order(store):
    conv = store.conversations.create("GY")
    texts = ["Hello", "hello there", "say HELLO", "hello, hello", "bye", "%hello_", "Hello again"]
    made = store.messages.insert_many(conv.id, [
        {"content": t, "from_me": i % 2 == 0, "sent_at": BASE + timedelta(seconds=i)} for i, t in enumerate(texts)])
    for query in ("hello", "Hello", "HELLO", "%hello_", "o, h", "bye"):
        got = [h.message.id for h in store.messages.search(query, conversation=conv.id, case_sensitive=True, order="asc")]
        assert got == demo_search(made, query)
    paged = [h.message.id for h in store.messages.search_iter("hello", case_sensitive=True, order="asc", batch_size=2)]
    assert paged == demo_search(made, "hello")
    assert [h.message.id for h in store.messages.search("hello", case_sensitive=True)] == demo_search(made, "hello")[::-1]


def test_chat_order_pages_by_sent_time_then_id_under_every_plan(store, monkeypatch):
    conv = store.conversations.create("c")
    made = store.messages.insert_many(conv.id, [
        {"content": "ping", "from_me": True, "sent_at": BASE + timedelta(minutes=m)} for m in (5, 1, 5, 3, 1)])
    expected = [m.id for m in sorted(made, key=lambda m: (m.sent_at, m.id))]
    for plan in ("scan", "index", "handover"):
        monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
        assert [h.message.id for h in store.messages.search_iter("ping", order="asc", batch_size=2)] == expected


def test_an_unknown_order_is_refused(store):
    with pytest.raises(nk.ValidationError) as e:
        store.messages.search("x", order="newest")
    assert e.value.field == "order"
