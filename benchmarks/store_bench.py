"""Store benchmark (issue 2): get by id, deep keyset paging, and bulk create, against Python's
sqlite3 on an equivalent schema (WAL, the same indexes, synchronous=FULL as our default durable
mode), measured in the same run. Issue 16: saving one article in the durable mode against a peer
with synchronous=FULL, in the fast mode against a peer with synchronous=NORMAL, and durable
against fast (what the power-cut promise costs).

    .venv/bin/python benchmarks/store_bench.py [--quick] [--n 100000] [--saves 2000]
"""
from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import fmt, interleaved, table, text, timeit  # noqa: E402

PEER_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE articles(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 1);
CREATE INDEX articles_newest ON articles(created_at, id);
"""


@dataclass(frozen=True)
class PeerArticle:
    __slots__ = ("id", "uid", "title", "content", "created_at", "updated_at", "revision")
    id: int
    uid: str
    title: str
    content: str
    created_at: datetime
    updated_at: datetime
    revision: int


def peer_get(db: sqlite3.Connection, id: int) -> PeerArticle:
    row = db.execute("SELECT id, uid, title, content, created_at, updated_at, revision FROM articles WHERE id = ?",
                     (id,)).fetchone()
    return PeerArticle(row[0], row[1], row[2], row[3], datetime.fromtimestamp(row[4] / 1000, timezone.utc),
                       datetime.fromtimestamp(row[5] / 1000, timezone.utc), row[6])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (10 000 articles)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--saves", type=int, help="saves per measured side (default 2 000; 270 with --quick)")
    args = parser.parse_args()
    n = 10_000 if args.quick else args.n
    saves = args.saves or (270 if args.quick else 2_000)
    rng = random.Random(7)
    records = [{"title": text(rng, 5, 30), "content": text(rng, 100, 500)} for _ in range(n)]
    folder = Path(tempfile.mkdtemp(prefix="noteskit-bench-"))
    print(f"store benchmark: {n} articles of 100–500 mixed CJK/Latin characters, files in {folder}; "
          f"load average {os.getloadavg()[0]:.2f}")

    # ---- create_many vs executemany ----
    store = nk.Store.open(folder / "ours.db")
    start = time.perf_counter()
    store.articles.create_many(records)
    ours_bulk = time.perf_counter() - start

    peer = sqlite3.connect(folder / "peer.db", isolation_level=None)
    peer.executescript(PEER_SCHEMA)
    start = time.perf_counter()
    now = time.time_ns() // 1_000_000
    peer.execute("BEGIN")
    peer.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                     ((str(uuid.uuid4()), r["title"], r["content"], now, now) for r in records))
    peer.execute("COMMIT")
    peer_bulk = time.perf_counter() - start

    # ---- get by id ----
    ids = [rng.randint(1, n) for _ in range(2000)]
    it = iter(ids * 100)
    ours_get = timeit(lambda: store.articles.get(next(it)), repeat=7, number=2000)
    it2 = iter(ids * 100)
    peer_get_t = timeit(lambda: peer_get(peer, next(it2)), repeat=7, number=2000)
    assert store.articles.get(ids[0]).content == peer_get(peer, ids[0]).content

    # ---- deep page vs first page ----
    first = timeit(lambda: store.articles.list(limit=20), repeat=7, number=200)
    # Walk to depth n - 20 once with big pages, keep that cursor.
    cursor = None
    depth = 0
    while depth < n - 1000:
        page = store.articles.list(limit=1000, after=cursor)
        cursor, depth = page.next_cursor, depth + len(page)
    page = store.articles.list(limit=1000 - 40, after=cursor)
    cursor, depth = page.next_cursor, depth + len(page)
    deep = timeit(lambda: store.articles.list(limit=20, after=cursor), repeat=7, number=200)
    offset_sql = "SELECT id, uid, title, content, created_at, updated_at, revision FROM articles ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET ?"
    offset = timeit(lambda: peer.execute(offset_sql, (depth,)).fetchall(), repeat=3, number=5)
    offset_first = timeit(lambda: peer.execute(offset_sql, (0,)).fetchall(), repeat=7, number=200)

    # ---- save one article, one transaction each: durable and fast, each against its peer ----
    fast = nk.Store.open(folder / "ours-fast.db", durability="fast")
    fast_peer = sqlite3.connect(folder / "peer-fast.db", isolation_level=None)
    fast_peer.executescript(PEER_SCHEMA.replace("synchronous = FULL", "synchronous = NORMAL"))
    it3 = iter(records * (saves // len(records) + 4))

    def saver(db: sqlite3.Connection) -> Callable[[], None]:
        def save() -> None:
            r, now = next(it3), time.time_ns() // 1_000_000
            db.execute("BEGIN")
            db.execute("INSERT INTO articles(uid, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                       (str(uuid.uuid4()), r["title"], r["content"], now, now))
            db.execute("COMMIT")
        return save

    def ours_save(s: nk.Store) -> Callable[[], None]:
        def save() -> None:
            r = next(it3)
            s.articles.create(title=r["title"], content=r["content"])
        return save

    save_durable, save_peer, save_fast, save_fast_peer = interleaved(
        [ours_save(store), saver(peer), ours_save(fast), saver(fast_peer)], repeat=9, number=max(1, saves // 9))
    fast.close()
    fast_peer.close()

    print()
    table([
        ("get one article by id (from Python)", ours_get, "sqlite3 fetch + dataclass", peer_get_t, "≤ 1.0×", ""),
        ("save an article, durable (from Python)", save_durable, "sqlite3 INSERT + COMMIT, WAL, FULL", save_peer, "≤ 1.0×", ""),
        ("save an article, fast (from Python)", save_fast, "sqlite3 INSERT + COMMIT, WAL, NORMAL", save_fast_peer, "≤ 1.0×", ""),
        ("save: durable vs fast (the promise's cost)", save_durable, "our fast mode", save_fast, "report", ""),
        (f"page of 20 at depth {depth} vs first page", deep, "our first page", first, "≤ 1.5×", ""),
        (f"create_many of {n} articles", ours_bulk, "sqlite3 executemany", peer_bulk, "≤ 1.0×",
         f"; throughput {n / ours_bulk:,.0f} vs {n / peer_bulk:,.0f} rows/s = {(n / ours_bulk) / (n / peer_bulk):.2f}× the peer, goal ≥ 0.5× "
         "(issue 11, search index included; from a pyarrow Table ≥ 1.0×: benchmarks/bulk_write_bench.py)"),
    ])
    print(f"\nfor context: OFFSET paging at depth {depth} takes {fmt(offset)} vs {fmt(offset_first)} for its first page "
          f"({offset / offset_first:.0f}×); load average {os.getloadavg()[0]:.2f}")
    store.close()
    peer.close()


if __name__ == "__main__":
    main()
