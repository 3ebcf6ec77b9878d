"""Many processes on one PostgreSQL store: the change feed across them (commit order, NOTIFY,
catching up, row-level security) and many writers (revisions, conversations, dropped connections).

Every writer here is a real process running NotesKit on the throwaway server (``pg_cluster`` in
conftest.py); each test gets a fresh database (``pg_database``).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, List

import pytest

import noteskit as nk

REPO = Path(__file__).resolve().parents[3]


def spawn(code: str) -> "subprocess.Popen[str]":
    """Runs ``code`` (NotesKit Python) in a new interpreter process."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: "subprocess.Popen[str]") -> str:
    """Waits for ``process``; its output (it must have succeeded)."""
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


def database_of(uri: str) -> str:
    return uri.rsplit("/", 1)[1]


def wait_until(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_reader_never_skips_a_slower_writers_change_nor_sees_one_twice(pg_database: str, tmp_path: Path) -> None:
    nk.Store.open(pg_database).close()
    slow_file = tmp_path / "slow.jsonl"
    slow_file.write_text("".join(json.dumps({"type": "article", "title": f"slow {i}", "content": "c"}) + "\n"
                                 for i in range(3)))
    # The slow writer stops inside its transaction, its changes recorded (the import's last progress
    # call comes just before its commit), while a faster writer writes one article.
    slow = spawn(f"""
        import time, noteskit as nk
        def progress(done, total):
            if done == total:
                print("holding", flush=True)
                time.sleep(1.5)
        with nk.Store.open({pg_database!r}) as store:
            store.import_({str(slow_file)!r}, progress=progress)
        """)
    assert slow.stdout is not None and slow.stdout.readline().strip() == "holding"
    fast = spawn(f"""
        import noteskit as nk
        with nk.Store.open({pg_database!r}) as store:
            store.articles.create(title="fast", content="c")
        """)
    seen: List[nk.Change] = []
    with nk.Store.open(pg_database) as reader:
        while True:
            running = slow.poll() is None or fast.poll() is None
            page = reader.changes(since=seen[-1].seq if seen else 0)
            seen += page
            if not running and not page:
                break
        finish(slow), finish(fast)
        everything = reader.changes()
        titles = {a.id: a.title for a in reader.articles.iter()}
    assert [(c.seq, c.id) for c in seen] == [(c.seq, c.id) for c in everything]
    assert sorted(titles[c.id] for c in seen) == ["fast", "slow 0", "slow 1", "slow 2"]
    # The faster writer waited for the slower one: its change comes after all of the slower one's.
    assert titles[seen[-1].id] == "fast"


def test_a_listener_that_was_away_catches_up_from_its_last_seq_with_each_change_once(pg_database: str) -> None:
    with nk.Store.open(pg_database) as listener:
        listener.articles.create(title="before", content="c")
        last = listener.last_change_seq()
    writers = [spawn(f"""
        import noteskit as nk
        with nk.Store.open({pg_database!r}) as store:
            conv = store.conversations.create("writer {n}")
            for i in range(15):
                a = store.articles.create(title="w{n} " + str(i), content="c")
                conv.send(str(i))
            store.articles.update(a.id, content="changed")
            store.articles.delete(a.id)
        """) for n in range(2)]
    for w in writers:
        finish(w)
    with nk.Store.open(pg_database) as listener:
        caught: List[nk.Change] = []
        while True:
            page = listener.changes(since=caught[-1].seq if caught else last, limit=7)
            if not page:
                break
            caught += page
    assert [c.seq for c in caught] == sorted({c.seq for c in caught})  # in order, none twice
    assert len(caught) == 2 * (1 + 15 + 15 + 2)
    assert sorted((c.entity, c.op) for c in caught).count(("article", "create")) == 30
    assert all(c.seq > last for c in caught)


def test_notify_wakes_a_subscriber_in_another_process_with_only_its_own_roles_changes(pg_cluster: Any,
                                                                                      pg_database: str) -> None:
    db = database_of(pg_database)
    with nk.Store.open(pg_database) as admin:
        admin.create_user("feed_alice", password="a")
        admin.create_user("feed_bob", password="b")
    alice_uri, bob_uri = pg_cluster.uri("feed_alice", "a", db), pg_cluster.uri("feed_bob", "b", db)
    got = {"alice": [], "bob": []}  # type: dict
    lock = threading.Lock()

    def collect(who: str) -> Any:
        def callback(changes: List[nk.Change]) -> None:
            with lock:
                got[who].extend(changes)
        return callback

    with nk.Store.open(alice_uri) as alice, nk.Store.open(bob_uri) as bob, \
            alice.subscribe(collect("alice")), bob.subscribe(collect("bob")):
        writers = [spawn(f"""
            import noteskit as nk
            with nk.Store.open({uri!r}) as store:
                for i in range(3):
                    store.articles.create(title="{who} " + str(i), content="private to {who}")
                store.conversations.create("{who}'s chat").send("hello")
            """) for who, uri in (("alice", alice_uri), ("bob", bob_uri))]
        for w in writers:
            finish(w)
        wait_until(lambda: len(got["alice"]) >= 5 and len(got["bob"]) >= 5)
        time.sleep(0.2)  # nothing more arrives
        assert [(c.seq, c.id) for c in got["alice"]] == [(c.seq, c.id) for c in alice.changes()]
        assert [(c.seq, c.id) for c in got["bob"]] == [(c.seq, c.id) for c in bob.changes()]
        assert {a.title for a in alice.articles.iter()} == {"alice 0", "alice 1", "alice 2"}
    assert not {c.seq for c in got["alice"]} & {c.seq for c in got["bob"]}
    assert [(c.entity, c.op) for c in got["alice"]] == [("article", "create")] * 3 + [("conversation", "create"),
                                                                                       ("message", "create")]


def test_a_subscriber_gets_its_own_and_other_processes_commits_once_each_in_seq_order(pg_database: str) -> None:
    with nk.Store.open(pg_database) as store:
        got: List[nk.Change] = []
        threads: set = set()

        def callback(changes: List[nk.Change]) -> None:
            got.extend(changes)
            threads.add(threading.get_ident())

        with store.subscribe(callback):
            writer = spawn(f"""
                import noteskit as nk
                with nk.Store.open({pg_database!r}) as store:
                    for i in range(40):
                        store.articles.create(title="other " + str(i), content="c")
                """)
            mine = [store.articles.create(title=f"mine {i}", content="c") for i in range(40)]
            finish(writer)
            wait_until(lambda: len(got) >= 80)
            time.sleep(0.2)
        assert [c.seq for c in got] == [c.seq for c in store.changes(limit=1000)]
        assert {m.id for m in mine} <= {c.id for c in got}
    assert threading.get_ident() in threads  # its own commits on the committing thread


def test_two_processes_updating_one_article_at_the_same_revision_get_exactly_one_conflict(pg_database: str,
                                                                                           tmp_path: Path) -> None:
    with nk.Store.open(pg_database) as store:
        article = store.articles.create(title="shared", content="v0")
        for round_ in range(3):
            go = tmp_path / f"go{round_}"
            editors = [spawn(f"""
                import os, time, noteskit as nk
                with nk.Store.open({pg_database!r}) as store:
                    print("ready", flush=True)
                    while not os.path.exists({str(go)!r}):
                        time.sleep(0.001)
                    try:
                        store.articles.update({article.id}, content="round {round_} by {n}",
                                              expected_revision={article.revision})
                        print("saved")
                    except nk.ConflictError:
                        print("conflict")
                """) for n in range(2)]
            for e in editors:
                assert e.stdout is not None and e.stdout.readline().strip() == "ready"
            go.touch()
            outcomes = [finish(e).strip() for e in editors]
            assert sorted(outcomes) == ["conflict", "saved"]
            now = store.articles.get(article.id)
            assert now.revision == article.revision + 1
            assert now.content == f"round {round_} by {outcomes.index('saved')}"
            article = now
        assert [c.revision for c in store.changes() if c.op == "update"] == [2, 3, 4]


def test_concurrent_senders_keep_history_and_conversation_activity_in_order(pg_database: str) -> None:
    with nk.Store.open(pg_database) as store:
        one, two = store.conversations.create("one"), store.conversations.create("two")
        senders = [spawn(f"""
            import noteskit as nk
            with nk.Store.open({pg_database!r}) as store:
                for i in range(20):
                    store.messages.send({one.id} if i % 2 else {two.id}, "{n}:" + str(i))
            """) for n in range(3)]
        for s in senders:
            finish(s)
        newest_id = 0
        for conv in (store.conversations.get(one.id), store.conversations.get(two.id)):
            history: List[nk.Message] = []
            before = None
            while True:
                page = conv.history(limit=7, before=before)
                history = list(page.items) + history
                if not page.has_more:
                    break
                before = page.next_cursor
            assert len(history) == 30
            # History order (time, then id) is the order the messages were committed in, and each
            # sender's messages keep the order it sent them in.
            assert [m.id for m in history] == sorted(m.id for m in history)
            for n in range(3):
                mine = [int(m.content.split(":")[1]) for m in history if m.content.startswith(f"{n}:")]
                assert mine == sorted(mine) and len(mine) == 10
            assert conv.last_activity_at == history[-1].sent_at
            newest_id = max(newest_id, history[-1].id)
        first = store.conversations.list(limit=2).items[0]
        assert first.id == store.messages.get(newest_id).conversation_id


def test_a_dropped_connection_is_retried_for_a_read_and_reported_for_a_write(pg_cluster: Any, pg_database: str,
                                                                             tmp_path: Path) -> None:
    db = database_of(pg_database)

    def drop_connections() -> None:
        pg_cluster.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        f"WHERE datname = '{db}' AND application_name = 'noteskit'")

    with nk.Store.open(pg_database) as store:
        a = store.articles.create(title="kept", content="c")
        drop_connections()
        assert store.articles.get(a.id).title == "kept"  # read again on a new connection
        path = tmp_path / "two.jsonl"
        path.write_text("".join(json.dumps({"type": "article", "title": t, "content": "c"}) + "\n" for t in "xy"))

        def progress(done: int, total: int) -> None:
            if done == total:
                drop_connections()  # inside the import's transaction

        with pytest.raises(nk.UnreachableError) as caught:
            store.import_(path, progress=progress)
        assert "nothing of it was written" in str(caught.value)
        assert [x.title for x in store.articles.iter()] == ["kept"]
        assert len(store.changes()) == 1
        store.articles.create(title="after", content="c")  # the next write reconnects
        assert store.articles.count() == 2


def test_a_subscriber_whose_listening_connection_drops_reconnects_and_misses_nothing(pg_cluster: Any,
                                                                                     pg_database: str) -> None:
    db = database_of(pg_database)
    with nk.Store.open(pg_database) as store:
        got: List[nk.Change] = []
        with store.subscribe(got.extend):
            store.articles.create(title="heard", content="c")
            pg_cluster.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            f"WHERE datname = '{db}' AND application_name = 'noteskit'")
            finish(spawn(f"""
                import noteskit as nk
                with nk.Store.open({pg_database!r}) as store:
                    for i in range(3):
                        store.articles.create(title="while reconnecting " + str(i), content="c")
                """))
            wait_until(lambda: len(got) >= 4)
            time.sleep(0.2)
        assert [(c.seq, c.id) for c in got] == [(c.seq, c.id) for c in store.changes()]


def test_the_concurrency_workload_loses_nothing_and_every_listener_sees_every_change_once(pg_database: str) -> None:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "postgres_concurrency.py"), "--seconds", "2",
                           "--clients", "3", "--users", "2", "--uri", pg_database],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 lost writes" in done.stdout and "0 duplicate or skipped changes" in done.stdout
