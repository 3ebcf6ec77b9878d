"""Opening, closing, the change feed, and files that are not what they seem."""
from __future__ import annotations

import sqlite3
import sys
import threading

import pytest

import noteskit as nk


def test_a_store_file_is_created_and_keeps_its_articles_across_reopening(db_path):
    with nk.Store.open(db_path) as s:
        a = s.articles.create(title="t", content="persisted")
    assert db_path.exists()
    with nk.Store.open(str(db_path)) as s:
        assert s.articles.get(a.id) == a


def test_the_file_is_a_wal_sqlite_database_with_recorded_migrations(db_path):
    nk.Store.open(db_path).close()
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT name FROM migrations ORDER BY id").fetchone()[0] == "0001_articles_drafts_changes"
    db.close()


def test_a_store_written_by_a_newer_noteskit_is_refused_and_left_untouched(db_path):
    nk.Store.open(db_path).close()
    db = sqlite3.connect(db_path)
    db.execute("INSERT INTO migrations(name, applied_at) VALUES ('9999_from_the_future', 0)")
    db.commit()
    db.close()
    before = db_path.read_bytes()
    with pytest.raises(nk.SchemaError, match="newer NotesKit"):
        nk.Store.open(db_path)
    assert db_path.read_bytes() == before


def test_another_applications_database_is_refused_and_left_untouched(db_path):
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY)")
    db.commit()
    db.close()
    with pytest.raises(nk.SchemaError, match="not a NotesKit store"):
        nk.Store.open(db_path)
    db = sqlite3.connect(db_path)
    assert [r[0] for r in db.execute("SELECT name FROM sqlite_schema")] == ["invoices"]
    db.close()


def test_a_file_that_is_not_a_database_is_refused_as_corrupt(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(nk.CorruptStoreError, match="not a database"):
        nk.Store.open(path)
    assert path.read_bytes() == b"these are my notes, not a database\n" * 200


def test_a_folder_as_the_path_is_a_storage_error(tmp_path):
    with pytest.raises(nk.StorageError, match="folder"):
        nk.Store.open(tmp_path)


def test_a_path_in_a_missing_folder_is_a_storage_error(tmp_path):
    with pytest.raises(nk.StorageError, match="cannot open"):
        nk.Store.open(tmp_path / "missing" / "notes.db")


@pytest.mark.parametrize("path", ["", "a\x00b"])
def test_an_empty_or_nul_path_is_refused(path):
    with pytest.raises(nk.NotesError):
        nk.Store.open(path)


def test_closing_twice_does_nothing_and_use_after_close_is_closed_error(store):
    store.close()
    store.close()
    assert store.closed
    with pytest.raises(nk.ClosedError):
        store.articles.create(title="t", content="c")
    with pytest.raises(nk.ClosedError):
        store.changes()


def test_two_handles_on_one_file_see_each_others_writes(db_path):
    with nk.Store.open(db_path) as a, nk.Store.open(db_path) as b:
        x = a.articles.create(title="from a", content="c")
        assert b.articles.get(x.id).title == "from a"


# ---- Change feed ------------------------------------------------------------------------------

def test_every_committed_write_gets_an_increasing_sequence_number(store):
    a = store.articles.create(title="t", content="c")
    store.articles.update(a.id, content="c2")
    store.articles.delete(a.id)
    changes = store.changes()
    assert [(c.op, c.id, c.revision) for c in changes] == [("create", a.id, 1), ("update", a.id, 2), ("delete", a.id, 2)]
    assert [c.seq for c in changes] == sorted(c.seq for c in changes)
    assert all(c.entity == "article" and c.uid == a.uid for c in changes)
    assert store.changes(since=changes[0].seq) == changes[1:]
    assert store.last_change_seq() == changes[-1].seq


def test_failed_writes_leave_no_change(store):
    with pytest.raises(nk.ValidationError):
        store.articles.create_many([{"title": "a", "content": "b"}, {"title": "", "content": "b"}])
    assert store.changes() == []


def test_the_feed_sees_commits_from_another_handle(db_path):
    with nk.Store.open(db_path) as a, nk.Store.open(db_path) as b:
        a.articles.create(title="t", content="c")
        assert [c.op for c in b.changes()] == ["create"]


def test_a_subscriber_is_called_after_each_commit_with_its_changes(store):
    calls = []
    with store.subscribe(calls.append):
        a = store.articles.create(title="t", content="c")
        store.articles.create_many([{"title": "x", "content": "y"}, {"title": "z", "content": "w"}])
        d = store.articles.edit(a.id)
        d.title = "t2"
        d.save()
    store.articles.delete(a.id)  # after unsubscribing
    assert [[c.op for c in batch] for batch in calls] == [["create"], ["create", "create"], ["update"]]


def test_a_subscriber_may_read_the_store_from_its_callback(store):
    titles = []
    with store.subscribe(lambda changes: titles.append(store.articles.get(changes[0].id).title)):
        store.articles.create(title="seen inside", content="c")
    assert titles == ["seen inside"]


def test_a_failing_subscriber_is_reported_and_does_not_undo_the_commit(store, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_value))

    def boom(changes):
        raise RuntimeError("subscriber bug")

    with store.subscribe(boom):
        a = store.articles.create(title="t", content="c")
    assert store.articles.get(a.id).title == "t"
    assert [str(e) for e in reported] == ["subscriber bug"]


def test_subscribers_are_called_from_writer_threads(store):
    seen = []
    lock = threading.Lock()

    def record(changes):
        with lock:
            seen.extend(c.id for c in changes)

    with store.subscribe(record):
        threads = [threading.Thread(target=lambda: [store.articles.create(title="t", content="c") for _ in range(50)])
                   for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(seen) == list(range(1, 201))


def test_many_threads_writing_one_store_lose_nothing(store):
    def work(n):
        for i in range(100):
            a = store.articles.create(title=f"{n}-{i}", content="c")
            store.articles.update(a.id, content="c2")
            store.articles.list(limit=5)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.articles.count() == 800
    assert all(a.revision == 2 for a in store.articles.iter())
