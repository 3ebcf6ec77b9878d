"""How records show in a notebook: pages as HTML tables, messages as a chat, text always escaped."""
from __future__ import annotations

import noteskit as nk


def test_a_page_of_articles_shows_as_a_table_with_every_title_escaped(store: nk.Store) -> None:
    store.articles.create(title="<script>alert(1)</script>", content="a & b")
    store.articles.create(title="周末", content="今天天气真好")
    html = store.articles.list(limit=1)._repr_html_()
    assert html.startswith("<table") and "周末" in html and "1 item · more" in html
    html = store.articles.list()._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "a &amp; b" in html


def test_a_page_of_messages_shows_mine_on_the_right(store: nk.Store) -> None:
    conv = store.conversations.create("Alice")
    conv.send("sent by me")
    conv.receive("received")
    html = conv.history()._repr_html_()
    mine, theirs = html.split("sent by me")[0].rsplit("<div", 1)[1], html.split("received")[0].rsplit("<div", 1)[1]
    assert "text-align:right" in mine and "text-align:left" in theirs


def test_a_long_content_is_cut_in_a_table(store: nk.Store) -> None:
    store.articles.create(title="long", content="字" * 5000)
    html = store.articles.list()._repr_html_()
    assert html.count("字") < 1000 and "…" in html


def test_an_article_shows_as_a_one_row_table(store: nk.Store) -> None:
    a = store.articles.create(title="周末", content="x")
    assert a._repr_html_().count("<tr>") == 1


def test_a_conversation_shows_as_the_chat_app_drew_it(store: nk.Store) -> None:
    conv = store.conversations.create("Alice")
    assert conv._repr_png_() is None  # nothing to draw yet: the notebook falls back to the text
    conv.send("周末有空吗？")
    conv.receive("Saturday!")
    png = conv._repr_png_()
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    with store.layout(width=375) as layout:
        bubbles = layout.bubbles([m.id for m in conv.history()])
    assert (width, height) == (375, sum(b.row_height for b in bubbles))


def test_search_hits_show_with_the_matches_marked(store: nk.Store) -> None:
    store.articles.create(title="天气预报", content="明天<降温>，今天天气真好")
    html = store.articles.search("天气")._repr_html_()
    assert "<mark" in html and html.count("天气</mark>") == 2 and "&lt;降温&gt;" in html
    conv = store.conversations.create("Alice")
    conv.send("see you at 8")
    html = store.messages.search("YOU")._repr_html_()
    assert ">you</mark>" in html and "text-align:right" in html
