"""Analysis benchmark (issue 13): counts, per-conversation figures, a week of one conversation as
Arrow, bulk deletes — each against a plain SQLite peer in the same run.

The store holds ``--messages`` messages (default 1 000 000) in ``--conversations`` conversations
(default 50), one a minute in turn; the peer is an equivalent plain SQLite file (the same rows,
the same indexes: ``messages_history(conversation_id, sent_at)``, ``messages_newest(sent_at)``, the
uid index; WAL with ``synchronous=FULL`` like the store's default durability) read with Python's
``sqlite3``, ``pandas.read_sql`` or ADBC's SQLite driver.

The rows of the table are ``MEASUREMENTS``: a list of ``Measurement`` (name, goal, what the peer
does, and ``prepare(ctx)`` returning the two functions to time). Other benchmarks of the issue add
theirs with ``@measurement(...)``. ``--only WORD`` runs the rows whose name contains WORD.

    .venv/bin/python benchmarks/analysis_bench.py --messages 20000   # a quick check
    .venv/bin/python benchmarks/analysis_bench.py                    # the issue's size
    .venv/bin/python benchmarks/analysis_bench.py --keep /tmp/ab --only search   # build once, then reuse

With ``--keep FOLDER`` the stores are built there once and reused by later runs (``built.json``
says what they hold): two freshly built stores differ in page layout, and a small read's peer
swings with it, so comparing commits or plans means timing the same files. A reused store holds
what the earlier runs left (rows that write, ``delete_many``, change it alike on both sides).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import fmt, interleaved, text  # noqa: E402

UTC = timezone.utc
BASE = datetime(2024, 1, 1, tzinfo=UTC)
BASE_MS = int(BASE.timestamp() * 1000)
STEP = timedelta(minutes=1)

PEER_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE conversations(id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    created_at INTEGER NOT NULL, last_activity_at INTEGER NOT NULL);
CREATE INDEX conversations_recent ON conversations(last_activity_at);
CREATE TABLE messages(id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, conversation_id INTEGER NOT NULL,
    content TEXT NOT NULL, from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL, sender TEXT);
CREATE INDEX messages_history ON messages(conversation_id, sent_at);
CREATE INDEX messages_newest ON messages(sent_at);
"""
MESSAGE_COLUMNS = "id, uid, conversation_id, content, from_me, sent_at, sender"


@dataclass
class Context:
    """What the measurements share: the store, the peer and what was put in them."""
    folder: Path
    store: nk.Store
    peer: sqlite3.Connection
    peer_path: Path
    conversations: List[nk.Conversation]
    n_messages: int
    rounds: int
    rng: random.Random = field(default_factory=lambda: random.Random(13))
    #: Run (last first) once a measurement is done: what it opened.
    cleanups: List[Callable[[], object]] = field(default_factory=list)


@dataclass
class Measurement:
    name: str
    goal: str
    peer: str
    #: Returns (ours, theirs): the two functions timed in alternating rounds; each may check itself.
    prepare: Callable[[Context], Tuple[Callable[[], object], Callable[[], object]]]
    #: Calls per round (small, fast calls need many). The ratio is ours / peer time per call; for a
    #: throughput goal (the same work per call on both sides) ≤ 1.0× means at least the peer's.
    number: int = 1


MEASUREMENTS: List[Measurement] = []


def measurement(name: str, goal: str, peer: str, number: int = 1) -> Callable[..., Any]:
    def add(prepare: Callable[[Context], Tuple[Callable[[], object], Callable[[], object]]]) -> Any:
        MEASUREMENTS.append(Measurement(name, goal, peer, prepare, number))
        return prepare
    return add


# ---- Counts --------------------------------------------------------------------------------------

@measurement("messages.count()", "≤ 1.0×", "SELECT count(*) FROM messages", number=5)
def _count_all(ctx: Context) -> Tuple[Callable[[], object], Callable[[], object]]:
    assert ctx.store.messages.count() == ctx.peer.execute("SELECT count(*) FROM messages").fetchone()[0]
    return ctx.store.messages.count, lambda: ctx.peer.execute("SELECT count(*) FROM messages").fetchone()[0]


@measurement("messages.count(conversation=…)", "≤ 1.0×", "SELECT count(*) … WHERE conversation_id = ?", number=20)
def _count_one(ctx: Context) -> Tuple[Callable[[], object], Callable[[], object]]:
    cid = ctx.conversations[7].id
    sql = "SELECT count(*) FROM messages WHERE conversation_id = ?"
    assert ctx.store.messages.count(conversation=cid) == ctx.peer.execute(sql, (cid,)).fetchone()[0]
    return lambda: ctx.store.messages.count(conversation=cid), lambda: ctx.peer.execute(sql, (cid,)).fetchone()[0]


# ---- Per-conversation figures --------------------------------------------------------------------

STATS_SQL = """
SELECT c.id, c.title, count(m.id) AS messages, coalesce(sum(m.from_me), 0) AS sent,
       count(m.id) - coalesce(sum(m.from_me), 0) AS received, min(m.sent_at) AS first_at, max(m.sent_at) AS last_at
FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
GROUP BY c.id ORDER BY c.last_activity_at DESC
"""


@measurement("conversations.stats().to_pandas()", "≤ 1.0×", "GROUP BY via pandas.read_sql (+ times as datetimes)")
def _stats(ctx: Context) -> Tuple[Callable[[], object], Callable[[], object]]:
    import pandas as pd

    def theirs() -> Any:
        frame = pd.read_sql(STATS_SQL, ctx.peer)
        for column in ("first_at", "last_at"):
            frame[column] = pd.to_datetime(frame[column], unit="ms", utc=True)
        return frame

    ours_frame, peer_frame = ctx.store.conversations.stats().to_pandas(), theirs()
    assert sorted(ours_frame["messages"]) == sorted(peer_frame["messages"])
    assert sorted(ours_frame["sent"]) == sorted(peer_frame["sent"])
    return lambda: ctx.store.conversations.stats().to_pandas(), theirs


# ---- One week of one conversation as Arrow --------------------------------------------------------

@measurement("one week of one conversation → pyarrow", "≥ 1.0× faster (ratio ≤ 1.0×)",
             "ADBC fetch_arrow_table of the same range", number=20)
def _week(ctx: Context) -> Tuple[Callable[[], object], Callable[[], object]]:
    import adbc_driver_sqlite.dbapi as adbc

    cid = ctx.conversations[3].id
    since = BASE + (ctx.n_messages // 2) * STEP
    until = since + timedelta(days=7)
    # ADBC's driver carries its own copy of SQLite: two copies in one process on one WAL file undo
    # each other's locks (and truncate the -shm the other has mapped: SIGBUS). ADBC reads a copy.
    ctx.peer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    adbc_path = ctx.folder / "peer-adbc.db"
    shutil.copyfile(ctx.peer_path, adbc_path)
    connection = adbc.connect(str(adbc_path))
    ctx.cleanups.append(connection.close)
    cursor = connection.cursor()
    ctx.cleanups.append(cursor.close)
    sql = (f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? "
           "ORDER BY sent_at, id")
    bounds = (cid, int(since.timestamp() * 1000), int(until.timestamp() * 1000))

    def theirs() -> Any:
        cursor.execute(sql, bounds)
        return cursor.fetch_arrow_table()

    def ours() -> Any:
        return ctx.store.messages.select(conversation=cid, since=since, until=until).to_arrow()

    a, b = ours(), theirs()
    assert a.num_rows == b.num_rows > 0 and a.column("content").to_pylist() == b.column("content").to_pylist()
    return ours, theirs


# ---- Bulk delete ----------------------------------------------------------------------------------

@measurement("messages.delete_many(10 000 ids)", "≥ 1.0× throughput (ratio ≤ 1.0×)",
             "executemany DELETE (index and feed included on our side)")
def _delete_many(ctx: Context) -> Tuple[Callable[[], object], Callable[[], object]]:
    ids = ctx.rng.sample(range(1, ctx.n_messages + 1), min(ctx.n_messages // 2, 10_000 * 2 * (ctx.rounds + 1)))
    per = min(10_000, len(ids) // (2 * (ctx.rounds + 1)))
    ours_ids, peer_ids = iter(ids[i:i + per] for i in range(0, len(ids), per)), iter(ids[i:i + per] for i in range(0, len(ids), per))

    def ours() -> Any:
        return ctx.store.messages.delete_many(next(ours_ids))

    def theirs() -> Any:
        ctx.peer.execute("BEGIN")
        ctx.peer.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in next(peer_ids)])
        ctx.peer.execute("COMMIT")

    return ours, theirs


# ---- store.search over both kinds, Parquet: rows of analysis_bench_search.py ----------------------

from analysis_bench_search import ROWS as _SEARCH_ROWS  # noqa: E402

for _name, _goal, _peer, _prepare, _number in _SEARCH_ROWS:
    measurement(_name, _goal, _peer, number=_number)(_prepare)


# ---- Building the stores and running ---------------------------------------------------------------

def reuse(folder: Path, n_messages: int, n_conversations: int, rounds: int) -> Optional[Context]:
    """The stores an earlier run built in ``folder`` (``--keep``), or None when there are none."""
    marker = folder / "built.json"
    if not marker.exists():
        return None
    built = json.loads(marker.read_text())
    if (built["messages"], built["conversations"]) != (n_messages, n_conversations):
        raise SystemExit(f"{folder} holds stores of {built['messages']} messages in {built['conversations']} "
                         "conversations: pass those, or another --keep folder")
    store = nk.Store.open(folder / "ours.db")
    peer_path = folder / "peer.db"
    peer = sqlite3.connect(peer_path, isolation_level=None, check_same_thread=False)
    conversations = [store.conversations.get(cid) for cid in built["conversation_ids"]]
    return Context(folder, store, peer, peer_path, conversations, n_messages, rounds)


def build(folder: Path, n_messages: int, n_conversations: int, rounds: int) -> Context:
    rng = random.Random(20261130)
    store = nk.Store.open(folder / "ours.db")
    peer_path = folder / "peer.db"
    peer = sqlite3.connect(peer_path, isolation_level=None, check_same_thread=False)
    peer.executescript(PEER_SCHEMA)
    conversations = [store.conversations.create(f"friend {k}") for k in range(n_conversations)]
    peer.execute("BEGIN")
    peer.executemany("INSERT INTO conversations VALUES (?, ?, ?, ?, ?)",
                     [(c.id, c.uid, c.title, BASE_MS, BASE_MS) for c in conversations])
    peer.execute("COMMIT")
    chunk = 100_000
    for start in range(0, n_messages, chunk):
        end = min(n_messages, start + chunk)
        by_conversation: List[List[Any]] = [[] for _ in conversations]
        for k in range(start, end):
            by_conversation[k % n_conversations].append(
                {"content": text(rng, 5, 80), "from_me": k % 3 == 0, "sent_at": BASE + k * STEP})
        rows: List[Tuple[Any, ...]] = []
        for conv, records in zip(conversations, by_conversation):
            for m in store.messages.insert_many(conv.id, records):
                rows.append((m.id, m.uid, conv.id, m.content, int(m.from_me), int(m.sent_at.timestamp() * 1000), None))
        peer.execute("BEGIN")
        peer.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        peer.execute("COMMIT")
    peer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # Both files start checkpointed (closing the store's last connection checkpoints its WAL), so
    # neither side reads its pages through a write-ahead log the other has not.
    store.close()
    store = nk.Store.open(folder / "ours.db")
    conversations = [store.conversations.get(c.id) for c in conversations]
    (folder / "built.json").write_text(json.dumps({"messages": n_messages, "conversations": n_conversations,
                                                   "conversation_ids": [c.id for c in conversations]}))
    # Ids are equal on both sides: the peer got ours.
    return Context(folder, store, peer, peer_path, conversations, n_messages, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages in the store (default 1 000 000)")
    parser.add_argument("--conversations", type=int, default=50, help="conversations (default 50)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per measurement (default 5)")
    parser.add_argument("--only", default=None, help="run only the measurements whose name contains this")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the stores in this folder and keep them; reuse them if an earlier run built them there")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="analysis-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        run(folder, args.messages, args.conversations, args.rounds, args.only)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def run(folder: Path, n_messages: int, n_conversations: int, rounds: int, only: Optional[str]) -> None:
    print(f"analysis benchmark: {n_messages} messages in {n_conversations} conversations "
          f"(load average {os.getloadavg()[0]:.2f} before building)")
    ctx = reuse(folder, n_messages, n_conversations, rounds)
    if ctx is None:
        ctx = build(folder, n_messages, n_conversations, rounds)
        print(f"built (load average {os.getloadavg()[0]:.2f})")
    else:
        print(f"reusing the stores in {folder} (load average {os.getloadavg()[0]:.2f})")
    print(f"{'measurement':44} {'noteskit':>12} {'peer':>12}  {'ratio':>7}  {'load':>5}  goal  (peer)")
    for m in MEASUREMENTS:
        if only and only not in m.name:
            continue
        ours, theirs = m.prepare(ctx)
        t_ours, t_peer = interleaved([ours, theirs], rounds, m.number)
        while ctx.cleanups:
            ctx.cleanups.pop()()
        ratio = t_ours / t_peer
        print(f"{m.name:44} {fmt(t_ours):>12} {fmt(t_peer):>12}  {ratio:6.2f}×  {os.getloadavg()[0]:5.2f}  {m.goal}  ({m.peer})")
    ctx.store.close()
    ctx.peer.close()


if __name__ == "__main__":
    main()
