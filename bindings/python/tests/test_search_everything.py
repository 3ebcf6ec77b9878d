"""Issue 13, item 6: one search over articles and messages (``store.search``), and snippets of hits."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noteskit as nk
from noteskit import _ffi

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def mixed_store(store: nk.Store) -> None:
    """Articles (created now) and messages spread over old and future times, many sharing one millisecond."""
    conv = store.conversations.create("Alice")
    other = store.conversations.create("Bob")
    store.articles.create_many([{"title": f"note {i}", "content": "weather " * (i % 3) + f"text {i}",
                                 "created_at": at(i * 7 % 50), "updated_at": at(60)} for i in range(40)])
    store.messages.insert_many(conv.id, [{"content": f"weather {i}" if i % 2 else f"sun {i}", "from_me": i % 3 == 0,
                                          "sent_at": at(i * 5 % 50)} for i in range(40)])
    store.messages.insert_many(other.id, [{"content": f"the weather {i}", "from_me": False, "sent_at": at(10)} for i in range(5)])


def oracle(store: nk.Store, query: str, kinds=("articles", "messages"), since=None, until=None):
    """Every (kind, id) the search must give, in its order, built from plain reads."""
    rows = []
    if "articles" in kinds:
        rows += [(a.created_at, 1, a.id, "article") for a in store.articles.iter()
                 if query.casefold() in a.title.casefold() or query.casefold() in a.content.casefold()]
    if "messages" in kinds:
        rows += [(m.sent_at, 0, m.id, "message") for m in store.messages.select() if query.casefold() in m.content.casefold()]
    rows = [r for r in rows if (since is None or r[0] >= since) and (until is None or r[0] < until)]
    rows.sort(reverse=True)
    return [(kind, id) for _, _, id, kind in rows]


def walk(store: nk.Store, query: str, limit: int, **kw):
    seen, after = [], None
    while True:
        page = store.search(query, limit=limit, after=after, **kw)
        assert len(page) <= limit
        seen += [(hit.kind, hit.record.id) for hit in page]
        if not page.has_more:
            assert page.next_cursor is None
            return seen
        after = page.next_cursor


def test_one_search_finds_articles_and_messages_newest_first_each_hit_saying_its_kind(store):
    a = store.articles.create(title="Weekend", content="Hiking if the weather holds")
    conv = store.conversations.create("Alice")
    old = conv.receive("weather was bad", sent_at=at(0))
    new = conv.receive("weather looks good!", sent_at=datetime(2100, 1, 1, tzinfo=timezone.utc))
    page = store.search("WEATHER")
    assert [(hit.kind, hit.record.id) for hit in page] == [("message", new.id), ("article", a.id), ("message", old.id)]
    assert isinstance(page[0], nk.MessageHit) and isinstance(page[1], nk.SearchHit)
    assert page[1].article == a and page[1].spans == {"title": [], "content": [(14, 21)]}
    assert page[0].spans == {"content": [(0, 7)]} and page.next_cursor is None and not page.has_more


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 20])
def test_the_cursor_walks_across_kinds_without_repeating_or_skipping(store, limit):
    mixed_store(store)
    assert walk(store, "weather", limit) == oracle(store, "weather")
    assert walk(store, "", limit) == oracle(store, "")  # an empty query lists everything


def test_within_one_millisecond_articles_come_before_messages_then_newest_id(store):
    conv = store.conversations.create("c")
    ms = store.messages.insert_many(conv.id, [{"content": "x", "from_me": True, "sent_at": at(1)} for _ in range(3)])
    arts = store.articles.create_many([{"title": "x", "content": "x", "created_at": at(1)} for _ in range(3)])
    expected = [("article", a.id) for a in reversed(arts)] + [("message", m.id) for m in reversed(ms)]
    assert walk(store, "x", 1) == expected == walk(store, "x", 4)


def test_since_and_until_bound_the_time_since_inclusive_until_exclusive(store):
    mixed_store(store)
    since, until = at(10), at(30)
    expected = oracle(store, "weather", since=since, until=until)
    assert expected and walk(store, "weather", 3, since=since, until=until) == expected
    naive = walk(store, "weather", 3, since=since.replace(tzinfo=None), until=until.replace(tzinfo=None))
    assert naive == expected  # naive datetimes are UTC
    berlin = timezone(timedelta(hours=1))
    assert walk(store, "weather", 5, since=since.astimezone(berlin), until=until) == expected
    hits_at_10 = [h for h in store.search("weather", since=at(10), until=at(10) + timedelta(milliseconds=1), limit=100)]
    assert hits_at_10 and all(h.record.id for h in hits_at_10)


def test_since_after_until_is_empty_and_years_1_and_9999_work(store):
    mixed_store(store)
    assert store.search("weather", since=at(30), until=at(10)).items == []
    assert store.search("weather", since=at(10), until=at(10)).items == []
    low, high = datetime(1, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 31, 23, 59, tzinfo=timezone.utc)
    assert walk(store, "weather", 9, since=low, until=high) == oracle(store, "weather")


def test_kinds_choose_what_is_searched(store):
    mixed_store(store)
    assert walk(store, "weather", 4, kinds=("articles",)) == oracle(store, "weather", kinds=("articles",))
    assert walk(store, "weather", 4, kinds="messages") == oracle(store, "weather", kinds=("messages",))
    for bad in [(), ("notes",), ("articles", "chats")]:
        with pytest.raises(nk.ValidationError) as e:
            store.search("weather", kinds=bad)
        assert e.value.field == "kinds"
    with pytest.raises(nk.InvalidArgumentError):
        store.search("weather", kinds=5)  # type: ignore[arg-type]


def test_a_cursor_only_continues_its_own_search(store):
    mixed_store(store)
    cursor = store.search("weather", limit=2).next_cursor
    for other in [dict(query="sun"), dict(query="weather", kinds=("articles",)), dict(query="weather", since=at(1)),
                  dict(query="weather", until=at(40))]:
        query = other.pop("query")
        with pytest.raises(nk.ValidationError) as e:
            store.search(query, after=cursor, **other)
        assert e.value.code == "cursor_other_search"
    with pytest.raises(nk.ValidationError) as e:
        store.search("weather", after=store.articles.search("weather", limit=1).next_cursor)
    assert e.value.code == "cursor_other_list"
    with pytest.raises(nk.ValidationError):
        store.search("weather", after=cursor[:-1] + ("0" if cursor[-1] != "0" else "1"))  # forged


def test_records_written_while_paging_are_never_seen_twice(store):
    mixed_store(store)
    page = store.search("weather", limit=5)
    first = [(h.kind, h.record.id) for h in page]
    store.articles.create(title="weather now", content="x")           # newer than the cursor: not on later pages
    store.conversations.create("Carol").send("weather now")
    rest = []
    after = page.next_cursor
    while after:
        page = store.search("weather", limit=5, after=after)
        rest += [(h.kind, h.record.id) for h in page]
        after = page.next_cursor
    assert first + rest == oracle(store, "weather")[2:]  # the two new ones lead a fresh first page


def test_bad_arguments_are_clear_errors_and_a_closed_store_too(store):
    with pytest.raises(nk.ValidationError):
        store.search("x", limit=0)
    with pytest.raises(nk.ValidationError):
        store.search("a\x00b")
    with pytest.raises(nk.InvalidArgumentError):
        store.search("x", since="yesterday")  # type: ignore[arg-type]
    store.close()
    with pytest.raises(nk.ClosedError):
        store.search("x")


# ---- Snippets --------------------------------------------------------------------------------------

ZWJ_FAMILY = "👩\u200d👩\u200d👧"
FLAG = "🇯🇵"
E_ACUTE_GRAVE = "e\u0301\u0300"
HANGUL = "\u1100\u1161\u11a8"  # a syllable as three jamo: one character
CLUSTERS = ["a", "b", " ", "z", "天", "气", ZWJ_FAMILY, FLAG, "🇫🇷", E_ACUTE_GRAVE, HANGUL, "👍🏽", "\r\n", "❤\ufe0f", "ü"]


def runs_of(snippet_text: str, text_clusters):
    """Every run (start, end) of `text_clusters` the snippet can be showing (ellipses removed); none if it cuts one."""
    body = snippet_text.removeprefix("…").removesuffix("…")
    flat = ["".join(" " if ch in "\r\n\t" else ch for ch in c) for c in text_clusters]
    runs = []
    for start in range(len(flat) + 1):
        run, end = "", start
        while len(run) < len(body) and end < len(flat):
            run += flat[end]
            end += 1
        if run == body:
            runs.append((start, end))
    return runs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CLUSTERS), min_size=1, max_size=60), st.data(), st.integers(0, 30))
def test_a_snippet_never_cuts_a_character_and_centres_the_first_match(text_clusters, data, width):
    text = "".join(text_clusters)
    first = data.draw(st.integers(0, len(text_clusters) - 1))
    last = data.draw(st.integers(first + 1, len(text_clusters)))
    start = len("".join(text_clusters[:first]))
    end = start + len("".join(text_clusters[first:last]))
    s = nk.search.snippet(text, [(start, end)], width)
    if width == 0:
        assert s == nk.Snippet("", [])
        return
    n = len(text_clusters)
    runs = [(a, b) for a, b in runs_of(s.text, text_clusters)
            if s.text.startswith("…") == (a > 0) and s.text.endswith("…") == (b < n)
            and s.spans and s.spans[0][0] == (1 if a else 0) + len("".join(text_clusters[a:first]))]
    assert runs, f"{s!r} is not a run of whole characters of {text!r} around the match"
    a, b = runs[0]
    assert b - a <= width and (b - a == width or (a, b) == (0, n))
    matched = last - first
    if matched <= width:
        assert a <= first and last <= b  # the whole match is shown ...
        left, right = first - a, b - last
        assert abs(left - right) <= 1 or a == 0 or b == len(text_clusters)  # ... in the middle
        lead = 1 if a else 0
        assert len(s.spans) == 1
        shown = s.text[s.spans[0][0]:s.spans[0][1]]
        assert shown == "".join(" " if ch in "\r\n" else ch for ch in text[start:end])
        assert s.spans[0][0] == lead + len("".join(text_clusters[a:first]))
    else:  # a match wider than the snippet: its first `width` characters, then "…"
        assert a == first and b == first + width and s.text.endswith("…")


def test_snippet_width_zero_negative_and_smaller_than_the_match(store):
    store.articles.create(title="t", content="x" * 50 + "needle in the haystack" + "y" * 50)
    hit = store.articles.search("needle in the haystack")[0]
    assert hit.snippet(width=0) == nk.Snippet("", [])
    with pytest.raises(nk.ValidationError) as e:
        hit.snippet(width=-1)
    assert e.value.field == "width"
    assert hit.snippet(width=6) == nk.Snippet("…needle…", [(1, 7)])  # the match's first 6 characters
    assert hit.snippet(width=1) == nk.Snippet("…n…", [(1, 2)])
    with pytest.raises(nk.InvalidArgumentError):
        hit.snippet(width=2.5)  # type: ignore[arg-type]
    with pytest.raises(nk.InvalidArgumentError):
        hit.snippet(width=True)  # type: ignore[arg-type]
    with pytest.raises(nk.ValidationError):
        hit.snippet(field="body")


def test_a_snippet_shows_every_match_inside_it_and_keeps_short_text_whole(store):
    conv = store.conversations.create("c")
    conv.send("ab ab\nab\tab")
    hit = store.messages.search("AB")[0]
    assert hit.snippet() == nk.Snippet("ab ab ab ab", [(0, 2), (3, 5), (6, 8), (9, 11)])
    assert hit.snippet(width=7) == nk.Snippet("ab ab a…", [(0, 2), (3, 5), (6, 7)])


def test_a_match_inside_an_emoji_sequence_keeps_the_sequence_whole(store):
    conv = store.conversations.create("c")
    conv.send("x" * 30 + "👩\u200d💻 codes" + "y" * 30)
    hit = store.messages.search("👩")[0]  # matches the first code point of the ZWJ sequence
    s = hit.snippet(width=5)
    assert "👩\u200d💻" in s.text and s.text.count("\u200d") == 1
    assert s.text[s.spans[0][0]:s.spans[0][1]] == "👩"


def test_article_snippets_take_the_field_that_matched(store):
    store.articles.create(title="天气 report", content="nothing to see here")
    store.articles.create(title="report", content="the 天气 is fine")
    only_title, in_content = store.articles.search("天气")[1], store.articles.search("天气")[0]
    assert only_title.snippet() == nk.Snippet("天气 report", [(0, 2)])
    assert in_content.snippet() == nk.Snippet("the 天气 is fine", [(4, 6)])
    assert in_content.snippet(field="title") == nk.Snippet("report", [])
    assert store.articles.search("")[0].snippet(width=4) == nk.Snippet("the …", [])  # no match: the start


def test_the_snippet_call_refuses_spans_outside_the_text():
    from ctypes import byref, c_int64, c_void_p
    out = c_void_p()
    spans = (c_int64 * 2)(0, 10)
    assert _ffi.nk_snippet("abc".encode(), spans, 1, 5, byref(out)) == 1  # NK_E_INVALID_ARGUMENT
    assert _ffi.nk_snippet("abc".encode(), None, 1, 5, byref(out)) == 1  # NK_E_INVALID_ARGUMENT
    assert _ffi.nk_snippet("abc".encode(), spans, -1, 5, byref(out)) == 1  # NK_E_INVALID_ARGUMENT
    assert _ffi.nk_snippet(None, None, 0, 5, byref(out)) == 1  # NK_E_INVALID_ARGUMENT
    assert _ffi.nk_snippet("abc".encode(), None, 0, 5, None) == 1  # NK_E_INVALID_ARGUMENT
    assert _ffi.nk_snippet(b"\xff\xfe", None, 0, 5, byref(out)) == 1  # NK_E_INVALID_ARGUMENT
    with pytest.raises(nk.InvalidArgumentError):
        nk.search.snippet("abc", [(2, 9)], 5)


def test_the_command_line_searches_everything_with_snippets(tmp_path):
    import subprocess
    import sys
    db = tmp_path / "n.db"
    with nk.Store.open(db) as store:
        article = store.articles.create(title="Weekend", content="x" * 200 + " the weather holds " + "y" * 200)
        alice = store.conversations.create("Alice")
        # A second after the article, so that "newest first" does not depend on the clock's speed.
        store.messages.insert_many(alice.id, [{"content": "weather looks good", "from_me": True,
                                               "sent_at": article.created_at + timedelta(seconds=1)}])
    run = subprocess.run([sys.executable, "-m", "noteskit", "--db", str(db), "search", "weather", "--everything"],
                         capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].startswith("message #1") and "Alice, me: weather looks good" in lines[0]
    assert lines[1].startswith("article #1") and "· …" in lines[1] and "the weather holds" in lines[1]
    assert len(lines[1].split("· ", 1)[1]) == 62  # 60 characters and two "…"
    bad = subprocess.run([sys.executable, "-m", "noteskit", "--db", str(db), "search", "w", "--everything", "--messages"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "--everything" in bad.stderr
