"""Search agrees with a plain-Python oracle on every page, for random stores and hostile queries."""
from __future__ import annotations

import unicodedata
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noteskit as nk

import search_oracle as oracle

HOSTILE = ["'", "''", '"', "%", "_", "*", "\\", "\\%", "%_", "' OR 1=1 --", "AND", "a AND b", "NEAR(", "NEAR(a b)",
           "^", "-", "a*", '"a"', "OR", "NOT", "👨‍👩‍👧", "👍🏽", "\u200d", "e\u0301", "é", "\u0301", "Å", "\u212b",
           "שלום", "مرحبا", "\u202e", "ß", "SS", "ẞ", "ς", "Σ", "İ", "ﬁ", "K", "\u212a", "가", "\u1100\u1161",
           "今天", "天", "天气真好", "  ", "\t", "\n"]

# Small alphabets so that random texts share substrings; every code point is assigned in Unicode 14.
PIECES = ["a", "b", "A", "B", "e", "E", "é", "e\u0301", "E\u0301", "\u0301", "\u0308", "o\u0308", "ö", "Å", "\u212b",
          "ß", "ẞ", "s", "S", "σ", "ς", "Σ", "K", "k", "\u212a", "İ", "i", "ﬁ", "今", "天", "气", "真", "好", "的",
          "\u1100", "\u1161", "\u11a8", "가", "👨", "\u200d", "👩", "👧", "🏽", "👍", "ש", "ל", "ו", "ם", "م", "ر",
          " ", "\n", "'", '"', "%", "_", "*", "\\", "-", "^", "(", "AND", "NEAR",
          # Code points NFC or case folding turn into others: the prefilter must know them.
          "\u017f", "\uf900", "\u8c48", "\u0958", "\u0915", "\u093c", "\u037e", ";", "\u1fef", "`",
          "\u2126", "\u03c9", "\u1e9b", "\u0345", "\u03b9", "\u1f80", "\u1f88",
          # Marks NFC reorders or splits, so spans must stay exact, disjoint and ascending.
          "\u0316", "\u0323", "\u0307", "\u1e0b", "\u0344", "\u0f73", "\u0f71"]


def assigned(c: str) -> bool:
    return unicodedata.category(c) not in ("Cn", "Cs")


any_char = st.characters(blacklist_categories=("Cs", "Cn", "Cc"), max_codepoint=0x2FFFF).filter(assigned)
text = st.lists(st.one_of(st.sampled_from(PIECES), any_char), min_size=1, max_size=24).map("".join)
non_blank = text.filter(lambda t: not nk_blank(t))


def nk_blank(t: str) -> bool:
    return all(c.isspace() for c in t)


@st.composite
def corpus_and_queries(draw):
    articles = draw(st.lists(st.tuples(non_blank, non_blank, st.integers(0, 4)), min_size=1, max_size=14))
    queries = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["slice", "hostile", "random", "recased", "nfd"]))
        if kind == "hostile":
            q = draw(st.sampled_from(HOSTILE))
        elif kind == "random":
            q = draw(text)
        else:
            source = draw(st.sampled_from([t for a in articles for t in a[:2]]))
            i = draw(st.integers(0, len(source) - 1))
            j = draw(st.integers(i + 1, min(len(source), i + 6)))
            q = source[i:j]
            if kind == "recased":
                q = draw(st.sampled_from([q.upper(), q.lower(), q.swapcase()]))
            elif kind == "nfd":
                q = unicodedata.normalize("NFD", q)
        queries.append((q, draw(st.sampled_from(["any", "title", "content"])), draw(st.booleans()),
                        draw(st.integers(1, 4))))
    return articles, queries, draw(writes())


@st.composite
def writes(draw):
    """How the corpus is written: records per write, and the pending set's fold threshold (0: every
    write folds into the index; 3: a mix of indexed and pending records; large: all pending)."""
    return draw(st.integers(1, 6)), draw(st.sampled_from(["0", "3", "100000"]))


def write_in_chunks(write, records, chunk):
    made = []
    for start in range(0, len(records), chunk):
        made += write(records[start:start + chunk])
    return made


BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)


def assert_exact_spans(text, spans):
    """Spans are disjoint, ascending, non-empty code-point ranges inside the stored text."""
    assert all(0 <= s < e <= len(text) for s, e in spans), (text, spans)
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:])), (text, spans)


def run_case(articles, queries, plan, monkeypatch, how=(100, "512"), new_store=nk.Store.memory):
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    chunk, fold = how
    monkeypatch.setenv("NOTESKIT_SEARCH_FOLD", fold)
    with new_store() as store:
        created = write_in_chunks(store.articles.create_many,
                                  [{"title": t, "content": c, "created_at": BASE + timedelta(minutes=m)}
                                   for t, c, m in articles], chunk)
        # Exercise the update and delete paths of the index too.
        if len(created) > 2:
            store.articles.update(created[0].id, content=created[1].content + created[0].title)
            store.articles.delete(created[1].id)
        stored = list(store.articles.iter())
        for q, field, case_sensitive, limit in queries:
            expected = oracle.search(stored, q, field, case_sensitive)
            got = []
            after = None
            while True:
                page = store.articles.search(q, field=field, case_sensitive=case_sensitive, limit=limit, after=after)
                assert len(page.items) <= limit
                got.extend((h.article.id, h.spans) for h in page.items)
                for h in page.items:
                    for name, spans in h.spans.items():
                        assert_exact_spans(getattr(h.article, name), spans)
                if page.next_cursor is None:
                    break
                assert page.has_more and len(page.items) == limit
                after = page.next_cursor
            assert got == expected, (q, field, case_sensitive)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                            HealthCheck.too_slow])


@pytest.mark.parametrize("plan", ["auto", "scan", "index", "handover"])
@SETTINGS
@given(case=corpus_and_queries())
def test_every_page_of_every_search_matches_the_oracle(plan, case, monkeypatch, new_store):
    articles, queries, how = case
    run_case(articles, queries, plan, monkeypatch, how, new_store)


def test_the_oracle_itself_follows_the_documented_rules():
    assert oracle.spans("今天天气真好", "天气", False) == [(2, 4)]
    assert oracle.spans("aaa", "aa", False) == [(0, 2)]
    assert oracle.spans("e\u0301t\u00e9", "é", False) == [(0, 2), (3, 4)]
    assert oracle.spans("Straße", "STRASSE", False) == []
    assert oracle.spans("STRAẞE", "straße", False) == [(0, 6)]
    assert oracle.spans("K", "k", False) == [(0, 1)]
    assert oracle.spans("Kk", "k", True) == [(1, 2)]
    # Only what matched, next to characters NFC replaces (issue 12, item 2).
    assert oracle.spans("10 \u2126 ab\uf900cd", " ", False) == [(2, 3), (4, 5)]
    assert oracle.spans("a\u0301\u0301\u0301b", "\u0301", False) == [(2, 3), (3, 4)]


@st.composite
def chats_and_queries(draw):
    messages = draw(st.lists(st.tuples(st.integers(0, 2), non_blank, st.integers(0, 4)), min_size=1, max_size=16))
    queries = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            source = draw(st.sampled_from([m[1] for m in messages]))
            i = draw(st.integers(0, len(source) - 1))
            q = source[i:draw(st.integers(i + 1, min(len(source), i + 5)))]
        else:
            q = draw(st.one_of(st.sampled_from(HOSTILE), text))
        queries.append((q, draw(st.sampled_from([None, 0, 1, 2])), draw(st.booleans()), draw(st.integers(1, 4)),
                        draw(st.sampled_from(["desc", "asc"]))))
    return messages, queries, draw(writes())


@pytest.mark.parametrize("plan", ["auto", "index", "handover"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(case=chats_and_queries())
def test_every_page_of_every_message_search_matches_the_oracle(plan, case, monkeypatch, new_store):
    messages, queries, (chunk, fold) = case
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    monkeypatch.setenv("NOTESKIT_SEARCH_FOLD", fold)
    with new_store() as store:
        conversations = [store.conversations.create(f"c{k}").id for k in range(3)]
        for k, conv in enumerate(conversations):
            mine = [(c, m) for owner, c, m in messages if owner == k]
            if mine:
                write_in_chunks(lambda batch: store.messages.insert_many(conv, batch),
                                [{"content": c, "from_me": m % 2 == 0, "sent_at": BASE + timedelta(minutes=m)}
                                 for c, m in mine], chunk)
        stored = [m for conv in conversations for m in store.messages.history(conv, limit=1000)]
        if len(stored) > 2:
            store.messages.delete(stored[0].id)
            stored = stored[1:]
        for q, owner, case_sensitive, limit, order in queries:
            conversation = None if owner is None else conversations[owner]
            expected = oracle.search_messages(stored, q, conversation, case_sensitive)
            if order == "asc":
                expected.reverse()
            got = [(h.message.id, h.spans) for h in
                   store.messages.search_iter(q, conversation=conversation, case_sensitive=case_sensitive,
                                              batch_size=limit, order=order)]
            assert got == expected, (q, conversation, case_sensitive, order)
