"""Transport benchmark (issue 11, the read half): records out of the library as packed rows and
Arrow batches, against Python's sqlite3 (and the ADBC SQLite driver) building the same things.

    .venv/bin/python benchmarks/transport_bench.py [--quick] [--cpu] [--messages 1000000] [--articles 10000]

Every peer runs in this process on the same rows (a plain SQLite file with the same columns, WAL,
synchronous=NORMAL) and builds the **same** objects we return, so the ratios compare transport
with transport:

- get one article by id: ``store.articles.get(id)`` against a sqlite3 ``SELECT ... WHERE id = ?``
  made into the same frozen ``noteskit.Article`` (goal ≤ 0.8×);
- the newest page of 20 articles and a page of 50 messages at depth n − 50 (999 950 at full size):
  ``articles.list(limit=20)`` and ``history(limit=50, before=cursor)`` against the keyset query
  building the same ``Article`` / ``Message`` records (goal ≤ 1.0×);
- n messages into pyarrow: ``store.messages.select().to_arrow()`` against ``adbc_driver_sqlite``'s
  ``fetch_arrow_table()`` of ``SELECT *`` over the plain table (goal: ours ≥ 2× faster);
- the same into pandas: ``select().to_pandas()`` against ``pandas.read_sql`` over sqlite3 (goal ≥ 5×).

The search rows of the issue's table are in ``benchmarks/search_bench.py`` (its LIKE peer builds
the same ``SearchHit`` / ``MessageHit`` records). Needs ``pip install './bindings/python[bench]'``.
Compared figures are measured in alternating rounds (median), and the load average is printed.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import fmt, text  # noqa: E402

UTC = timezone.utc
PEER_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE articles(id INTEGER PRIMARY KEY, uid TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL);
CREATE INDEX articles_newest ON articles(created_at, id);
CREATE TABLE messages(id INTEGER PRIMARY KEY, uid TEXT NOT NULL, conversation_id INTEGER NOT NULL,
    content TEXT NOT NULL, from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL);
CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
"""
ARTICLE_COLUMNS = "id, uid, title, content, created_at, updated_at, revision"
MESSAGE_COLUMNS = "id, uid, conversation_id, content, from_me, sent_at"


CLOCK = time.perf_counter


def interleaved(fns: List[Callable[[], object]], repeat: int, number: int) -> List[float]:
    """The median seconds per call of each of ``fns``, in alternating rounds of ``number`` calls."""
    rounds: List[List[float]] = [[] for _ in fns]
    for fn in fns:
        fn()  # warm-up
    for _ in range(repeat):
        for fn, out in zip(fns, rounds):
            start = CLOCK()
            for _ in range(number):
                fn()
            out.append((CLOCK() - start) / number)
    return [statistics.median(r) for r in rounds]


def peer_article(r: Any) -> nk.Article:
    ts = datetime.fromtimestamp
    return nk.Article(r[0], r[1], r[2], r[3], ts(r[4] / 1000, UTC), ts(r[5] / 1000, UTC), r[6])


def peer_message(r: Any) -> nk.Message:
    return nk.Message(r[0], r[1], r[2], r[3], bool(r[4]), datetime.fromtimestamp(r[5] / 1000, UTC))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages in the store (default 1 000 000)")
    parser.add_argument("--articles", type=int, default=10_000, help="articles in the store (default 10 000)")
    parser.add_argument("--quick", action="store_true", help="20 000 messages, 2 000 articles, fewer rounds")
    parser.add_argument("--cpu", action="store_true",
                        help="time the single-threaded rows (get, pages) by this thread's CPU time instead of the wall "
                             "clock: steadier on a busy machine (the select rows stay on the wall clock, as they use "
                             "two threads)")
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.thread_time
    if args.quick:
        args.messages, args.articles = 20_000, 2_000
    rounds = 3 if args.quick else 9
    folder = Path(tempfile.mkdtemp(prefix="nk-transport-"))
    try:
        run(folder, args.messages, args.articles, rounds, args.cpu)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(folder: Path, n_messages: int, n_articles: int, rounds: int, cpu: bool = False) -> None:
    rng = random.Random(20261130)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    base_ms = int(base.timestamp() * 1000)
    print(f"transport benchmark: {n_articles} articles, {n_messages} messages in one conversation "
          f"(load average {os.getloadavg()[0]:.2f} before building)")

    store = nk.Store.open(folder / "ours.db")
    peer = sqlite3.connect(folder / "peer.db", isolation_level=None, check_same_thread=False)
    peer.executescript(PEER_SCHEMA)

    articles = [{"title": text(rng, 4, 20), "content": text(rng, 100, 500), "created_at": base + timedelta(minutes=k)}
                for k in range(n_articles)]
    made = store.articles.create_many(articles)
    peer.execute("BEGIN")
    peer.executemany("INSERT INTO articles VALUES (?, ?, ?, ?, ?, ?, 1)",
                     [(a.id, a.uid, a.title, a.content, base_ms + k * 60_000, base_ms + k * 60_000) for k, a in enumerate(made)])
    peer.execute("COMMIT")

    conv = store.conversations.create("bench")
    chunk = 100_000
    for start in range(0, n_messages, chunk):
        rows = [{"content": text(rng, 5, 80), "from_me": k % 2 == 0, "sent_at": base + timedelta(seconds=k)}
                for k in range(start, min(n_messages, start + chunk))]
        ours = store.messages.insert_many(conv.id, rows)
        peer.execute("BEGIN")
        peer.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                         [(m.id, m.uid, conv.id, m.content, int(m.from_me), base_ms + (start + k) * 1000)
                          for k, m in enumerate(ours)])
        peer.execute("COMMIT")
    peer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"built (load average {os.getloadavg()[0]:.2f})")
    results = []

    # --- One article by id.
    ids = [a.id for a in made]
    rng.shuffle(ids)
    get_sql = f"SELECT {ARTICLE_COLUMNS} FROM articles WHERE id = ?"
    it1, it2 = iter(ids * 1000), iter(ids * 1000)
    assert store.articles.get(ids[0]) == peer_article(peer.execute(get_sql, (ids[0],)).fetchone())
    ours, theirs = interleaved([lambda: store.articles.get(next(it1)),
                                lambda: peer_article(peer.execute(get_sql, (next(it2),)).fetchone())], rounds, 2000)
    results.append(("get one article by id", ours, "sqlite3 + the same Article", theirs, "≤ 0.8×"))

    # --- The newest page of 20 articles.
    page_sql = f"SELECT {ARTICLE_COLUMNS} FROM articles ORDER BY created_at DESC, id DESC LIMIT 20"
    assert store.articles.list(limit=20).items == [peer_article(r) for r in peer.execute(page_sql)]
    ours, theirs = interleaved([lambda: store.articles.list(limit=20),
                                lambda: [peer_article(r) for r in peer.execute(page_sql).fetchall()]], rounds, 500)
    results.append(("newest page of 20 articles", ours, "sqlite3 keyset + the same Articles", theirs, "≤ 1.0×"))

    # --- A page of 50 messages at depth n - 50 (walked there with pages of 1000).
    depth = max(n_messages - 50, 0)
    cursor, seen = None, 0
    while seen < depth:
        page = conv.history(limit=min(1000, depth - seen), before=cursor)
        seen += len(page)
        cursor = page.next_cursor
        oldest = page.items[0]
    deep_sql = (f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND (sent_at, id) < (?, ?) "
                "ORDER BY sent_at DESC, id DESC LIMIT 50")
    key = (conv.id, int(oldest.sent_at.timestamp() * 1000), oldest.id)

    def peer_deep() -> List[nk.Message]:
        rows = [peer_message(r) for r in peer.execute(deep_sql, key).fetchall()]
        rows.reverse()
        return rows

    assert conv.history(limit=50, before=cursor).items == peer_deep()
    ours, theirs = interleaved([lambda: conv.history(limit=50, before=cursor), peer_deep], rounds, 300)
    results.append((f"page of 50 messages at depth {depth}", ours, "sqlite3 keyset + the same Messages", theirs, "≤ 1.0×"))

    # --- Every message into pyarrow and pandas (wall clock: ours reads on two threads).
    global CLOCK
    CLOCK = time.perf_counter
    import adbc_driver_sqlite.dbapi as adbc
    import pandas as pd

    selection = store.messages.select()

    def peer_arrow() -> Any:
        with adbc.connect(str(folder / "peer.db")) as connection, connection.cursor() as cur:
            cur.execute("SELECT * FROM messages")
            return cur.fetch_arrow_table()

    ours_table, peer_table = selection.to_arrow(), peer_arrow()
    assert ours_table.num_rows == peer_table.num_rows == n_messages
    assert ours_table.column("content").equals(peer_table.column("content"))
    big_rounds = max(3, rounds // 3)
    ours, theirs = interleaved([selection.to_arrow, peer_arrow], big_rounds, 1)
    results.append((f"{n_messages} messages → pyarrow", ours, "adbc_driver_sqlite fetch_arrow_table", theirs,
                    "≥ 2× faster (ratio ≤ 0.5×)"))

    def peer_pandas() -> Any:
        connection = sqlite3.connect(folder / "peer.db")
        try:
            return pd.read_sql("SELECT * FROM messages", connection)
        finally:
            connection.close()

    ours, theirs = interleaved([selection.to_pandas, peer_pandas], big_rounds, 1)
    results.append((f"{n_messages} messages → pandas", ours, "pandas.read_sql over sqlite3", theirs,
                    "≥ 5× faster (ratio ≤ 0.2×)"))
    store.close()
    peer.close()

    print()
    print(f"{'measurement':44} {'noteskit':>12} {'peer':>12}  {'ratio':>7}  goal")
    for name, ours, peer_name, theirs, goal in results:
        print(f"{name:44} {fmt(ours):>12} {fmt(theirs):>12}  {ours / theirs:6.2f}×  {goal}  ({peer_name})")
    print(f"load average {os.getloadavg()[0]:.2f}" + ("; get and pages timed by CPU time (--cpu)" if cpu else ""))


if __name__ == "__main__":
    main()
