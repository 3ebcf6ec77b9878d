"""Send benchmark (issue 11): one message sent with durability on, against Python's sqlite3 doing
one INSERT + COMMIT, with the WAL pages each commit writes on both sides.

    .venv/bin/python benchmarks/send_bench.py [--sends 3000] [--messages 20000] [--conversations 50]

Both files are in WAL mode with synchronous=FULL (our default, ``durability="durable"``: a
returned send survives a power cut). The peer is the chat benchmark's: the tables and indexes of
migration 0002 (messages with AUTOINCREMENT, the uid index and ``messages_history``), one
``INSERT`` + ``COMMIT`` per message, its uid from ``uuid4``. Our send also writes what the peer
has no part of: the conversation's last activity (and its place in the list:
``conversations_recent``), the ``messages_newest`` index that message search and ``select`` walk
(the change feed writes no row for a send: it keeps the run of sends in ``meta``, see the README); its search postings wait in the pending set (see ``SearchIndex+Pending.swift``), which the
next search folds into the index (a send folds only once 4 096 messages are pending). The last
line prints what that fold costs the search that does it, and per send.

Both stores start with ``--messages`` messages in ``--conversations`` conversations, and the sends
go to the conversations in turn. Rounds alternate (median of 9), each the mean of many sends, so
WAL checkpoints are in the figure. The WAL pages are counted from the frames the ``-wal`` file
holds after a checkpoint and ``--pages`` sends, and ours are split by the b-tree they belong to
(SQLite's ``dbstat``).
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import sqlite3
import struct
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import PEER_CHAT_SCHEMA as PEER_SCHEMA, PEER_MESSAGE_INSERT as INSERT, fmt, interleaved, text  # noqa: E402


def wal_frames(wal: Path) -> List[Tuple[int, bool]]:
    """(page number, ends a commit) of every frame in a WAL file (its documented format: a 32-byte
    header, then per frame a 24-byte header and one page)."""
    data = wal.read_bytes()
    if len(data) < 32:
        return []
    page = struct.unpack(">I", data[8:12])[0]
    out = []
    offset = 32
    while offset + 24 + page <= len(data):
        pgno, commit = struct.unpack(">II", data[offset:offset + 8])
        out.append((pgno, commit != 0))
        offset += 24 + page
    return out


def pages_per_commit(db: Path, send: Callable[[], object], n: int) -> Tuple[float, Dict[str, float]]:
    """WAL frames per commit over `n` sends after a checkpoint, and per b-tree (by name)."""
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    for _ in range(n):
        send()
    frames = wal_frames(db.with_name(db.name + "-wal"))
    commits = sum(1 for _, commit in frames if commit)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        owner = {page: name for name, page in c.execute("SELECT name, pageno FROM dbstat")}
    by = collections.Counter(owner.get(page, "(pointer map / free)") for page, _ in frames)
    return len(frames) / max(commits, 1), {name: count / max(commits, 1) for name, count in by.most_common()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sends", type=int, default=3_000, help="sends per measured side (default 3 000)")
    parser.add_argument("--messages", type=int, default=20_000, help="messages in each store first (default 20 000)")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--pages", type=int, default=100, help="sends whose WAL frames are counted (≤ 120: one WAL)")
    args = parser.parse_args()
    rng = random.Random(11)
    folder = Path(tempfile.mkdtemp(prefix="noteskit-send-bench-"))
    print(f"send benchmark: {args.messages:,} messages in {args.conversations} conversations, files in {folder} "
          f"(load average {os.getloadavg()[0]:.2f})")
    try:
        store = nk.Store.open(folder / "ours.db")  # durable: WAL, synchronous=FULL
        peer = sqlite3.connect(folder / "peer.db", isolation_level=None, check_same_thread=False)
        peer.executescript(PEER_SCHEMA)
        peer.execute("PRAGMA synchronous = FULL")
        conversations = [store.conversations.create(f"friend {k}") for k in range(args.conversations)]
        peer.execute("BEGIN")
        peer.executemany("INSERT INTO conversations(uid, title, created_at, last_activity_at) VALUES (?, ?, 0, 0)",
                         [(str(uuid.uuid4()), c.title) for c in conversations])
        peer.execute("COMMIT")
        per = args.messages // args.conversations
        for k, conv in enumerate(conversations):
            records = [{"content": text(rng, 2, 80), "from_me": i % 2 == 0} for i in range(per)]
            store.messages.insert_many(conv.id, records)
            now = time.time_ns() // 1_000_000
            peer.execute("BEGIN")
            peer.executemany(INSERT, [(str(uuid.uuid4()), k + 1, r["content"], r["from_me"], now) for r in records])
            peer.execute("COMMIT")

        texts = [text(rng, 2, 80) for _ in range(64)]
        turn = {"ours": 0, "peer": 0}

        def ours() -> None:
            k = turn["ours"] = turn["ours"] + 1
            conversations[k % len(conversations)].send(texts[k % len(texts)])

        def theirs() -> None:
            k = turn["peer"] = turn["peer"] + 1
            peer.execute("BEGIN")
            peer.execute(INSERT, (str(uuid.uuid4()), k % len(conversations) + 1, texts[k % len(texts)], True,
                                  time.time_ns() // 1_000_000))
            peer.execute("COMMIT")

        ours_pages, ours_by = pages_per_commit(folder / "ours.db", ours, args.pages)
        peer_pages, peer_by = pages_per_commit(folder / "peer.db", theirs, args.pages)
        load = os.getloadavg()[0]
        t_ours, t_peer = interleaved([ours, theirs], repeat=9, number=max(1, args.sends // 9))
        print(f"\n{'measurement':40} {'noteskit':>12} {'peer':>12}  {'ratio':>7}  {'load':>5}  goal")
        print(f"{'send one message, durable':40} {fmt(t_ours):>12} {fmt(t_peer):>12}  {t_ours / t_peer:6.2f}×  "
              f"{os.getloadavg()[0]:5.2f}  ≤ 1.0×  (sqlite3 INSERT + COMMIT, WAL, FULL)")
        print(f"{'WAL pages per commit':40} {ours_pages:12.2f} {peer_pages:12.2f}  {ours_pages / peer_pages:6.2f}×  "
              f"{load:5.2f}")
        print("\nour pages per send, by b-tree:  " + ", ".join(f"{name} {n:.2f}" for name, n in ours_by.items()))
        print("the peer's:                     " + ", ".join(f"{name} {n:.2f}" for name, n in peer_by.items()))
        with sqlite3.connect(f"file:{folder / 'ours.db'}?mode=ro", uri=True) as c:
            pending = c.execute("SELECT count(*) FROM messages WHERE id > "
                                "(SELECT value FROM meta WHERE key = 'message_search_through')").fetchone()[0]
        start = time.perf_counter()
        store.messages.search("zq")  # no indexed message has it: the index plan checks every pending one, then folds
        fold = time.perf_counter() - start
        print(f"the next search, folding the {pending:,} messages pending: {fmt(fold)} ({fmt(fold / max(pending, 1))} a send; "
              f"load {os.getloadavg()[0]:.2f})")
        store.close()
        peer.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
