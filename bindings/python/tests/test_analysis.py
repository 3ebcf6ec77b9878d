"""For people who analyse their notes and chats (issue 13 items 1-5): counts, per-conversation
figures, date ranges and order everywhere, bulk reads and edits by id, lookups by title."""
from __future__ import annotations

import ctypes
from datetime import datetime, timedelta, timezone

import pandas as pd
import pyarrow as pa
import pytest

import noteskit as nk

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)


@pytest.fixture
def chat(store):
    """Two conversations with 100 and 40 messages an hour apart, every third one sent by the user, and one empty."""
    alice, bob, empty = (store.conversations.create(t) for t in ("Alice", "Bob", "Nobody"))
    store.messages.insert_many(alice.id, [{"content": f"alice {i}", "from_me": i % 3 == 0, "sent_at": T0 + i * HOUR}
                                          for i in range(100)])
    store.messages.insert_many(bob.id, [{"content": f"bob {i}", "from_me": i % 3 == 0, "sent_at": T0 + i * HOUR}
                                        for i in range(40)])
    return store, alice, bob, empty


@pytest.fixture
def notes(store):
    made = store.articles.create_many([{"title": f"note {i}", "content": f"day {i} apple", "created_at": T0 + i * HOUR}
                                       for i in range(60)])
    return store, made


# ---- 1. Counts ----------------------------------------------------------------------------------

def test_counts_follow_conversation_range_and_sender(chat):
    store, alice, bob, empty = chat
    assert store.messages.count() == 140
    assert store.messages.count(conversation=alice.id) == 100
    assert store.messages.count(conversation=empty.id) == 0
    assert store.messages.count(since=T0 + 10 * HOUR, until=T0 + 20 * HOUR) == 20
    assert store.messages.count(conversation=bob.id, from_me=True) == 14
    assert store.messages.count(conversation=bob.id, from_me=False, since=T0 + 30 * HOUR) == 6
    assert store.conversations.count() == 3


def test_article_count_in_a_range(notes):
    store, _ = notes
    assert store.articles.count() == 60
    assert store.articles.count(since=T0 + 50 * HOUR) == 10
    assert store.articles.count(until=T0 + 5 * HOUR) == 5


def test_len_of_each_collection_is_its_count(chat, notes):
    store = chat[0]
    assert (len(store.articles), len(store.messages), len(store.conversations)) == (60, 140, 3)


def test_counting_an_unknown_conversation_is_not_found(store):
    with pytest.raises(nk.NotFoundError):
        store.messages.count(conversation=42)


def walked(store, conversation):
    """A conversation's messages counted by walking its index (a range counts that way, not from
    the count its row keeps)."""
    return store.messages.count(conversation=conversation, since=datetime(1, 1, 1))


def test_a_conversations_count_follows_every_write_of_its_messages(chat, tmp_path):
    store, alice, bob, empty = chat
    counts = lambda: [store.messages.count(conversation=c.id) for c in (alice, bob, empty)]  # noqa: E731
    assert counts() == [100, 40, 0] == [walked(store, c.id) for c in (alice, bob, empty)]
    alice.send("one more")
    alice.receive("and an old one", sent_at=T0 - HOUR)  # older than its last activity: still counted
    store.messages.insert_many(empty.id, [{"content": f"e{i}", "from_me": True} for i in range(5)])
    assert counts() == [102, 40, 5]
    first = store.messages.history(alice.id, limit=1000).items
    store.messages.delete(first[0].id)
    assert store.messages.delete_many([first[1].id, first[2].id, *[m.id for m in store.messages.history(bob.id, limit=3).items]]) == 5
    assert counts() == [99, 37, 5]
    assert store.messages.count() == 141 == len(store.messages) == store.messages.count(since=datetime(1, 1, 1))
    # (history is oldest first: the one received at T0 - HOUR, then alice 0 and 1 went)
    assert store.messages.delete_range(alice.id, since=T0, until=T0 + 10 * HOUR) == 8  # alice 2..9
    assert store.messages.select(conversation=alice.id).count() == 91
    with pytest.raises(nk.ConflictError):  # a uid already stored: nothing written, nothing counted
        store.messages.insert_many(bob.id, [{"content": "x", "from_me": True}, {"content": "y", "from_me": False, "uid": first[-1].uid}])
    assert counts() == [91, 37, 5]
    store.export(tmp_path / "all.json")
    bob.delete()
    assert [store.messages.count(conversation=c.id) for c in (alice, empty)] == [91, 5]
    with pytest.raises(nk.NotFoundError):
        store.messages.count(conversation=bob.id)
    store.import_(tmp_path / "all.json")  # bob and his 37 come back (a new id); alice's and empty's are there already
    bob = store.conversations.find("Bob")[0]
    assert [store.messages.count(conversation=c.id) for c in (alice, bob, empty)] == [91, 37, 5]
    assert [walked(store, c.id) for c in (alice, bob, empty)] == [91, 37, 5]
    assert store.messages.count() == 133


def test_a_store_from_before_kept_counts_gets_them_counted(db_path):
    import sqlite3
    with nk.Store.open(db_path) as store:
        a, b = store.conversations.create("a"), store.conversations.create("b")
        store.messages.insert_many(a.id, [{"content": f"m{i}", "from_me": True} for i in range(7)])
        b.send("hi")
    with sqlite3.connect(db_path) as db:  # as before migration 0009: no count column
        db.execute("ALTER TABLE conversations DROP COLUMN message_count")
        db.execute("DELETE FROM migrations WHERE name = '0009_conversation_message_count'")
    with nk.Store.open(db_path) as store:
        assert [store.messages.count(conversation=c.id) for c in (a, b)] == [7, 1]
        store.messages.send(a.id, "more")
        assert store.messages.count(conversation=a.id) == 8


# ---- 2. Per-conversation figures ----------------------------------------------------------------

def test_stats_give_each_conversations_figures_as_a_data_frame(chat):
    store, alice, bob, empty = chat
    frame = store.conversations.stats().to_pandas().set_index("title")
    assert list(frame.columns) == ["id", "messages", "sent", "received", "first_at", "last_at"]
    assert frame.loc["Alice", ["messages", "sent", "received"]].tolist() == [100, 34, 66]
    assert frame.loc["Bob", ["messages", "sent", "received"]].tolist() == [40, 14, 26]
    assert frame.loc["Alice", "first_at"] == T0 and frame.loc["Alice", "last_at"] == T0 + 99 * HOUR
    assert frame.loc["Nobody", "messages"] == 0 and pd.isna(frame.loc["Nobody", "first_at"])
    assert str(frame["first_at"].dtype) == "datetime64[ms, UTC]"


def test_stats_as_arrow_and_as_records(chat):
    store, alice, bob, empty = chat
    table = store.conversations.stats().to_arrow()
    assert table.schema.field("messages").type == pa.int64()
    assert table.schema.field("first_at").type == pa.timestamp("ms", tz="UTC")
    rows = {r["title"]: r for r in store.conversations.stats()}
    assert rows["Nobody"] == {"id": empty.id, "title": "Nobody", "messages": 0, "sent": 0, "received": 0,
                              "first_at": None, "last_at": None}
    assert rows["Bob"]["last_at"] == T0 + 39 * HOUR
    assert store.conversations.stats().count() == 3


# ---- 3. Date ranges and order -------------------------------------------------------------------

def all_pages(call):
    out, cursor = [], None
    while True:
        page = call(after=cursor)
        out += page.items
        cursor = page.next_cursor
        if cursor is None:
            return out


def test_the_article_list_in_a_range_and_in_either_order_pages_without_gaps(notes):
    store, made = notes
    since, until = T0 + 10 * HOUR, T0 + 33 * HOUR
    expected = [a.id for a in made if since <= a.created_at < until]
    desc = all_pages(lambda **k: store.articles.list(limit=7, since=since, until=until, **k))
    asc = all_pages(lambda **k: store.articles.list(limit=7, since=since, until=until, order="asc", **k))
    assert [a.id for a in desc] == expected[::-1]
    assert [a.id for a in asc] == expected
    assert [a.id for a in store.articles.iter(batch_size=5, since=since, until=until, order="asc")] == expected


def test_history_in_a_range_pages_back_within_it(chat):
    store, alice, _, _ = chat
    since, until = T0 + 20 * HOUR, T0 + 45 * HOUR
    seen, cursor = [], None
    while True:
        page = alice.history(limit=10, before=cursor, since=since, until=until)
        seen = [m.content for m in page.items] + seen
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"alice {i}" for i in range(20, 45)]


def test_searches_in_a_range_and_order_find_what_a_filter_of_everything_finds(chat, notes):
    store, alice, bob, _ = chat
    since, until = T0 + 5 * HOUR, T0 + 37 * HOUR
    everything = [h.message for h in store.messages.search_iter("1")]
    expected = sorted((m for m in everything if since <= m.sent_at < until), key=lambda m: (m.sent_at, m.id))
    got = list(store.messages.search_iter("1", batch_size=3, order="asc", since=since, until=until))
    assert [h.message.id for h in got] == [m.id for m in expected]
    within = list(store.messages.search_iter("1", conversation=bob.id, since=since, until=until))
    assert [h.message.id for h in within] == [m.id for m in reversed(expected) if m.conversation_id == bob.id]
    hits = list(store.articles.search_iter("apple", batch_size=4, since=T0 + 50 * HOUR, order="asc"))
    assert [h.article.title for h in hits] == [f"note {i}" for i in range(50, 60)]
    assert [h.article.title for h in store.articles.search("day 1", until=T0 + 12 * HOUR).items] == ["note 11", "note 10", "note 1"]


@pytest.mark.parametrize("plan", ["scan", "index", "handover"])
def test_a_range_is_the_same_whatever_the_search_plan(chat, monkeypatch, plan):
    store = chat[0]
    monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
    since, until = T0 + 5 * HOUR, T0 + 37 * HOUR
    got = [h.message.content for h in store.messages.search_iter("alice 2", since=since, until=until, order="asc")]
    assert got == [f"alice {i}" for i in range(20, 30)]
    newest = [h.message.content for h in store.messages.search_iter("alice 2", batch_size=4, since=since, until=until)]
    assert newest == got[::-1]


def test_a_cursor_remembers_its_order_and_range(chat, notes):
    store, alice, _, _ = chat
    cursor = store.articles.list(limit=2, since=T0 + HOUR).next_cursor
    assert store.articles.list(limit=2, after=cursor, since=T0 + HOUR).items
    for other in (dict(), dict(since=T0), dict(since=T0 + HOUR, order="asc"), dict(since=T0 + HOUR, until=T0 + 9 * HOUR)):
        with pytest.raises(nk.ValidationError) as e:
            store.articles.list(limit=2, after=cursor, **other)
        assert e.value.field == "cursor" and e.value.code == "cursor_other_range"
    before = alice.history(limit=2, until=T0 + 50 * HOUR).next_cursor
    with pytest.raises(nk.ValidationError) as e:
        alice.history(limit=2, before=before)
    assert e.value.code == "cursor_other_range"
    after = store.messages.search("alice", limit=2, since=T0).next_cursor
    with pytest.raises(nk.ValidationError) as e:
        store.messages.search("alice", limit=2, after=after)
    assert e.value.code == "cursor_other_search"
    after = store.articles.search("apple", limit=2, order="asc").next_cursor
    with pytest.raises(nk.ValidationError) as e:
        store.articles.search("apple", limit=2, after=after)
    assert e.value.code == "cursor_other_search"


def test_messages_iter_reads_a_range_of_one_conversation(chat):
    store, alice, _, _ = chat
    got = [m.content for m in store.messages.iter(alice.id, since=T0 + 95 * HOUR)]
    assert got == [f"alice {i}" for i in range(95, 100)]
    assert [m.content for m in store.messages.iter(alice.id, since=T0 + 97 * HOUR, order="desc")] == ["alice 99", "alice 98", "alice 97"]


# ---- Hostile ranges -----------------------------------------------------------------------------

def test_since_after_until_is_empty_everywhere_not_an_error(chat, notes):
    store, alice, _, _ = chat
    since, until = T0 + 30 * HOUR, T0 + 10 * HOUR
    assert store.articles.list(since=since, until=until).items == []
    assert store.articles.count(since=since, until=until) == 0
    assert store.articles.search("apple", since=since, until=until).items == []
    assert store.messages.search("alice", since=since, until=until).items == []
    assert alice.history(since=since, until=until).items == []
    assert store.messages.count(alice.id, since=since, until=until) == 0
    assert list(store.messages.select(alice.id, since=since, until=until)) == []
    assert store.messages.delete_range(alice.id, since, until) == 0
    assert store.messages.count() == 140


def test_naive_datetimes_are_utc_and_mix_with_aware_ones(chat):
    store, alice, _, _ = chat
    naive_since = datetime(2026, 3, 1, 10, 0)                       # 10:00 UTC
    aware_until = datetime(2026, 3, 1, 22, 0, tzinfo=timezone(timedelta(hours=2)))   # 20:00 UTC
    got = [m.content for m in store.messages.iter(alice.id, since=naive_since, until=aware_until)]
    assert got == [f"alice {i}" for i in range(10, 20)]
    page = alice.history(limit=100, since=naive_since, until=aware_until)
    assert [m.content for m in page.items] == got
    assert store.messages.count(alice.id, since=naive_since, until=aware_until) == 10


def test_years_1_and_9999_are_valid_bounds(store):
    conv = store.conversations.create("old and new")
    first, last = datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999000)
    conv.receive("first", sent_at=first)
    conv.receive("last", sent_at=last)
    conv.receive("now")
    assert [m.content for m in store.messages.iter(conv.id, since=first, until=last)] == ["first", "now"]
    assert [m.content for m in store.messages.iter(conv.id, since=last)] == ["last"]
    assert [m.content for m in conv.history(until=first + timedelta(milliseconds=1)).items] == ["first"]
    assert store.messages.count(since=datetime(1, 1, 1), until=datetime(9999, 12, 31, 23, 59, 59, 999999)) == 2
    with pytest.raises(nk.ValidationError) as e:  # before year 1 once made UTC
        store.messages.count(since=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))))
    assert e.value.field == "since"


def test_a_range_that_is_not_a_datetime_is_refused(store):
    with pytest.raises(nk.InvalidArgumentError) as e:
        store.articles.list(since="2026-01-01")
    assert e.value.field == "since"
    with pytest.raises(nk.ValidationError):
        store.articles.list(order="newest")


# ---- 4. Bulk reads and edits --------------------------------------------------------------------

def test_get_many_keeps_the_order_given_and_names_the_missing_ids(chat, notes):
    store, made = notes
    ids = [made[5].id, made[1].id, made[5].id]
    assert [a.id for a in store.articles.get_many(ids)] == ids
    with pytest.raises(nk.NotFoundError) as e:
        store.articles.get_many([made[0].id, 9999, 8888])
    assert "9999" in str(e.value) and "8888" in str(e.value) and e.value.code == "article_not_found"
    assert [a.id for a in store.articles.get_many([9999, made[2].id], missing="skip")] == [made[2].id]
    assert store.messages.get_many([]) == []
    assert [m.content for m in store.messages.get_many([3, 1])] == ["alice 2", "alice 0"]
    with pytest.raises(nk.ValidationError):
        store.messages.get_many([1], missing="ignore")


def test_100_000_ids_in_one_get_many(chat):
    store = chat[0]
    ids = [1 + (i * 7919) % 140 for i in range(100_000)]
    got = store.messages.get_many(ids)
    assert len(got) == 100_000 and [m.id for m in got[:1000]] == ids[:1000] and got[-1].id == ids[-1]
    with pytest.raises(nk.NotFoundError) as e:
        store.messages.get_many(ids + [10 ** 9])
    assert str(10 ** 9) in str(e.value)


@pytest.mark.parametrize("bad", [["1"], [1.0], [True], [None], "12", [2 ** 64]])
def test_ids_that_are_not_ints_are_refused_and_nothing_is_deleted(chat, bad):
    store = chat[0]
    with pytest.raises((nk.InvalidArgumentError, nk.ValidationError)) as e:
        store.messages.delete_many(bad)
    assert e.value.field == "ids"
    with pytest.raises((nk.InvalidArgumentError, nk.ValidationError)):
        store.articles.get_many(bad)
    assert store.messages.count() == 140


def test_update_many_saves_every_row_or_none(notes):
    store, made = notes
    seq = store.last_change_seq()
    rows = [{"id": made[0].id, "title": "first", "expected_revision": 1}, {"id": made[1].id, "content": "day one pear"}]
    saved = store.articles.update_many(rows)
    assert [(a.title, a.content, a.revision) for a in saved] == [("first", "day 0 apple", 2), ("note 1", "day one pear", 2)]
    assert [c.id for c in store.changes(since=seq)] == [made[0].id, made[1].id]
    assert [h.article.id for h in store.articles.search("pear").items] == [made[1].id]
    seq = store.last_change_seq()
    with pytest.raises(nk.ConflictError) as e:
        store.articles.update_many([{"id": made[2].id, "title": "changed"},
                                    {"id": made[0].id, "title": "stale", "expected_revision": 1}])
    assert e.value.line == 1 and f"article {made[0].id}" in str(e.value)
    assert store.articles.get(made[2].id).title == "note 2" and store.last_change_seq() == seq


def test_update_many_with_a_duplicate_id_is_refused_and_writes_nothing(notes):
    store, made = notes
    with pytest.raises(nk.ValidationError) as e:
        store.articles.update_many([{"id": made[3].id, "title": "a"}, {"id": made[4].id, "title": "b"},
                                    {"id": made[3].id, "title": "c"}])
    assert e.value.code == "duplicate_id" and e.value.line == 2
    assert [a.title for a in store.articles.get_many([made[3].id, made[4].id])] == ["note 3", "note 4"]


def test_update_many_takes_arrow_columns_and_refuses_bad_rows(notes):
    store, made = notes
    table = pa.table({"id": [made[5].id, made[6].id], "content": ["x", None]})
    assert [(a.content, a.revision) for a in store.articles.update_many(table)] == [("x", 2), ("day 6 apple", 1)]
    for rows in ([{"title": "no id"}], [{"id": "7", "title": "t"}], [{"id": made[7].id, "title": "  "}],
                 [{"id": made[7].id, "color": "red"}], [{"id": 10 ** 6, "title": "t"}]):
        with pytest.raises(nk.NotesError):
            store.articles.update_many(rows)
    assert store.articles.get(made[7].id).revision == 1


def test_delete_many_deletes_all_or_none_and_the_feed_index_and_heights_follow(notes):
    store, made = notes
    doomed = [made[10].id, made[11].id]
    with store.layout(width=375) as lay:
        lay.article_height(made[10].id)
        with pytest.raises(nk.NotFoundError) as e:
            store.articles.delete_many(doomed + [424242])
        assert "424242" in str(e.value) and store.articles.count() == 60
        seq = store.last_change_seq()
        assert store.articles.delete_many(doomed + [made[10].id]) == 2
        assert [(c.op, c.id) for c in store.changes(since=seq)] == [("delete", i) for i in doomed]
        with pytest.raises(nk.NotFoundError):
            lay.article_height(made[10].id)
    assert store.articles.count() == 58
    assert not [h for h in store.articles.search("day 1").items if h.article.id in doomed]


def test_message_delete_many_and_delete_range(chat):
    store, alice, bob, _ = chat
    seq = store.last_change_seq()
    with pytest.raises(nk.NotFoundError):
        store.messages.delete_many([1, 2, 10 ** 6])
    assert store.messages.count() == 140 and store.last_change_seq() == seq and store.changes(since=seq) == []
    assert store.messages.delete_many([1, 2, 3]) == 3
    assert len(store.changes(since=seq)) == 3
    assert store.messages.delete_range(alice.id, T0 + 90 * HOUR, None) == 10
    assert store.messages.delete_range(bob.id, None, T0 + 10 * HOUR) == 10
    assert store.messages.count(alice.id) == 87 and store.messages.count(bob.id) == 30
    assert not store.messages.search("alice 95").items
    assert {h.message.content for h in store.messages.search("5", conversation=bob.id).items} == {"bob 15", "bob 25", "bob 35"}
    with pytest.raises(nk.NotFoundError):
        store.messages.delete_range(4242, T0, T0 + HOUR)


# ---- 5. Lookups ---------------------------------------------------------------------------------

def test_find_gives_the_conversations_with_exactly_that_title(store):
    a1, a2 = store.conversations.create("Alice"), store.conversations.create("Alice")
    store.conversations.create("alice")
    assert {c.id for c in store.conversations.find("Alice")} == {a1.id, a2.id}
    assert store.conversations.find("Ali") == [] and store.conversations.find("") == []
    assert [c.title for c in store.conversations.find("alice")] == ["alice"]


def test_export_in_a_range_writes_only_that_range(chat, notes, tmp_path):
    store, alice, bob, empty = chat
    store.articles.new_draft(title="draft")
    since, until = T0 + 50 * HOUR, T0 + 60 * HOUR
    report = store.export(tmp_path / "week.jsonl", since=since, until=until)
    assert (report.articles, report.drafts, report.conversations, report.messages) == (10, 0, 1, 10)
    with nk.Store.memory() as copy:
        copy.import_(tmp_path / "week.jsonl")
        assert [c.title for c in copy.conversations] == ["Alice"]
        assert sorted(m.content for m in copy.messages.iter()) == sorted(f"alice {i}" for i in range(50, 60))
        assert sorted(a.title for a in copy.articles) == sorted(f"note {i}" for i in range(50, 60))
    transcript = store.export(tmp_path / "bob.txt", conversation=bob.id, since=T0 + 38 * HOUR)
    assert transcript.messages == 2
    empty_range = store.export(tmp_path / "none.json", since=until, until=since)
    assert (empty_range.articles, empty_range.messages, empty_range.conversations) == (0, 0, 0)


def test_update_many_rows_are_released_by_the_library_even_when_an_out_parameter_is_null(notes):
    from noteskit import _columns, _ffi
    store, made = notes
    stream = _columns.pack([{"id": made[0].id, "title": "x"}], _columns.UPDATE_FIELDS)
    assert _ffi.nk_article_update_many(store.handle, ctypes.byref(stream.struct), None, None) == 1  # invalid argument
    assert not _columns._live and store.articles.get(made[0].id).revision == 1
