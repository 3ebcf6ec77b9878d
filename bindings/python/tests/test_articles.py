"""The notes app's behaviour, through the public Python API (design §4, Notes)."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk


def test_a_created_article_comes_back_with_every_field(store):
    a = store.articles.create(title="2026-11-29", content="今天天气真好")
    assert a.id > 0 and a.revision == 1
    assert len(a.uid) == 36
    assert a.created_at == a.updated_at and a.created_at.tzinfo is not None
    assert store.articles.get(a.id) == a


def test_ids_increase_with_every_new_article(store):
    ids = [store.articles.create(title=f"t{i}", content="c").id for i in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5


@pytest.mark.parametrize("title, content, field", [
    ("", "body", "title"), ("   \t\n", "body", "title"), ("\u3000", "body", "title"),
    ("title", "", "content"), ("title", " \n ", "content"), ("", "", "title"),
])
def test_saving_an_empty_or_blank_field_is_refused_naming_it_and_writes_nothing(store, title, content, field):
    before = store.last_change_seq()
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create(title=title, content=content)
    assert e.value.field == field
    assert store.articles.count() == 0 and store.last_change_seq() == before


def test_text_is_stored_exactly_as_given(store):
    content = "  leading and trailing spaces  \n\n"
    a = store.articles.create(title=" t ", content=content)
    assert store.articles.get(a.id).content == content and a.title == " t "


def test_getting_a_missing_article_is_not_found(store):
    with pytest.raises(nk.NotFoundError, match="article 42 does not exist"):
        store.articles.get(42)


def test_updating_raises_the_revision_and_the_updated_time(store):
    a = store.articles.create(title="t", content="c")
    b = store.articles.update(a.id, content="c2")
    assert (b.revision, b.title, b.content) == (2, "t", "c2")
    assert b.updated_at >= a.updated_at and b.created_at == a.created_at
    c = store.articles.update(a.id, title="t3", expected_revision=2)
    assert c.revision == 3 and store.articles.get(a.id) == c


def test_updating_with_a_stale_revision_is_a_conflict_and_writes_nothing(store):
    a = store.articles.create(title="t", content="c")
    store.articles.update(a.id, content="c2")
    with pytest.raises(nk.ConflictError):
        store.articles.update(a.id, content="c3", expected_revision=1)
    assert store.articles.get(a.id).content == "c2"


def test_an_update_that_changes_nothing_keeps_the_revision(store):
    a = store.articles.create(title="t", content="c")
    seq = store.last_change_seq()
    assert store.articles.update(a.id, title="t", content="c").revision == 1
    assert store.last_change_seq() == seq


def test_updating_to_blank_content_is_refused_and_keeps_the_article(store):
    a = store.articles.create(title="t", content="c")
    with pytest.raises(nk.ValidationError) as e:
        store.articles.update(a.id, content="  ")
    assert e.value.field == "content" and store.articles.get(a.id) == a


def test_deleting_removes_the_article(store):
    a = store.articles.create(title="t", content="c")
    store.articles.delete(a.id)
    with pytest.raises(nk.NotFoundError):
        store.articles.get(a.id)
    with pytest.raises(nk.NotFoundError):
        store.articles.delete(a.id)
    assert store.articles.count() == 0


# ---- The list ---------------------------------------------------------------------------------

def test_the_list_is_newest_first_twenty_per_page_by_default(store):
    made = store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(45)])
    first = store.articles.list()
    assert len(first) == 20 and first.has_more and first.next_cursor
    assert [a.id for a in first] == [a.id for a in reversed(made)][:20]
    second = store.articles.list(after=first.next_cursor)
    third = store.articles.list(after=second.next_cursor)
    assert len(third) == 5 and not third.has_more and third.next_cursor is None
    assert [a.id for a in first.items + second.items + third.items] == [a.id for a in reversed(made)]


def test_the_list_orders_by_created_time_then_id(store):
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    store.articles.create_many([
        {"title": "old", "content": "c", "created_at": t0},
        {"title": "new", "content": "c", "created_at": t0 + timedelta(days=1)},
        {"title": "old-too", "content": "c", "created_at": t0},
    ])
    assert [a.title for a in store.articles.list()] == ["new", "old-too", "old"]


def test_an_empty_store_lists_one_empty_last_page(store):
    page = store.articles.list()
    assert list(page) == [] and not page.has_more and page.next_cursor is None


def test_iter_walks_every_article_newest_first(store):
    store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(450)])
    titles = [a.title for a in store.articles.iter(batch_size=100)]
    assert titles == [f"t{i}" for i in reversed(range(450))]
    assert len(list(store.articles)) == 450


@pytest.mark.parametrize("limit", [0, -1, 1001, 10 ** 12, 2 ** 70])
def test_a_limit_outside_1_to_1000_is_refused(store, limit):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.list(limit=limit)
    assert e.value.field == "limit"


def test_a_non_integer_limit_is_an_invalid_argument(store):
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.list(limit="20")  # type: ignore[arg-type]


def test_rows_inserted_while_paging_are_never_seen_twice_or_skipped(store):
    originals = store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(300)])
    seen = []
    page = store.articles.list(limit=7)
    while True:
        seen += [a.id for a in page]
        store.articles.create(title="new", content="arrived while paging")
        if not page.has_more:
            break
        page = store.articles.list(limit=7, after=page.next_cursor)
    assert seen == [a.id for a in reversed(originals)]


def test_paging_while_another_thread_writes_sees_each_row_once(store):
    originals = {a.id for a in store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(1000)])}
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            store.articles.create(title="w", content="concurrent")

    t = threading.Thread(target=writer)
    t.start()
    try:
        first = store.articles.list(limit=1)
        seen = []
        page = store.articles.list(limit=13, after=first.next_cursor)
        seen.append(first[0].id)
        while True:
            seen += [a.id for a in page]
            if not page.has_more:
                break
            page = store.articles.list(limit=13, after=page.next_cursor)
    finally:
        stop.set()
        t.join()
    assert len(seen) == len(set(seen))
    assert originals <= set(seen)


@pytest.mark.parametrize("cursor", [
    "", "garbage", "articles.1.2", "articles.1.2.0000000000000000", "articles.x.y.z",
    "a" * 10_000, "articles.99999999999999999999.1.0000000000000000",
])
def test_a_forged_cursor_is_refused(store, cursor):
    store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(3)])
    with pytest.raises(nk.ValidationError) as e:
        store.articles.list(after=cursor)
    assert e.value.field == "cursor"


def test_an_edited_cursor_is_refused(store):
    store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(3)])
    cursor = store.articles.list(limit=1).next_cursor
    kind, key, id_, tag = cursor.split(".")
    with pytest.raises(nk.ValidationError):
        store.articles.list(after=".".join([kind, key, str(int(id_) + 1), tag]))


def test_a_cursor_from_another_store_is_refused(store, db_path):
    with nk.Store.open(db_path) as other:
        other.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(3)])
        foreign = other.articles.list(limit=1).next_cursor
    store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(3)])
    with pytest.raises(nk.ValidationError, match="not issued by this store"):
        store.articles.list(after=foreign)


def test_cursors_stay_valid_after_reopening_the_file(db_path):
    with nk.Store.open(db_path) as s:
        s.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(3)])
        cursor = s.articles.list(limit=1).next_cursor
    with nk.Store.open(db_path) as s:
        assert [a.title for a in s.articles.list(after=cursor)] == ["t1", "t0"]


# ---- Bulk -------------------------------------------------------------------------------------

def test_create_many_keeps_given_uids_and_times(store):
    t = datetime(2020, 5, 17, 8, 30, 15, 123000, tzinfo=timezone.utc)
    uid = "0B6F6C1E-3C1A-4F5E-9D2A-7F1C2B3A4D5E"
    [a] = store.articles.create_many([{"title": "t", "content": "c", "uid": uid, "created_at": t,
                                       "updated_at": "2021-01-01T00:00:00+02:00"}])
    assert a.uid == uid.lower()
    assert a.created_at == t
    assert a.updated_at == datetime(2020, 12, 31, 22, tzinfo=timezone.utc)


def test_create_many_with_one_bad_record_writes_none_and_names_it(store):
    records = [{"title": "ok", "content": "c"}] * 5 + [{"title": "ok", "content": "  "}]
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create_many(records)
    assert (e.value.field, e.value.line) == ("content", 5)
    assert store.articles.count() == 0


@pytest.mark.parametrize("record, field", [
    ({"title": "t"}, "content"),
    ({"title": 3, "content": "c"}, "title"),
    ({"title": "t", "content": "c", "uid": "not-a-uuid"}, "uid"),
    ({"title": "t", "content": "c", "created_at": "yesterday"}, "created_at"),
    ({"title": "t", "content": "c", "created_at": "2026-02-30T00:00:00Z"}, "created_at"),
    ({"title": "t", "content": "c", "colour": "red"}, "colour"),
])
def test_create_many_refuses_malformed_records(store, record, field):
    with pytest.raises(nk.NotesError) as e:
        store.articles.create_many([{"title": "fine", "content": "fine"}, record])
    assert e.value.field == field
    assert store.articles.count() == 0


def test_create_many_refuses_a_uid_already_in_the_store(store):
    a = store.articles.create(title="t", content="c")
    with pytest.raises(nk.ConflictError, match=a.uid):
        store.articles.create_many([{"title": "x", "content": "y"}, {"title": "t", "content": "c", "uid": a.uid}])
    assert store.articles.count() == 1


def test_create_many_accepts_any_iterable_and_an_empty_one(store):
    assert store.articles.create_many([]) == []
    made = store.articles.create_many({"title": f"g{i}", "content": "c"} for i in range(3))
    assert [a.title for a in made] == ["g0", "g1", "g2"]
