"""Chat benchmark (issue 3): history pages at depth, bulk insert and send, against Python's sqlite3
on an equivalent schema (the tables and indexes of migration 0002, WAL, foreign_keys=ON, and the
synchronous setting of the store it is compared with), measured in the same run, files in the same folder.

    .venv/bin/python benchmarks/chat_bench.py [--quick] [--n 1000000] [--sends 10000]

- a page of 50 at depth n messages against the newest page (ours; goal ≤ 1.5×), with the peer's
  pages for context (its rows made into dataclasses, as ours are);
- ``insert_many`` of n messages against ``executemany`` (uids from ``uuid4``) + commit (goal: our
  throughput ≥ 1.0× the peer's);
- ``conv.send(text)``, one transaction each, against one ``INSERT`` + ``COMMIT`` (goal ≤ 1.0×), in
  the durable mode (the default: WAL, synchronous=FULL, a returned send survives a power cut)
  against a peer with synchronous=FULL, and in the fast mode against a peer with
  synchronous=NORMAL; and durable against fast: what the promise costs (issue 16).
  Each round is the mean of many sends, so WAL checkpoints are in the figure, as in real use.

Compared figures are measured in alternating rounds (median of 9), so that the drift of a shared
machine hits both sides alike.

Our figures include all a Python caller pays: argument checks, JSON across the ABI, the returned
``Message`` objects, the change feed and the conversation's last activity.
"""
from __future__ import annotations

import argparse
import gc
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import PEER_CHAT_SCHEMA, PEER_MESSAGE_INSERT as INSERT, fmt, interleaved, table, text  # noqa: E402

PEER_SCHEMA = PEER_CHAT_SCHEMA + "INSERT INTO conversations(uid, title, created_at, last_activity_at) VALUES ('peer', 'peer', 0, 0);"
COLUMNS = "id, uid, conversation_id, content, from_me, sent_at"


@dataclass(frozen=True)
class PeerMessage:
    __slots__ = ("id", "uid", "conversation_id", "content", "from_me", "sent_at")
    id: int
    uid: str
    conversation_id: int
    content: str
    from_me: bool
    sent_at: datetime


def peer_messages(rows: List[Any]) -> List[PeerMessage]:
    """Rows newest first, as a page oldest first."""
    return [PeerMessage(r[0], r[1], r[2], r[3], bool(r[4]), datetime.fromtimestamp(r[5] / 1000, timezone.utc))
            for r in reversed(rows)]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def open_peer(path: Path, synchronous: str = "FULL") -> sqlite3.Connection:
    """The peer database, with the synchronous setting of the store it is compared with (FULL for
    our default, durable mode; NORMAL for the fast mode)."""
    peer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    peer.executescript(PEER_SCHEMA)
    peer.execute(f"PRAGMA synchronous = {synchronous}")
    return peer


def once(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (20 000 messages)")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--sends", type=int, help="sends per measured side (default 10 000; 2 000 with --quick)")
    args = parser.parse_args()
    n = 20_000 if args.quick else args.n
    sends = args.sends or (2_000 if args.quick else 10_000)
    rng = random.Random(7)
    records = [{"content": text(rng, 2, 80), "from_me": rng.random() < 0.5} for _ in range(n)]
    folder = Path(tempfile.mkdtemp(prefix="noteskit-chat-bench-"))
    print(f"chat benchmark: {n:,} messages of 2–80 mixed CJK/Latin characters, files in {folder}")

    store = nk.Store.open(folder / "ours.db")
    peer = open_peer(folder / "peer.db")
    conv = store.conversations.create("bench")

    # ---- insert_many vs executemany ----
    ours_bulk = once(lambda: store.messages.insert_many(conv.id, records))

    def peer_insert() -> None:
        now = now_ms()
        peer.execute("BEGIN")
        peer.executemany(INSERT, ((str(uuid.uuid4()), 1, r["content"], r["from_me"], now) for r in records))
        peer.execute("COMMIT")

    peer_bulk = once(peer_insert)

    # ---- history: the newest page, and the oldest page (depth n - 50) ----
    cursor = None
    depth = 0
    while depth < n - 1000:
        page = conv.history(limit=1000, before=cursor)
        cursor, depth = page.next_cursor, depth + len(page)
    page = conv.history(limit=1000 - 50, before=cursor)
    cursor, depth = page.next_cursor, depth + len(page)
    assert cursor is not None
    assert [m.content for m in conv.history(limit=50, before=cursor)] == [r["content"] for r in records[:50]]

    newest_sql = f"SELECT {COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY sent_at DESC, id DESC LIMIT 51"
    same_sql = (f"SELECT {COLUMNS} FROM messages WHERE conversation_id = ? AND sent_at = ? AND id < ? "
                "ORDER BY id DESC LIMIT 51")
    older_sql = (f"SELECT {COLUMNS} FROM messages WHERE conversation_id = ? AND sent_at < ? "
                 "ORDER BY sent_at DESC, id DESC LIMIT ?")
    (at, before_id), = peer.execute("SELECT sent_at, id FROM messages ORDER BY sent_at, id LIMIT 1 OFFSET 50").fetchall()

    def peer_deep() -> List[PeerMessage]:
        rows = peer.execute(same_sql, (1, at, before_id)).fetchall()
        if len(rows) < 51:
            rows += peer.execute(older_sql, (1, at, 51 - len(rows))).fetchall()
        return peer_messages(rows[:50])

    assert [m.content for m in peer_deep()] == [r["content"] for r in records[:50]]
    newest, deep, peer_newest, peer_deep_t = interleaved([
        lambda: conv.history(limit=50), lambda: conv.history(limit=50, before=cursor),
        lambda: peer_messages(peer.execute(newest_sql, (1,)).fetchall()[:50]), peer_deep], repeat=9, number=200)

    # ---- send one message, one transaction each ----
    texts = [text(rng, 2, 80) for _ in range(64)]
    it = iter(texts * (sends * 8 // len(texts) + 1))

    def sender(db: sqlite3.Connection) -> Callable[[], None]:
        def send() -> None:
            db.execute("BEGIN")
            db.execute(INSERT, (str(uuid.uuid4()), 1, next(it), True, now_ms()))
            db.execute("COMMIT")
        return send

    # The fast mode and its peer (synchronous=NORMAL), beside the durable ones, in alternating rounds.
    fast = nk.Store.open(folder / "ours-fast.db", durability="fast")
    fast_conv = fast.conversations.create("bench")
    fast_peer = open_peer(folder / "peer-fast.db", "NORMAL")
    ours_send, peer_send_t, fast_send, fast_peer_send = interleaved(
        [lambda: conv.send(next(it)), sender(peer), lambda: fast_conv.send(next(it)), sender(fast_peer)],
        repeat=9, number=max(1, sends // 9))
    fast.close()
    fast_peer.close()

    print()
    table([
        (f"page of 50 at depth {depth:,} vs newest page", deep, "our newest page", newest, "≤ 1.5×", ""),
        ("send one message, durable (from Python)", ours_send, "sqlite3 INSERT + COMMIT, WAL, FULL", peer_send_t, "≤ 1.0×", ""),
        ("send one message, fast (from Python)", fast_send, "sqlite3 INSERT + COMMIT, WAL, NORMAL", fast_peer_send, "≤ 1.0×", ""),
        ("send: durable vs fast (the promise's cost)", ours_send, "our fast mode", fast_send, "report", ""),
        (f"insert_many of {n:,} messages", ours_bulk, "sqlite3 executemany", peer_bulk, "≤ 1.0×",
         f"; throughput {n / ours_bulk:,.0f} vs {n / peer_bulk:,.0f} rows/s = {peer_bulk / ours_bulk:.2f}× the peer, "
         "goal ≥ 1.5× (issue 11; from a pyarrow Table: benchmarks/bulk_write_bench.py)"),
    ])
    print(f"\nfor context: the peer's newest page {fmt(peer_newest)} (ours {newest / peer_newest:.2f}×), its page at "
          f"depth {depth:,} {fmt(peer_deep_t)} (ours {deep / peer_deep_t:.2f}×), in the same two index seeks")
    store.close()
    peer.close()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
