"""The search's fast paths give the same pages as the plain ones (issue 11: frequent searches).

- A first page's scan reads the table in rowid order when the ids follow the times, and must
  notice when they do not (records written out of time order), whatever the plan.
- ``store.search`` searches the messages first and the articles only back to the time of the last
  message hit: an article at exactly that time, or a page that the messages do not fill, must
  still come out as the merged order says.
- Queries whose grams are very frequent but whose phrase is rare, one-character queries and hostile
  text go through the planner's branches with the same results.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk

import search_oracle as oracle

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
PLANS = ["auto", "scan", "index", "handover"]


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def every_page(search, limit):
    got, after = [], None
    while True:
        page = search(limit=limit, after=after)
        got += [(hit.record.id, hit.spans) for hit in page]
        if page.next_cursor is None:
            return got
        after = page.next_cursor


def article_pages(store, query, limit, **kw):
    return every_page(lambda **p: store.articles.search(query, **p, **kw), limit)


def message_pages(store, query, limit, **kw):
    return every_page(lambda **p: store.messages.search(query, **p, **kw), limit)


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("times", ["in order", "reversed", "one late old", "one early new", "all equal"])
def test_a_frequent_search_pages_newest_first_whatever_order_the_records_were_written_in(plan, times, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    n = 60
    minutes = {"in order": list(range(n)), "reversed": list(range(n, 0, -1)), "one late old": list(range(1, n)) + [0],
               "one early new": [10 * n] + list(range(1, n)), "all equal": [5] * n}[times]
    with nk.Store.memory() as store:
        store.articles.create_many([{"title": f"day {k}", "content": f"the weather {k} 今天天气真好" if k % 3 else f"sun {k}",
                                     "created_at": at(m)} for k, m in enumerate(minutes)])
        conv = store.conversations.create("c")
        store.messages.insert_many(conv.id, [{"content": f"weather {k}" if k % 4 else "rain", "from_me": False,
                                              "sent_at": at(m)} for k, m in enumerate(minutes)])
        articles = list(store.articles.iter())
        messages = store.messages.history(conv.id, limit=1000).items
        for query in ("weather", "天气", "e", "W"):
            for limit in (1, 7, 20):
                assert article_pages(store, query, limit) == oracle.search(articles, query), (query, limit)
                expected = oracle.search_messages(messages, query)
                assert message_pages(store, query, limit) == expected, (query, limit)
                assert every_page(lambda **p: store.messages.search(query, order="asc", **p), limit) == expected[::-1]


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("times", ["in order", "one deep late old", "one deep early new", "one old early new"])
def test_a_scan_that_goes_on_past_the_first_short_scan_notices_records_out_of_time_order(plan, times, monkeypatch):
    # More records than the first short scan reads (4 × 21 + 16), the query in one of 30: the scan
    # goes on in rowid order where the short one stopped, and must still notice a record out of
    # time order far from the newest ones (one that only the count along the time index shows too).
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    n = 900
    minutes = list(range(n))
    if times == "one deep late old":
        minutes[n - 400] = -5
    elif times == "one deep early new":
        minutes[n - 400] = 10 * n
    elif times == "one old early new":
        minutes[3] = 10 * n
    with nk.Store.memory() as store:
        store.articles.create_many([{"title": f"t{k}", "content": f"{'zq' if k % 30 == 7 else 'ab'} {k}", "created_at": at(m)}
                                    for k, m in enumerate(minutes)])
        conv = store.conversations.create("c")
        store.messages.insert_many(conv.id, [{"content": f"{'zq' if k % 30 == 7 else 'ab'} {k}", "from_me": False,
                                              "sent_at": at(m)} for k, m in enumerate(minutes)])
        articles = list(store.articles.iter())
        messages = store.messages.history(conv.id, limit=1000).items
        for query in ("z", "zq", "Q"):
            for limit in (1, 7, 20):
                assert article_pages(store, query, limit) == oracle.search(articles, query), (query, limit)
                assert message_pages(store, query, limit) == oracle.search_messages(messages, query), (query, limit)


@pytest.mark.parametrize("plan", PLANS)
def test_a_query_whose_grams_are_everywhere_but_whose_phrase_is_rare_finds_only_the_phrase(plan, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    with nk.Store.memory() as store:
        rows = [{"title": "ab", "content": "ab ba " * 20, "created_at": at(k)} for k in range(200)]
        rows[17]["content"] += "abab"
        rows[150]["title"] = "xabab"
        store.articles.create_many(rows)
        articles = list(store.articles.iter())
        for query in ("abab", "ABAB", "ba ab", "b", "aba"):
            assert article_pages(store, query, 20) == oracle.search(articles, query), query
        assert [hit.article.id for hit in store.articles.search("abab")] == [151, 18]


@pytest.mark.parametrize("plan", PLANS)
def test_hostile_text_and_one_character_queries_give_the_oracles_pages(plan, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    texts = ["e\u0301t\u00e9", "STRAẞE straße", "\uf900豈", "👨‍👩‍👧 family", "K k \u212a", "%_\\*\"'", "a\u0301\u0301b",
             "Ω \u2126 ω", "ﬁ fi FI"]
    with nk.Store.memory() as store:
        store.articles.create_many([{"title": t[:3] or "x", "content": t * (1 + k % 3), "created_at": at(k % 5)}
                                    for k, t in enumerate(texts * 8)])
        conv = store.conversations.create("c")
        store.messages.insert_many(conv.id, [{"content": t, "from_me": True, "sent_at": at(k % 4)}
                                             for k, t in enumerate(texts * 8)])
        articles = list(store.articles.iter())
        messages = store.messages.history(conv.id, limit=1000).items
        for query in ("é", "e", "ß", "豈", "\uf900", "👨", "k", "K", "\u212a", "%", "_", "\\", "\u0301", "ω", "fi", "ﬁ"):
            for case_sensitive in (False, True):
                assert article_pages(store, query, 5, case_sensitive=case_sensitive) == \
                    oracle.search(articles, query, case_sensitive=case_sensitive), (query, case_sensitive)
                assert message_pages(store, query, 5, case_sensitive=case_sensitive) == \
                    oracle.search_messages(messages, query, case_sensitive=case_sensitive), (query, case_sensitive)


def merged(store, query, since=None, until=None):
    rows = [(a.created_at, 1, a.id, "article") for a in store.articles.iter()
            if query.casefold() in a.title.casefold() or query.casefold() in a.content.casefold()]
    rows += [(m.sent_at, 0, m.id, "message") for m in store.messages.select() if query.casefold() in m.content.casefold()]
    rows = [r for r in rows if (since is None or r[0] >= since) and (until is None or r[0] < until)]
    return [(kind, id) for _, _, id, kind in sorted(rows, reverse=True)]


def all_pages(store, query, limit, **kw):
    seen, after = [], None
    while True:
        page = store.search(query, limit=limit, after=after, **kw)
        seen += [(hit.kind, hit.record.id) for hit in page]
        if page.next_cursor is None:
            return seen
        after = page.next_cursor


@pytest.mark.parametrize("plan", PLANS)
def test_one_search_over_both_kinds_keeps_an_article_at_the_time_of_the_last_message_that_fills_the_page(plan, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    with nk.Store.memory() as store:
        conv = store.conversations.create("c")
        # Dense messages, every minute; articles rarely, some exactly on a message's millisecond.
        store.messages.insert_many(conv.id, [{"content": f"weather {k}", "from_me": False, "sent_at": at(k)} for k in range(100)])
        store.articles.create_many([{"title": "t", "content": "weather", "created_at": at(m)} for m in (0, 37, 79, 79, 80, 99, 100)])
        store.articles.create_many([{"title": "t", "content": "sun", "created_at": at(m)} for m in (78, 81)])
        for limit in (1, 2, 3, 20, 21, 22, 200):
            assert all_pages(store, "weather", limit) == merged(store, "weather"), limit
            assert all_pages(store, "weather", limit, since=at(79)) == merged(store, "weather", since=at(79)), limit
            assert all_pages(store, "weather", limit, until=at(80)) == merged(store, "weather", until=at(80)), limit
            assert all_pages(store, "sun", limit) == merged(store, "sun"), limit
        # The first page holds the 21 newest hits: the articles at 100, 99 and 80 among the messages.
        first = store.search("weather", limit=21)
        assert [(h.kind, h.record.created_at if h.kind == "article" else h.record.sent_at) for h in first][:4] == [
            ("article", at(100)), ("article", at(99)), ("message", at(99)), ("message", at(98))]
        assert first[0].snippet(width=20).text == "weather"
