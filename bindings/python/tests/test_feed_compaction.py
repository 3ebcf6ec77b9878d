"""The change feed's bounded cost: bulk writes record a few feed rows yet hand out each change;
``store.compact()`` keeps each record's latest change, what subscribers and a retention window
need, and frees pages; a reader behind the compaction gets every record's latest change."""
from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import noteskit as nk
from feed_reading import every_change


def feed_rows(path: Path) -> int:
    return int(sqlite3.connect(path).execute("SELECT count(*) FROM feed").fetchone()[0])


def lazy_run(path: Path) -> Tuple[Any, ...]:
    """The open run of sends as `meta` keeps it: (first seq, first message id), or () when none is open."""
    with sqlite3.connect(path) as db:
        keys = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('feed_lazy_seq', 'feed_lazy_id')").fetchall())
    return (keys["feed_lazy_seq"], keys["feed_lazy_id"]) if keys else ()


def pages(path: Path) -> Tuple[int, int, int]:
    """(auto_vacuum mode, page count, free-list pages) of the store file, as committed."""
    with sqlite3.connect(path) as db:
        mode, size, free = (int(db.execute(f"PRAGMA {name}").fetchone()[0]) for name in ("auto_vacuum", "page_count", "freelist_count"))
    return mode, size, free


def latest_per_record(changes: List[nk.Change]) -> List[Tuple[Any, ...]]:
    latest = {}
    for c in changes:
        latest[(c.entity, c.id)] = c
    return sorted((c.seq, c.entity, c.op, c.id, c.uid, c.revision) for c in latest.values())


def test_bulk_writes_record_a_few_feed_rows_and_hand_out_every_change(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        arts = store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(5_000)])
        conv = store.conversations.create("bulk")
        sent = store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": i % 2 == 0} for i in range(10_000)])
        assert feed_rows(db_path) == 2 and lazy_run(db_path) == (5_002, sent[0].id)  # the messages: the run of sends
        changes = every_change(store, limit=777)
        assert [(c.entity, c.op, c.id, c.uid) for c in changes] == (
            [("article", "create", a.id, a.uid) for a in arts] + [("conversation", "create", conv.id, conv.uid)]
            + [("message", "create", m.id, m.uid) for m in sent])
        assert [c.seq for c in changes] == list(range(1, len(changes) + 1))
        # Reading from the middle of a run hands out the rest of it.
        middle = store.changes(since=2_500, limit=3)
        assert [(c.seq, c.id) for c in middle] == [(2_501, arts[2_500].id), (2_502, arts[2_501].id), (2_503, arts[2_502].id)]
        before = store.last_change_seq()
        conv.delete()
        assert feed_rows(db_path) == 5  # the messages' deletes in one row, the conversation's in another
        gone = store.changes(since=before, limit=1000)
        assert [(c.op, c.id, c.uid) for c in gone[:3]] == [("delete", m.id, m.uid) for m in sent[:3]]
        assert store.last_change_seq() == before + len(sent) + 1


def test_the_uid_of_a_deleted_records_create_comes_from_its_tombstone(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="c")
        b = store.articles.create(title="u", content="d")
        store.articles.delete(a.id)
        assert [(c.op, c.id, c.uid) for c in store.changes()] == [
            ("create", a.id, a.uid), ("create", b.id, b.uid), ("delete", a.id, a.uid)]


def test_compact_keeps_each_records_latest_change_and_frees_pages(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        arts = store.articles.create_many([{"title": f"t{i}", "content": "x" * 300} for i in range(200)])
        for round in range(2, 12):
            for a in arts:
                store.articles.update(a.id, content=f"{round} " + "x" * 300)
        store.articles.delete(arts[7].id)
        conv = store.conversations.create("c")
        store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": True} for i in range(300)])
        full = every_change(store)
        report = store.compact()
        assert isinstance(report, nk.CompactReport)
        compacted = every_change(store)
        assert [(c.seq, c.entity, c.op, c.id, c.uid, c.revision) for c in compacted] == latest_per_record(full)
        assert report.changes_removed == len(full) - len(compacted)
        assert report.changes_kept == len(compacted) == 200 + 1 + 300
        assert report.horizon == store.last_change_seq()
        # The removed changes' pages are on the free list, under a quarter of the file: kept for
        # later writes, none given back (see test_freed_pages_are_reused_and_given_back_once_…).
        _, size, free = pages(db_path)
        assert report.bytes_freed == 0 and 0 < free * 4 < size
        assert [c.op for c in compacted if c.id == arts[7].id and c.entity == "article"] == ["delete"]
        # Compacting again finds nothing to remove; the feed's newest seq never moves back.
        again = store.compact()
        assert (again.changes_removed, again.changes_kept) == (0, len(compacted))
        newer = store.articles.create(title="n", content="c")
        assert store.changes(since=report.horizon)[0].seq == report.horizon + 1 and newer.id > arts[-1].id


def test_freed_pages_are_reused_and_given_back_once_they_are_a_quarter_of_the_file(db_path: Path) -> None:
    # New stores have no auto-vacuum: deletes put pages on the free list, later writes reuse them.
    with nk.Store.open(db_path) as store:
        arts = store.articles.create_many([{"title": f"t{i}", "content": f"{i} " + "x" * 600} for i in range(2_000)])
        store.articles.delete_many([a.id for a in arts[:200]])
        mode, size, free = pages(db_path)
        assert mode == 0 and 0 < free * 4 < size
        report = store.compact()  # under a quarter free: kept for later writes, nothing given back
        assert report.bytes_freed == 0 and pages(db_path)[1] == size
        free = pages(db_path)[2]
        store.articles.create_many([{"title": f"n{i}", "content": "y" * 600} for i in range(100)])
        assert pages(db_path)[1] == size and pages(db_path)[2] < free  # written into freed pages
        store.articles.delete_many([a.id for a in arts[200:1_500]])
        _, size, free = pages(db_path)
        assert free * 4 >= size
        report = store.compact()  # a quarter or more free: one VACUUM gives the pages back
        mode, after, free = pages(db_path)
        assert mode == 0 and free == 0 and after * 2 < size and report.bytes_freed >= (size - after) * 4096
        assert store.articles.count() == 600 and store.articles.get(arts[-1].id).content.startswith("1999 ")


def test_a_store_made_in_incremental_auto_vacuum_mode_keeps_it_and_compact_gives_back_what_it_freed(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        arts = store.articles.create_many([{"title": f"t{i}", "content": "x" * 600} for i in range(2_000)])
    with sqlite3.connect(db_path) as db:  # as NotesKit made new stores before
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        db.execute("VACUUM")
    with nk.Store.open(db_path) as store:
        store.articles.delete_many([a.id for a in arts[:200]])
        mode, size, free = pages(db_path)
        assert mode == 2 and 0 < free * 4 < size
        report = store.compact()  # PRAGMA incremental_vacuum in its transaction: even a little is given back
        assert report.bytes_freed >= free * 4096 and pages(db_path)[0] == 2 and store.articles.count() == 1_800


def test_a_reader_behind_the_horizon_gets_the_latest_change_of_every_record_after_since(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        arts = store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(30)])
        since = store.last_change_seq()
        for a in arts[:10]:
            store.articles.update(a.id, content="v2")
            store.articles.update(a.id, content="v3")
        store.articles.delete(arts[3].id)
        full = every_change(store, since=since)
        store.compact()
        got = every_change(store, since=since)
        assert [(c.seq, c.entity, c.op, c.id, c.uid, c.revision) for c in got] == latest_per_record(full)
        assert len(got) == 10 and all(c.revision == 3 for c in got if c.op == "update")


def test_a_retention_window_keeps_recent_changes(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="c")
        for n in range(5):
            store.articles.update(a.id, content=f"v{n}")
        kept = store.compact(retain=timedelta(hours=1))
        assert kept.changes_removed == 0 and kept.changes_kept == 6
        assert store.compact(retain=0).changes_removed == 5
        with pytest.raises(nk.ValidationError):
            store.compact(retain=-1)
        with pytest.raises(nk.InvalidArgumentError):
            store.compact(retain="1h")  # type: ignore[arg-type]


def test_a_subscriber_of_a_bulk_commit_gets_every_change_even_if_a_compaction_runs_meanwhile(db_path: Path) -> None:
    # A commit of more than 1 000 changes reaches subscribers in pages read back from the feed; the
    # first page's callback edits the commit's last record and compacts: that record's create,
    # superseded now, is still handed out with the last page.
    with nk.Store.open(db_path) as store:
        creates: List[nk.Change] = []
        reports: List[nk.CompactReport] = []
        editing: List[bool] = []

        def on_commit(changes: List[nk.Change]) -> None:
            creates.extend(c for c in changes if c.op == "create")
            if len(creates) == 1_000 and not editing:
                editing.append(True)  # the edit's own commit calls back here too
                store.articles.update(changes[0].id + 2_499, content="edited")
                reports.append(store.compact())

        with store.subscribe(on_commit):
            made = store.articles.create_many([{"title": f"new {i}", "content": "c"} for i in range(2_500)])
        assert [c.id for c in creates] == [m.id for m in made]
        assert reports and reports[0].horizon < creates[0].seq
        assert store.compact().changes_removed == 1  # once handed out, the superseded create goes


def test_the_layout_follows_a_compacted_feed(db_path: Path) -> None:
    with nk.Store.open(db_path) as store, store.layout(width=375) as lay:
        a = store.articles.create(title="t", content="short")
        first = lay.article_height(a.id)
        for n in range(3):
            store.articles.update(a.id, content="a much longer text that wraps onto several lines " * (n + 3))
        store.compact()
        assert lay.article_height(a.id) > first
        store.articles.delete(a.id)
        store.compact()
        with pytest.raises(nk.NotFoundError):
            lay.article_height(a.id)


def test_compact_on_a_read_only_or_closed_store_is_refused(db_path: Path) -> None:
    nk.Store.open(db_path).close()
    with nk.Store.open(db_path, read_only=True) as store:
        with pytest.raises(nk.ReadOnlyError):
            store.compact()
    store = nk.Store.open(db_path)
    store.close()
    with pytest.raises(nk.ClosedError):
        store.compact()


def test_a_damaged_feed_row_is_a_corrupt_store_error_not_a_crash(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        a, b = store.conversations.create("a"), store.conversations.create("b")
        for i in range(20):
            (a if i % 2 else b).send(f"m{i}")
        since = store.last_change_seq()
        a.delete()  # its messages' ids are scattered: the row lists them
        assert len(store.changes(since=since)) == 11
    pristine = db_path.read_bytes()
    for damage in ("UPDATE feed SET entries = x'ffff' WHERE entries IS NOT NULL",      # a truncated varint
                   "UPDATE feed SET kind = 42 WHERE entries IS NOT NULL",               # an unknown kind
                   "UPDATE feed SET entries = NULL, last_seq = seq - 5 WHERE entries IS NOT NULL",  # ends before it starts
                   "DELETE FROM feed WHERE entries IS NOT NULL"):                       # a create without its tombstone
        for suffix in ("-wal", "-shm"):
            Path(f"{db_path}{suffix}").unlink(missing_ok=True)
        db_path.write_bytes(pristine)
        db = sqlite3.connect(db_path)
        assert db.execute(damage).rowcount == 1
        db.commit()
        db.close()
        with nk.Store.open(db_path) as store:
            with pytest.raises(nk.CorruptStoreError, match="change feed is damaged"):
                every_change(store)
            if not damage.startswith("DELETE"):
                with pytest.raises(nk.CorruptStoreError):
                    store.compact()


def test_compaction_running_beside_writers_in_threads_keeps_each_records_latest_change(db_path: Path) -> None:
    import threading

    with nk.Store.open(db_path) as store:
        stop = threading.Event()
        errors: List[BaseException] = []

        def writer(k: int) -> None:
            try:
                conv = store.conversations.create(f"c{k}")
                for n in range(60):
                    a = store.articles.create(title=f"{k}-{n}", content="v1")
                    store.articles.update(a.id, content="v2")
                    if n % 5 == 0:
                        store.articles.delete(a.id)
                    conv.send(f"m{n}")
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        def compactor() -> None:
            try:
                while not stop.is_set():
                    store.compact()
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
        c = threading.Thread(target=compactor)
        c.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        c.join()
        assert not errors, errors
        store.compact()
        changes = every_change(store)
        assert [c.seq for c in changes] == sorted({c.seq for c in changes})
        latest = {(c.entity, c.id): c for c in changes}
        assert len(latest) == len(changes)  # one change per record
        live = {a.id: a for a in store.articles.iter()}
        for (entity, id), change in latest.items():
            if entity == "article":
                if id in live:
                    assert (change.op, change.revision, change.uid) == ("update", 2, live[id].uid)
                else:
                    assert change.op == "delete"
        assert sum(1 for (e, _) in latest if e == "article") == 3 * 60
        assert sum(1 for (e, _) in latest if e == "message") == 3 * 60


def test_a_deleted_conversation_lists_its_messages_oldest_first_whatever_their_ids(db_path: Path) -> None:
    from datetime import datetime, timezone

    with nk.Store.open(db_path) as store:
        conv, other = store.conversations.create("c"), store.conversations.create("o")
        received = []
        for n in range(40):  # later ids, earlier times: the feed lists ids going down, with gaps
            received.append(conv.receive(f"r{n}", sent_at=datetime(2020, 1, 1, tzinfo=timezone.utc) - timedelta(minutes=n)))
            other.send(f"o{n}")
        since = store.last_change_seq()
        conv.delete()
        gone = store.changes(since=since)
        assert [(c.id, c.uid) for c in gone[:-1]] == [(m.id, m.uid) for m in reversed(received)]
        assert feed_rows(db_path) - feed_rows_before(db_path, since) == 2
        store.compact()
        assert [(c.op, c.id) for c in store.changes(since=since)] == [(c.op, c.id) for c in gone]


def feed_rows_before(path: Path, seq: int) -> int:
    return int(sqlite3.connect(path).execute("SELECT count(*) FROM feed WHERE seq <= ?", (seq,)).fetchone()[0])


# ---- the run of sends (see `LazySends` in Feed.swift) ------------------------------------------

def test_sends_write_no_feed_row_and_the_next_other_write_writes_them(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        rows = feed_rows(db_path)
        told: List[nk.Change] = []
        with store.subscribe(told.extend):
            sent = [conv.send(f"m{i}") for i in range(30)]
            assert feed_rows(db_path) == rows and lazy_run(db_path) == (2, sent[0].id)
            assert every_change(store, since=1) == told
            conv.rename("d")  # closes the run: its sends become rows, one per instant
            assert lazy_run(db_path) == ()
            assert rows + 1 < feed_rows(db_path) <= rows + 31
        assert every_change(store, since=1) == told
        assert [(c.op, c.id, c.uid, c.at) for c in told[:30]] == [("create", m.id, m.uid, m.sent_at) for m in sent]
        assert [c.seq for c in told] == list(range(2, 33))


def test_an_open_run_of_sends_survives_reopening_and_is_read_by_other_handles(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        art = store.articles.create(title="t", content="c")
        sent = [conv.send(f"m{i}") for i in range(5)]
        before = every_change(store)
    assert lazy_run(db_path) == (3, sent[0].id)
    with nk.Store.open(db_path) as a, nk.Store.open(db_path) as b, nk.Store.open(db_path, read_only=True) as ro:
        assert every_change(a) == every_change(ro) == before and ro.last_change_seq() == 7
        more = [b.conversations.get(conv.id).send(f"n{i}") for i in range(3)]
        got = every_change(a)
        assert got[:7] == before and [(c.seq, c.id) for c in got[7:]] == [(8 + k, m.id) for k, m in enumerate(more)]
        b.messages.delete(sent[2].id)  # another handle closes the run, then deletes one of its messages
        a.articles.update(art.id, content="v2")
        after = every_change(a)
        assert after[:10] == got and [(c.seq, c.op) for c in after[10:]] == [(11, "delete"), (12, "update")]
        assert every_change(b) == every_change(ro) == after
        assert a.changes(since=9, limit=1) == after[9:10]


def test_a_send_that_fails_half_way_leaves_the_run_as_it_was(db_path: Path) -> None:
    # A send that fails after its row was tried (its uid is taken) rolls back with the write: the
    # run and the feed are as before, and the next send takes the next seq.
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        first = conv.send("one")
        before = every_change(store)
        with pytest.raises(nk.ConflictError):
            store.messages.insert_many(conv.id, [{"content": "x", "from_me": True, "uid": first.uid}])
        with pytest.raises(nk.ConflictError):  # the first send of a run, refused
            conv.rename("d")
            store.messages.insert_many(conv.id, [{"content": "x", "from_me": True, "uid": first.uid}])
        assert every_change(store)[:2] == before
        nxt = conv.send("two")
        assert [(c.seq, c.id) for c in every_change(store, since=store.last_change_seq() - 1)] == [(4, nxt.id)]


def test_compaction_closes_the_run_and_keeps_every_sends_create(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        sent = [conv.send(f"m{i}") for i in range(10)]
        conv.rename("d")
        conv.rename("e")
        sent += [conv.send(f"n{i}") for i in range(10)]
        store.messages.delete(sent[12].id)
        sent += [conv.send(f"o{i}") for i in range(5)]
        full = every_change(store)
        report = store.compact()
        assert lazy_run(db_path) == () and report.horizon == store.last_change_seq() == full[-1].seq
        compacted = every_change(store)
        assert [(c.seq, c.entity, c.op, c.id, c.uid, c.revision) for c in compacted] == latest_per_record(full)
        assert report.changes_removed == 3  # the conversation's create and first rename, the deleted message's create
        later = conv.send("after")
        assert [(c.seq, c.id) for c in store.changes(since=report.horizon)] == [(report.horizon + 1, later.id)]


def test_a_message_taken_out_of_an_open_run_by_hand_is_a_corrupt_store_error(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        sent = [conv.send(f"m{i}") for i in range(4)]
    with sqlite3.connect(db_path) as db:
        db.execute("DELETE FROM messages WHERE id = ?", (sent[1].id,))
    with nk.Store.open(db_path) as store:
        assert [c.id for c in store.changes(limit=2)] == [conv.id, sent[0].id]
        with pytest.raises(nk.CorruptStoreError, match="change feed is damaged"):
            every_change(store)
        with pytest.raises(nk.CorruptStoreError, match="change feed is damaged"):
            store.articles.create(title="t", content="c")  # closing the run finds the gap
