"""Bulk-write benchmark (issue 11, the write half): records into the store as Arrow columns, against
Python's sqlite3 ``executemany`` on the store and chat benchmarks' peer schemas, measured in the
same run. Our stores are in the default, durable mode (WAL, synchronous=FULL) and so are the peers
(WAL, synchronous=FULL). Every measurement alternates ours and the peer's.

- ``create_many`` of n articles (the search index included on our side; the peer has none), from a
  list of dicts (goal ≥ 0.5× the peer's throughput) and from a pyarrow Table (goal ≥ 1.0×);
- ``insert_many`` of m messages from a list of dicts and from a pyarrow Table (goal ≥ 1.5×);
- ``conv.send(text)``, one transaction each, against one INSERT + COMMIT (goal ≤ 1.0× the time),
  with the WAL pages each commit writes (``PRAGMA wal_checkpoint`` counts, read from the -wal size).

    .venv/bin/python benchmarks/bulk_write_bench.py [--quick] [--articles 100000] [--messages 1000000]

Each bulk row is the median of ``--rounds`` (default 3) fresh stores, so the figure is a whole
transaction into an empty file, as in real use.
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import fmt, table, text  # noqa: E402
from chat_bench import INSERT as MESSAGE_INSERT  # noqa: E402
from chat_bench import open_peer  # noqa: E402
from store_bench import PEER_SCHEMA as STORE_SCHEMA  # noqa: E402

ARTICLE_INSERT = "INSERT INTO articles(uid, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def once(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def rounds(n: int, ours: Callable[[int], object], peer: Callable[[int], object]) -> Tuple[float, float]:
    """Medians of n alternating runs of ours(i) and peer(i)."""
    a, b = [], []
    for i in range(n):
        a.append(once(lambda: ours(i)))
        b.append(once(lambda: peer(i)))
    return statistics.median(a), statistics.median(b)


def wal_pages_per_commit(path: Path, commit: Callable[[], object], commits: int = 50) -> float:
    """The WAL frames one commit appends (from the -wal file's growth after a checkpoint reset; few enough commits
    that no automatic checkpoint restarts the log)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    wal = Path(str(path) + "-wal")
    before = wal.stat().st_size if wal.exists() else 0
    for _ in range(commits):
        commit()
    grown = wal.stat().st_size - before
    return grown / (4096 + 24) / commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (10 000 articles, 50 000 messages)")
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sends", type=int, default=10_000)
    args = parser.parse_args()
    n_articles = 10_000 if args.quick else args.articles
    n_messages = 50_000 if args.quick else args.messages
    sends = 1_000 if args.quick else args.sends
    import pyarrow as pa

    rng = random.Random(11)
    articles = [{"title": text(rng, 5, 30), "content": text(rng, 100, 500)} for _ in range(n_articles)]
    messages = [{"content": text(rng, 2, 80), "from_me": rng.random() < 0.5} for _ in range(n_messages)]
    article_table = pa.table({"title": [r["title"] for r in articles], "content": [r["content"] for r in articles]})
    message_table = pa.table({"content": [r["content"] for r in messages], "from_me": [r["from_me"] for r in messages]})
    folder = Path(tempfile.mkdtemp(prefix="noteskit-bulk-bench-"))
    print(f"bulk-write benchmark: {n_articles:,} articles of 100–500 and {n_messages:,} messages of 2–80 mixed CJK/Latin "
          f"characters, {args.rounds} rounds, files in {folder}; load average {os.getloadavg()[0]:.2f}")

    def fresh(name: str) -> Path:
        path = folder / name
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        return path

    def ours_articles(data: Any) -> Callable[[int], object]:
        def run(i: int) -> None:
            with nk.Store.open(fresh("ours.db")) as store:
                assert len(store.articles.create_many(data)) == n_articles
        return run

    def peer_articles(i: int) -> None:
        db = sqlite3.connect(fresh("peer.db"), isolation_level=None)
        db.executescript(STORE_SCHEMA)
        now = now_ms()
        db.execute("BEGIN")
        db.executemany(ARTICLE_INSERT, ((str(uuid.uuid4()), r["title"], r["content"], now, now) for r in articles))
        db.execute("COMMIT")
        db.close()

    def ours_messages(data: Any) -> Callable[[int], object]:
        def run(i: int) -> None:
            with nk.Store.open(fresh("ours.db")) as store:
                conv = store.conversations.create("bench")
                assert len(store.messages.insert_many(conv.id, data)) == n_messages
        return run

    def peer_messages(i: int) -> None:
        db = open_peer(fresh("peer.db"), "FULL")
        now = now_ms()
        db.execute("BEGIN")
        db.executemany(MESSAGE_INSERT, ((str(uuid.uuid4()), 1, r["content"], r["from_me"], now) for r in messages))
        db.execute("COMMIT")
        db.close()

    figures: Dict[str, Tuple[float, float]] = {}
    figures["articles list"] = rounds(args.rounds, ours_articles(articles), peer_articles)
    figures["articles table"] = rounds(args.rounds, ours_articles(article_table), peer_articles)
    figures["messages list"] = rounds(args.rounds, ours_messages(messages), peer_messages)
    figures["messages table"] = rounds(args.rounds, ours_messages(message_table), peer_messages)

    # ---- send one message ----
    store = nk.Store.open(fresh("ours-send.db"))
    conv = store.conversations.create("bench")
    peer = open_peer(fresh("peer-send.db"), "FULL")
    texts = [text(rng, 2, 80) for _ in range(64)]
    it = iter(texts * (sends * 8 // len(texts) + 10))

    def peer_send() -> None:
        peer.execute("BEGIN")
        peer.execute(MESSAGE_INSERT, (str(uuid.uuid4()), 1, next(it), True, now_ms()))
        peer.execute("COMMIT")

    for _ in range(200):  # warm both files past their first pages
        conv.send(next(it))
        peer_send()
    ours_pages = wal_pages_per_commit(folder / "ours-send.db", lambda: conv.send(next(it)))
    peer_pages = wal_pages_per_commit(folder / "peer-send.db", peer_send)
    a: List[float] = []
    b: List[float] = []
    per = max(sends // 9, 1)
    for _ in range(9):
        start = time.perf_counter()
        for _ in range(per):
            conv.send(next(it))
        a.append((time.perf_counter() - start) / per)
        start = time.perf_counter()
        for _ in range(per):
            peer_send()
        b.append((time.perf_counter() - start) / per)
    figures["send"] = statistics.median(a), statistics.median(b)
    store.close()
    peer.close()

    def throughput(name: str, n: int, goal: float) -> Tuple[str, float, str, float, str, str]:
        ours, peer_t = figures[name]
        return ("", ours, "", peer_t, "", f"; throughput {peer_t / ours:.2f}× the peer's, goal ≥ {goal}×")

    print()
    rows = []
    for key, label, n, goal in (("articles list", f"create_many of {n_articles:,} articles (list)", n_articles, 0.5),
                                ("articles table", f"create_many of {n_articles:,} articles (pyarrow)", n_articles, 1.0),
                                ("messages list", f"insert_many of {n_messages:,} messages (list)", n_messages, 1.5),
                                ("messages table", f"insert_many of {n_messages:,} messages (pyarrow)", n_messages, 1.5)):
        _, ours, _, peer_t, _, note = throughput(key, n, goal)
        rows.append((label, ours, "sqlite3 executemany" + (", no index" if "article" in key else ""), peer_t, "", note))
    ours, peer_t = figures["send"]
    rows.append(("send one message, durable (from Python)", ours, "sqlite3 INSERT + COMMIT, FULL", peer_t, "≤ 1.0×",
                 f"; WAL pages a commit: {ours_pages:.1f} vs {peer_pages:.1f}"))
    table(rows)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
