"""Chat benchmark: NotesKit's messages against Python's sqlite3 on an equivalent schema, same run.

The peer is a plain ``sqlite3`` database with the same tables and indexes as a NotesKit store
(``conversations``, ``messages`` with its foreign key, UNIQUE ``uid`` and the history index
``(conversation_id, sent_at, id)``), in WAL mode with ``synchronous=NORMAL`` and ``foreign_keys=ON``,
as NotesKit opens its files. Both are files in the same temporary folder. Each figure is the same job
from the same input, timed from Python:

- a page of 50 at depth N messages, against the newest page (keyset cursor; goal: deep/newest <= 1.5x);
- ``insert_many`` of N messages (records with ``content`` and ``from_me``, uid and time made by the
  store) against ``executemany`` of the same records (uid from ``uuid4``, time from ``time.time``)
  plus commit (goal: throughput >= 1.0x the peer's);
- ``conv.send(text)``, one transaction each, against one ``INSERT`` + ``commit`` (goal: <= 1.0x).

Our times include everything a Python caller pays: argument checks, the JSON across the ABI, and
the ``Message`` objects returned. Usage: ``python benchmarks/chat_bench.py [--quick]``.
"""
from __future__ import annotations

import argparse
import gc
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable, Dict, List

import noteskit as nk

# The tables and indexes of migration 0002_conversations_messages, for the peer.
PEER_SCHEMA = """
CREATE TABLE conversations(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL
);
CREATE INDEX conversations_recent ON conversations(last_activity_at, id);
CREATE TABLE messages(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    content TEXT NOT NULL,
    from_me INTEGER NOT NULL,
    sent_at INTEGER NOT NULL
);
CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
"""

WORDS = ("hello", "ok", "see you at 8", "好的", "今天天气真好", "on my way 🚗", "lunch?", "哈哈哈", "sure,", "the report",
         "is done", "明天见", "thanks!", "can you call me", "👍", "where are you", "刚到", "meeting moved to 3pm")


def texts(n: int, seed: int = 7) -> List[str]:
    """n chat-like texts of 1 to 12 words, mixed Latin, CJK and emoji (deterministic)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def now_ms() -> int:
    return int(time.time() * 1000)


def open_peer(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(PEER_SCHEMA)
    conn.execute("INSERT INTO conversations(uid, title, created_at, last_activity_at) VALUES (?, ?, ?, ?)",
                 (str(uuid.uuid4()), "peer", now_ms(), now_ms()))
    return conn


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_call(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` calls (after a few warm-up calls)."""
    for _ in range(min(10, repeat)):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:8.2f} s "
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds * 1e6:8.1f} µs"


def row(label: str, ours: float, peer: float, ratio: float, goal: str) -> None:
    print(f"  {label:<44} ours {fmt(ours)}   peer {fmt(peer)}   ratio {ratio:5.2f}x   goal {goal}")


def bench_insert_and_pages(folder: Path, n: int, page_repeat: int) -> Dict[str, float]:
    records = [{"content": t, "from_me": i % 2 == 0} for i, t in enumerate(texts(n))]
    results: Dict[str, float] = {}

    with nk.Store.open(folder / "ours.db") as store, open_peer(folder / "peer.db") as peer:
        conv = store.conversations.create("bench")
        peer_cid = 1

        def ours_insert() -> None:
            store.messages.insert_many(conv.id, records)

        def peer_insert() -> None:
            at = now_ms()
            peer.execute("BEGIN")
            peer.executemany("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at) VALUES (?, ?, ?, ?, ?)",
                             [(str(uuid.uuid4()), peer_cid, r["content"], r["from_me"], at) for r in records])
            peer.execute("COMMIT")

        ours_t = timed(ours_insert)
        peer_t = timed(peer_insert)
        results["insert_ours"], results["insert_peer"] = ours_t, peer_t
        print(f"insert_many of {n:,} messages (one transaction)")
        row("time (throughput ratio = peer / ours)", ours_t, peer_t, peer_t / ours_t, ">= 1.00x")

        # A cursor at depth n - 50: walk back with big pages, then take the oldest page of 50.
        cursor = None
        seen = 0
        while seen < n - 1000:
            page = conv.history(limit=1000, before=cursor)
            seen += len(page)
            cursor = page.next_cursor
        while seen < n - 50:
            page = conv.history(limit=50, before=cursor)
            seen += len(page)
            cursor = page.next_cursor
        assert cursor is not None
        deep = conv.history(limit=50, before=cursor)
        assert len(deep) == 50 and not deep.has_more, (len(deep), deep.has_more)

        newest_sql = ("SELECT id, uid, conversation_id, content, from_me, sent_at FROM messages WHERE conversation_id = ? "
                      "ORDER BY sent_at DESC, id DESC LIMIT ?")
        deep_sql = ("SELECT id, uid, conversation_id, content, from_me, sent_at FROM messages WHERE conversation_id = ? "
                    "AND (sent_at, id) < (?, ?) ORDER BY sent_at DESC, id DESC LIMIT ?")
        (deep_at, deep_id), = peer.execute(
            "SELECT sent_at, id FROM messages WHERE conversation_id = ? ORDER BY sent_at, id LIMIT 1 OFFSET 50",
            (peer_cid,)).fetchall()

        def peer_page(sql: str, *args: object) -> Callable[[], object]:
            def run() -> object:
                rows = peer.execute(sql, args).fetchall()
                rows.reverse()
                return rows
            return run

        ours_newest = per_call(lambda: conv.history(limit=50), page_repeat)
        ours_deep = per_call(lambda: conv.history(limit=50, before=cursor), page_repeat)
        peer_newest = per_call(peer_page(newest_sql, peer_cid, 51), page_repeat)
        peer_deep = per_call(peer_page(deep_sql, peer_cid, deep_at, deep_id, 51), page_repeat)
        results.update(ours_newest=ours_newest, ours_deep=ours_deep, peer_newest=peer_newest, peer_deep=peer_deep)
        print(f"history page of 50 at depth {n:,} (median of {page_repeat})")
        row("newest page", ours_newest, peer_newest, ours_newest / peer_newest, "-")
        row("page at depth (oldest page)", ours_deep, peer_deep, ours_deep / peer_deep, "-")
        print(f"  {'deep / newest':<44} ours {ours_deep / ours_newest:5.2f}x   peer {peer_deep / peer_newest:5.2f}x"
              f"                goal <= 1.50x (ours)")
    return results


def bench_send(folder: Path, count: int) -> Dict[str, float]:
    message_texts = texts(count + 20, seed=11)
    with nk.Store.open(folder / "send-ours.db") as store, open_peer(folder / "send-peer.db") as peer:
        conv = store.conversations.create("send")
        it_ours = iter(message_texts)
        it_peer = iter(message_texts)

        def ours() -> None:
            conv.send(next(it_ours))

        def peer_send() -> None:
            peer.execute("BEGIN")
            peer.execute("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at) VALUES (?, ?, ?, ?, ?)",
                         (str(uuid.uuid4()), 1, next(it_peer), True, now_ms()))
            peer.execute("COMMIT")

        # Interleave rounds so that drift on a shared machine hits both alike.
        ours_t: List[float] = []
        peer_t: List[float] = []
        rounds = 5
        for _ in range(rounds):
            ours_t.append(per_call(ours, count // rounds - 10))
            peer_t.append(per_call(peer_send, count // rounds - 10))
        o, p = statistics.median(ours_t), statistics.median(peer_t)
        print(f"send one message, one transaction each (median of {count:,})")
        row("conv.send(text) vs INSERT + COMMIT", o, p, o / p, "<= 1.00x")
        return {"send_ours": o, "send_peer": p}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (20 000 messages)")
    args = parser.parse_args()
    n = 20_000 if args.quick else 1_000_000
    print(f"noteskit {nk.__version__} ({nk.LIBRARY_PATH}); sqlite3 {sqlite3.sqlite_version}; "
          f"{'quick run' if args.quick else 'full run'}")
    with tempfile.TemporaryDirectory(prefix="chat-bench-") as tmp:
        folder = Path(tmp)
        bench_insert_and_pages(folder, n, page_repeat=200 if args.quick else 1000)
        bench_send(folder, 2_000 if args.quick else 10_000)


if __name__ == "__main__":
    main()
