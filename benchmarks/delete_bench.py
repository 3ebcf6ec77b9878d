"""Bulk delete benchmark (issue 13): ``messages.delete_many`` of ``--batch`` random ids, call after
call, through one whole cycle of the search index's removals, against ``executemany`` DELETE of
other random ids on the plain SQLite peer of ``analysis_bench.py`` (same rows, same indexes, WAL,
synchronous=FULL), alternating call by call.

    .venv/bin/python benchmarks/delete_bench.py --messages 200000        # a quick check
    .venv/bin/python benchmarks/delete_bench.py                          # 1 000 000, 10 000 a call

A deleted record's postings leave the search index by the batch (README, "Deleted records leave
the index by the batch"): most calls only note them, and the call that brings the removed records
to an eighth of the index takes them all out. ``analysis_bench.py --only delete`` times the
ordinary calls; this prints every call of a cycle, the call that folds, and the cycle's total
against the peer's (the amortized ratio), with the load average.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analysis_bench import build  # noqa: E402
from _common import fmt  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--batch", type=int, default=10_000, help="ids per delete_many (default 10 000)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="delete-bench-"))
    try:
        print(f"delete benchmark: {args.messages} messages, {args.batch} ids a call "
              f"(load average {os.getloadavg()[0]:.2f} before building)")
        ctx = build(folder, args.messages, args.conversations, rounds=1)
        # Enough calls for one cycle: the removed records reach an eighth of the index.
        calls = -(-args.messages // 8 // args.batch)
        ids = random.Random(16).sample(range(1, args.messages + 1), min(args.messages, 2 * calls * args.batch))
        ours_total = peer_total = 0.0
        print(f"{'call':>4} {'noteskit':>12} {'peer':>12}  {'ratio':>7}  {'load':>5}  removed records pending after it")
        for k in range(calls):
            mine = ids[2 * k * args.batch:(2 * k + 1) * args.batch]
            theirs = ids[(2 * k + 1) * args.batch:(2 * k + 2) * args.batch]
            start = time.perf_counter()
            assert ctx.store.messages.delete_many(mine) == len(mine)
            ours = time.perf_counter() - start
            start = time.perf_counter()
            ctx.peer.execute("BEGIN")
            ctx.peer.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in theirs])
            ctx.peer.execute("COMMIT")
            peer = time.perf_counter() - start
            ours_total += ours
            peer_total += peer
            with sqlite3.connect(f"file:{folder / 'ours.db'}?mode=ro", uri=True) as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'message_search_removed'").fetchone()
            print(f"{k + 1:4} {fmt(ours):>12} {fmt(peer):>12}  {ours / peer:6.2f}×  {os.getloadavg()[0]:5.2f}  "
                  f"{row[0] if row else 0}")
        print(f"{'all':>4} {fmt(ours_total):>12} {fmt(peer_total):>12}  {ours_total / peer_total:6.2f}×  "
              f"{os.getloadavg()[0]:5.2f}  (the cycle's total: the amortized ratio; goal ≤ 1.0×)")
        ctx.store.close()
        ctx.peer.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
