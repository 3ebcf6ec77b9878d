"""Search as the apps' users see it (design §4, Search; issue 4), through the public Python API."""
from __future__ import annotations

import ctypes
import json
import random
import sqlite3
import unicodedata
from ctypes import byref, c_void_p
from datetime import datetime, timedelta, timezone

import pytest

from noteskit.selection import NO_TIME
import noteskit as nk
from conftest import page_out
from noteskit import _ffi

import search_oracle as oracle

BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)


def ids(page):
    return [h.article.id for h in page]


def test_a_two_character_chinese_word_is_found_inside_a_longer_text(store):
    a = store.articles.create(title="日记", content="今天天气真好")
    hits = store.articles.search("今天").items
    assert ids(hits) == [a.id]
    assert hits[0].spans == {"title": [], "content": [(0, 2)]}
    assert store.articles.search("天").items[0].spans["content"] == [(1, 2), (2, 3)]
    assert store.articles.search("天天").items[0].spans["content"] == [(1, 3)]


@pytest.mark.parametrize("query", ["'", '"', "%", "_", "*", "\\", "' OR 1=1 --", "AND", "NEAR(", "^", "-", "a*b",
                                   '"quoted"', "👨‍👩‍👧", "e\u0301", "שלום", "%_\\"])
def test_every_character_of_a_query_is_matched_literally(store, query):
    hit = store.articles.create(title="t", content=f"before {query} after")
    store.articles.create(title="t", content="nothing special here: a b c")
    got = store.articles.search(query).items
    assert ids(got) == [hit.id]
    start = len("before ")
    assert got[0].spans["content"] == [(start, start + len(query))]


def test_like_wildcards_match_only_themselves(store):
    store.articles.create(title="t", content="100 percent")
    store.articles.create(title="t", content="snake_case")
    assert len(store.articles.search("%")) == 0
    assert [h.article.content for h in store.articles.search("_")] == ["snake_case"]


def test_search_is_case_insensitive_by_default_and_exact_on_request(store):
    a = store.articles.create(title="Weather", content="STRASSE Straße ΣΊΣΥΦΟΣ")
    assert ids(store.articles.search("weather")) == [a.id]
    assert ids(store.articles.search("weather", case_sensitive=True)) == []
    assert ids(store.articles.search("Weather", case_sensitive=True)) == [a.id]
    assert store.articles.search("σίσυφος").items[0].spans["content"] == [(15, 22)]
    # Simple case folding is one code point to one: ß is not "ss".
    assert store.articles.search("straße").items[0].spans["content"] == [(8, 14)]
    assert store.articles.search("strasse").items[0].spans["content"] == [(0, 7)]


def test_composed_and_decomposed_forms_find_each_other(store):
    composed = store.articles.create(title="t", content="café")
    decomposed = store.articles.create(title="t", content="cafe\u0301 au lait")
    for query in ("café", "cafe\u0301"):
        got = {h.article.id: h.spans["content"] for h in store.articles.search(query)}
        # The decomposed é is two code points in the stored text; its span covers both.
        assert got == {composed.id: [(0, 4)], decomposed.id: [(0, 5)]}
    assert ids(store.articles.search("cafe")) == []


def test_spans_are_code_point_offsets_into_the_stored_fields(store):
    a = store.articles.create(title="Hello hello", content="👍🏽 hello 世界 HELLO")
    hit = store.articles.search("hello").items[0]
    assert hit.spans == {"title": [(0, 5), (6, 11)], "content": [(3, 8), (12, 17)]}
    assert [a.content[s:e] for s, e in hit.spans["content"]] == ["hello", "HELLO"]


def test_the_field_argument_limits_where_a_query_matches(store):
    in_title = store.articles.create(title="天气", content="x")
    in_content = store.articles.create(title="x", content="天气")
    assert ids(store.articles.search("天气", field="title")) == [in_title.id]
    assert ids(store.articles.search("天气", field="content")) == [in_content.id]
    assert ids(store.articles.search("天气", field="any")) == [in_content.id, in_title.id]
    assert store.articles.search("天气", field="title").items[0].spans == {"title": [(0, 2)]}
    assert store.articles.search("天气", field="content").items[0].spans == {"content": [(0, 2)]}


def test_an_empty_query_lists_everything_newest_first(store):
    made = store.articles.create_many([{"title": f"t{i}", "content": "c", "created_at": BASE + timedelta(minutes=i)}
                                       for i in range(5)])
    page = store.articles.search("", limit=3)
    assert ids(page) == [a.id for a in made[::-1][:3]] and page.has_more
    assert page.items[0].spans == {"title": [], "content": []}
    assert ids(store.articles.search("", after=page.next_cursor)) == [made[1].id, made[0].id]


def test_results_come_newest_first_by_created_time_then_id(store):
    old = store.articles.create_many([{"title": "t", "content": "match", "created_at": BASE}])[0]
    new = store.articles.create_many([{"title": "t", "content": "match", "created_at": BASE + timedelta(days=1)}])[0]
    same = store.articles.create_many([{"title": "t", "content": "match", "created_at": BASE}] * 2)
    assert ids(store.articles.search("match")) == [new.id, same[1].id, same[0].id, old.id]


def test_paging_sees_every_hit_once_while_writers_keep_adding(store):
    store.articles.create_many([{"title": "t", "content": f"hit {i}" if i % 3 else "miss"} for i in range(300)])
    expected = ids(store.articles.search("hit", limit=1000))
    seen, after = [], None
    while True:
        page = store.articles.search("hit", limit=7, after=after)
        seen += ids(page)
        store.articles.create(title="t", content="a new hit")  # newer than every page: never in this walk
        if page.next_cursor is None:
            break
        after = page.next_cursor
    assert seen == expected and len(set(seen)) == len(seen)


def test_the_index_follows_updates_deletes_and_saved_drafts(store):
    a = store.articles.create(title="t", content="old words")
    store.articles.update(a.id, content="new words")
    assert ids(store.articles.search("old")) == [] and ids(store.articles.search("new")) == [a.id]
    d = store.articles.edit(a.id)
    d.content = "drafted words"
    assert ids(store.articles.search("drafted")) == []  # a draft is not saved text
    d.save()
    assert ids(store.articles.search("drafted")) == [a.id] and ids(store.articles.search("new")) == []
    fresh = store.articles.new_draft(title="草稿")
    fresh.content = "麒麟"
    saved = fresh.save()
    assert ids(store.articles.search("麒麟")) == [saved.id]
    store.articles.delete(a.id)
    assert ids(store.articles.search("words")) == []


def index_rows(path):
    with sqlite3.connect(path) as db:
        return (db.execute("SELECT count(*) FROM article_grams").fetchone()[0],
                db.execute("SELECT count(*) FROM article_blocks").fetchone()[0])


def pending_rows(path):
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM search_pending").fetchone()[0]


def test_deleting_every_article_leaves_no_index_entries_once_the_deletions_are_folded_in(db_path):
    with nk.Store.open(db_path) as store:
        made = store.articles.create_many([{"title": f"标题{i}", "content": "共同的内容 " * 50 + str(i)}
                                           for i in range(400)])
        assert index_rows(db_path) != (0, 0) and pending_rows(db_path) == 0
        for a in made:
            store.articles.delete(a.id)
        # The deletions wait in the pending set (the index's stale entries only cost a check).
        assert pending_rows(db_path) == 400
        assert store.articles.search("共同").items == [] and store.articles.search("标").items == []
        # A write that brings the pending set past its threshold folds everything in.
        store.articles.create_many([{"title": "t", "content": f"c{i}"} for i in range(200)])
        assert pending_rows(db_path) == 0
        folded = index_rows(db_path)
        store.reindex()
    assert index_rows(db_path) == folded


def test_the_index_survives_reopening(db_path):
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="持久的索引")
    with nk.Store.open(db_path) as store:
        assert ids(store.articles.search("索引")) == [a.id]


def test_reindex_rebuilds_the_same_results(db_path):
    rng = random.Random(4)
    with nk.Store.open(db_path) as store:
        made = store.articles.create_many([{"title": "t", "content": "".join(rng.choice("天气真好abAB ") for _ in range(60))}
                                           for _ in range(500)])
        for a in made[::7]:
            store.articles.update(a.id, content=a.content[::-1] + "气")
        for a in made[::11]:
            store.articles.delete(a.id)
        queries = ["天气", "真好a", "b", "AB", "好 ", "气"]
        before = [ids(store.articles.search(q, limit=1000)) for q in queries]
        store.reindex()
        assert [ids(store.articles.search(q, limit=1000)) for q in queries] == before


def test_a_store_from_before_search_is_indexed_when_opened(db_path):
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="迁移之前的文章")
        m = store.conversations.create("c").send("迁移之前的消息")
    with sqlite3.connect(db_path) as db:  # make it look like a store written before migration 0003
        for table in ("article_grams", "article_blocks", "message_grams", "message_blocks"):
            db.execute(f"DROP TABLE {table}")
        db.execute("DROP INDEX messages_newest")
        db.execute("DELETE FROM migrations WHERE name = '0003_search_index'")
    with nk.Store.open(db_path) as store:
        assert ids(store.articles.search("之前")) == [a.id]
        assert mids(store.messages.search("之前")) == [m.id]


def test_a_query_with_a_nul_is_refused(store):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.search("a\x00b")
    assert e.value.field == "query"


def test_a_query_over_ten_thousand_characters_is_refused_and_ten_thousand_is_fine(store):
    store.articles.create(title="t", content="a" * 10_000)
    assert len(store.articles.search("a" * 10_000)) == 1
    with pytest.raises(nk.ValidationError, match="too long") as e:
        store.articles.search("a" * 10_001)
    assert e.value.field == "query"


def test_a_forged_or_foreign_cursor_is_refused(store):
    store.articles.create_many([{"title": "t", "content": "hit"}] * 3)
    cursor = store.articles.search("hit", limit=1).next_cursor
    forged = cursor[:-1] + ("0" if cursor[-1] != "0" else "1")
    for bad in (forged, "garbage", store.articles.list(limit=1).next_cursor):
        with pytest.raises(nk.ValidationError) as e:
            store.articles.search("hit", after=bad)
        assert e.value.field == "cursor"


def test_bad_arguments_are_refused_with_the_field_named(store):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.search("x", field="body")
    assert e.value.field == "field"
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.search("x", case_sensitive=1)
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.search(b"x")
    for limit in (0, 1001):
        with pytest.raises(nk.ValidationError) as e:
            store.articles.search("x", limit=limit)
        assert e.value.field == "limit"


def test_a_pathological_query_stays_linear(store):
    store.articles.create(title="t", content="a" * 200_000)
    assert len(store.articles.search("a" * 9_999 + "b")) == 0
    assert store.articles.search("a" * 3).items[0].spans["content"][-1] == (199_995, 199_998)


def test_search_iter_walks_every_hit(store):
    store.articles.create_many([{"title": "t", "content": "hit" if i % 2 else "miss"} for i in range(50)])
    assert len(list(store.articles.search_iter("hit", batch_size=7))) == 25


def test_hostile_calls_at_the_c_abi_are_errors_not_crashes(store):
    handle, out = store.handle, c_void_p()
    NK_E_INVALID_ARGUMENT, NK_E_VALIDATION = 1, 2
    assert _ffi.nk_article_search(handle, None, None, 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"\xff", None, 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", b"\xc3", 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", None, 2, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", b"nope", 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_VALIDATION
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, -1, None, *page_out()) == NK_E_VALIDATION
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, b"\xff", *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, None, None, None, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()[:2], None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, None, None, *page_out()[1:]) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_search(None, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, None, *page_out()) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_reindex(None) == NK_E_INVALID_ARGUMENT
    # NULL field means "any": an empty page of article columns with both span columns, no cursor.
    array, schema, cursor = _ffi.ArrowArray(), _ffi.ArrowSchema(), c_void_p()
    assert _ffi.nk_article_search(handle, b"x", None, 0, NO_TIME, NO_TIME, 0, 20, None, byref(array), byref(schema), byref(cursor)) == 0
    names = [schema.children[i].contents.name.decode() for i in range(schema.n_children)]
    assert (array.length, cursor.value) == (0, None)
    assert names == ["id", "uid", "title", "content", "created_at", "updated_at", "revision", "title_spans", "content_spans"]
    array.release(byref(array))
    schema.release(byref(schema))


def test_the_oracle_and_the_library_agree_on_a_larger_store_under_every_plan(monkeypatch, new_store):
    """Big enough for posting lists to span several blocks, with updates and deletes in the middle;
    most texts hold a code point that NFC or folding changes (on PostgreSQL the server sends those
    rows unjudged), the rest are plain (judged by the server)."""
    rng = random.Random(11)
    alphabet = "天气真好今日的abAB Kk\u212a e\u0301é"

    def text(most: int) -> str:
        return "x" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, most)))

    rows = [{"title": text(6), "content": text(80), "created_at": BASE + timedelta(seconds=rng.randint(0, 500))}
            for _ in range(1500)]
    with new_store() as store:
        made = store.articles.create_many(rows)
        for a in rng.sample(made, 200):
            store.articles.update(a.id, content=text(80))
        for a in rng.sample(made, 150):
            try:
                store.articles.delete(a.id)
            except nk.NotFoundError:
                pass
        stored = list(store.articles.iter())
        queries = ["天气", "好", "ab", "K", "k", "é", "e", "\u0301", "天气真", "b A", "今日的a"]
        for q in queries:
            for field in ("any", "title", "content"):
                for case_sensitive in (False, True):
                    expected = oracle.search(stored, q, field, case_sensitive)
                    for plan in ("auto", "scan", "index", "handover"):
                        monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
                        got = [(h.article.id, h.spans) for h in
                               store.articles.search_iter(q, field=field, case_sensitive=case_sensitive, batch_size=97)]
                        assert got == expected, (plan, q, field, case_sensitive)


@pytest.mark.parametrize("plan", ["auto", "scan", "index", "handover"])
def test_pages_stay_whole_when_many_newer_texts_only_look_like_matches(store, plan, monkeypatch):
    """Newer articles whose text NFC or folding changes (U+212A KELVIN SIGN, a combining accent),
    without the query, come before the matches: on PostgreSQL the server sends them unjudged, more
    than a page's worth, and every page must still hold the right hits."""
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    made = store.articles.create_many(
        [{"title": "t", "content": f"天气 {k}", "created_at": BASE + timedelta(minutes=k)} for k in range(7)]
        + [{"title": "\u212a", "content": f"e\u0301 天 气 {k}", "created_at": BASE + timedelta(hours=1, minutes=k)}
           for k in range(12)]
        + [{"title": "Ｔ", "content": "天气\u212a", "created_at": BASE + timedelta(hours=2)}])
    expected = [made[-1].id] + [a.id for a in reversed(made[:7])]
    pages, after = [], None
    while True:
        page = store.articles.search("天气", limit=3, after=after)
        pages.append(ids(page))
        if page.next_cursor is None:
            break
        after = page.next_cursor
    assert pages == [expected[:3], expected[3:6], expected[6:]]
    assert ids(store.articles.search("\u212a天", case_sensitive=True)) == []
    assert ids(store.articles.search("k")) == [made[-1].id] + [a.id for a in reversed(made[7:19])]
    assert ids(store.articles.search("\u00e9 天", limit=5)) == [a.id for a in reversed(made[7:19])][:5]


def test_a_read_only_store_can_be_searched_but_not_reindexed(db_path):
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="只读的商店")
    with nk.Store.open(db_path, read_only=True) as store:
        assert ids(store.articles.search("商店")) == [a.id]
        with pytest.raises(nk.ReadOnlyError):
            store.reindex()


@pytest.mark.parametrize("stored, query, case_sensitive, found", [
    ("\uf900", "\u8c48", False, True),    # a CJK compatibility ideograph is its unified ideograph in NFC
    ("\u8c48", "\uf900", True, True),
    ("x\u037ey", ";", True, True),        # GREEK QUESTION MARK is ';' in NFC
    ("\u212a", "K", True, True),          # KELVIN SIGN is 'K' in NFC ...
    ("\u212a", "k", False, True),         # ... and so 'k' when folded
    ("\u212a", "k", True, False),
    ("\u017f", "s", False, True),         # LONG S folds to s
    ("\u017f", "s", True, False),
    ("\u0958", "\u0915", False, True),    # an excluded composition stays decomposed in NFC
    ("\u1e9b", "\u1e61", False, True),    # LONG S WITH DOT ABOVE folds to s with dot above
])
def test_code_points_that_nfc_or_folding_turn_into_others_are_found(store, stored, query, case_sensitive, found):
    store.articles.create(title="t", content=stored)
    hits = store.articles.search(query, case_sensitive=case_sensitive).items
    assert bool(hits) == found
    if found:
        assert hits[0].spans["content"] == oracle.spans(stored, query, case_sensitive)


# ---- Messages -------------------------------------------------------------------------------------

def mids(page):
    return [h.message.id for h in page]


def test_messages_are_searched_in_every_conversation_or_in_one(store):
    alice, bob = store.conversations.create("Alice"), store.conversations.create("Bob")
    m1 = alice.send("see you at 8")
    m2 = bob.receive("YOU there? 今天天气真好")
    assert mids(store.messages.search("you")) == [m2.id, m1.id]
    assert mids(store.messages.search("you", conversation=alice.id)) == [m1.id]
    assert store.messages.search("天气").items[0].spans == {"content": [(13, 15)]}
    assert mids(store.messages.search("You", case_sensitive=True)) == []
    assert mids(store.messages.search("")) == [m2.id, m1.id]


def test_message_results_come_newest_first_by_sent_time_then_id(store):
    conv = store.conversations.create("c")
    made = store.messages.insert_many(conv.id, [
        {"content": "ping", "from_me": True, "sent_at": BASE + timedelta(minutes=m)} for m in (5, 1, 5, 3)])
    assert mids(store.messages.search("ping")) == [made[2].id, made[0].id, made[3].id, made[1].id]


def test_message_search_pages_with_its_own_cursors(store):
    alice, bob = store.conversations.create("Alice"), store.conversations.create("Bob")
    store.messages.insert_many(alice.id, [{"content": f"hit {i}", "from_me": True} for i in range(30)])
    store.messages.insert_many(bob.id, [{"content": "hit", "from_me": False}] * 5)
    assert len(list(store.messages.search_iter("hit", batch_size=4))) == 35
    assert len(list(store.messages.search_iter("hit", conversation=alice.id, batch_size=4))) == 30
    cursor = store.messages.search("hit", conversation=alice.id, limit=2).next_cursor
    for other in (None, bob.id):  # a cursor belongs to its scope
        with pytest.raises(nk.ValidationError):
            store.messages.search("hit", conversation=other, after=cursor)
    with pytest.raises(nk.ValidationError):
        store.messages.search("hit", after=store.messages.history(alice.id, limit=1).next_cursor)


def test_deleting_messages_and_conversations_removes_their_entries(db_path):
    with nk.Store.open(db_path) as store:
        alice, bob = store.conversations.create("Alice"), store.conversations.create("Bob")
        store.messages.insert_many(alice.id, [{"content": f"共同 message {i}", "from_me": True} for i in range(300)])
        kept = bob.send("共同 kept")
        gone = bob.send("単独")
        store.messages.delete(gone.id)
        assert mids(store.messages.search("単独")) == []
        store.conversations.delete(alice.id)
        assert mids(store.messages.search("共同")) == [kept.id]
        assert mids(store.messages.search("message")) == []
        store.messages.delete(kept.id)
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM message_grams").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM message_blocks").fetchone()[0] == 0


def test_reindex_rebuilds_message_search_too(store):
    conv = store.conversations.create("c")
    m = conv.send("重建索引")
    store.reindex()
    assert mids(store.messages.search("索引")) == [m.id]


def test_bad_message_search_arguments_are_refused(store):
    with pytest.raises(nk.NotFoundError):
        store.messages.search("x", conversation=999)
    with pytest.raises(nk.NotFoundError):
        store.messages.search("x", conversation=0)
    with pytest.raises(nk.ValidationError) as e:
        store.messages.search("a\x00")
    assert e.value.field == "query"
    with pytest.raises(nk.InvalidArgumentError):
        store.messages.search("x", case_sensitive="yes")
    out = c_void_p()
    assert _ffi.nk_message_search(store.handle, None, 0, 0, NO_TIME, NO_TIME, 20, None, *page_out()) == 1
    assert _ffi.nk_message_search(store.handle, b"x", 0, 7, NO_TIME, NO_TIME, 20, None, *page_out()) == 1
    assert _ffi.nk_message_search(store.handle, b"x", 42, 0, NO_TIME, NO_TIME, 20, None, *page_out()) == 3
    assert _ffi.nk_message_search(store.handle, b"x", 0, 0, NO_TIME, NO_TIME, 20, None, None, None, None) == 1
    assert out.value is None


def test_text_broken_behind_the_librarys_back_is_searched_without_a_crash(db_path):
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="a天")
    with sqlite3.connect(db_path) as db:  # a truncated UTF-8 sequence at the end, and a stray byte
        db.execute("UPDATE articles SET content = CAST(X'61E5A4' AS TEXT), title = CAST(X'FF74' AS TEXT) WHERE id = ?",
                   (a.id,))
    with nk.Store.open(db_path) as store:
        for plan in ("scan", "index"):
            for query in ("a", "天", "t", "\ufffd"):
                store.articles.search(query)  # any answer, but an answer
        store.reindex()
        assert ids(store.articles.search("a")) == [a.id]


def test_imported_articles_and_messages_are_searchable_and_a_replace_moves_their_entries(tmp_path):
    with nk.Store.memory() as source:
        a = source.articles.create(title="导入", content="进口的文章 imported")
        source.conversations.create("c").send("进口的消息")
        source.export(tmp_path / "backup.json")
        source.articles.update(a.id, content="替换后的文章")
        source.export(tmp_path / "newer.json")
    with nk.Store.memory() as store:
        store.import_(tmp_path / "backup.json")
        assert [h.article.title for h in store.articles.search("进口")] == ["导入"]
        assert [h.message.content for h in store.messages.search("进口")] == ["进口的消息"]
        store.import_(tmp_path / "newer.json", on_conflict="replace")
        assert ids(store.articles.search("进口的文章")) == []
        assert [h.article.content for h in store.articles.search("替换")] == ["替换后的文章"]
        before = [ids(store.articles.search(q)) for q in ("替换", "文章", "imported")]
        store.reindex()
        assert [ids(store.articles.search(q)) for q in ("替换", "文章", "imported")] == before
