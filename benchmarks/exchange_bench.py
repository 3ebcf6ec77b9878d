"""Exchange benchmark (issue 6): export of N articles to JSON Lines and import of the same file into an
empty store, against a Python peer (``json`` + ``sqlite3.executemany`` into an equivalent schema: WAL,
synchronous=NORMAL, the same table and indexes), measured in the same run; then the peak RSS of a
1 000 000-message JSON Lines import in a fresh process.

Our side does more than the peer: every record is validated, uids are checked for duplicates, every
write is recorded in the change feed (and indexed for search, once the store has a search index),
and the exported file is written beside its target, fsync'ed and renamed.

    .venv/bin/python benchmarks/exchange_bench.py [--quick] [--n 100000] [--rss-n 1000000]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import table, text  # noqa: E402

PEER_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE articles(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 1);
CREATE INDEX articles_newest ON articles(created_at, id);
"""


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def peer_export(db: sqlite3.Connection, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "noteskit", "version": 1, "exported_at": iso(int(time.time() * 1000))}) + "\n")
        for uid, title, content, created, updated, revision in db.execute(
                "SELECT uid, title, content, created_at, updated_at, revision FROM articles ORDER BY id"):
            f.write(json.dumps({"type": "article", "uid": uid, "title": title, "content": content,
                                "created_at": iso(created), "updated_at": iso(updated), "revision": revision},
                               ensure_ascii=False) + "\n")


def peer_import(path: Path, db_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(db_path, isolation_level=None)
    db.executescript(PEER_SCHEMA)

    def rows():
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "article":
                    yield (r["uid"], r["title"], r["content"], ms(r["created_at"]), ms(r["updated_at"]), r["revision"])

    db.execute("BEGIN")
    db.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?)", rows())
    db.execute("COMMIT")
    return db


def alternating(runs: int, ours, peer) -> "tuple[float, float]":
    """The median seconds of ``ours(i)`` and ``peer(i)`` over ``runs`` rounds run in turn, so that a
    machine whose load drifts during the run weighs on both alike."""
    times: "tuple[list, list]" = ([], [])
    for i in range(runs):
        for fn, out in ((ours, times[0]), (peer, times[1])):
            start = time.perf_counter()
            fn(i)
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


# The peak RSS is VmHWM of the child's own address space: getrusage's ru_maxrss survives execve on
# Linux, so a child of a big parent would report the parent's peak.
RSS_CHILD = textwrap.dedent("""
    import sys, time
    import noteskit as nk
    with nk.Store.open(sys.argv[2]) as store:
        start = time.perf_counter()
        report = store.import_(sys.argv[1])
        elapsed = time.perf_counter() - start
    with open("/proc/self/status") as f:
        peak_kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(report.created, elapsed, peak_kb)
""")


def write_big_jsonl(path: Path, n: int, rng: random.Random) -> str:
    """n messages in one conversation if the store has chat, else n articles; returns what was written."""
    words = [text(rng, 20, 120) for _ in range(1000)]
    chat = hasattr(nk.Store, "conversations") or "conversations" in dir(nk.Store.memory())
    start = 1_700_000_000_000
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"type":"noteskit","version":1}\n')
        if chat:
            conv = str(uuid.uuid4())
            f.write(json.dumps({"type": "conversation", "uid": conv, "title": "bench", "created_at": iso(start)}) + "\n")
            for i in range(n):
                f.write(json.dumps({"type": "message", "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                    "conversation_uid": conv, "content": words[i % 1000], "from_me": i % 2 == 0,
                                    "sent_at": iso(start + i * 1000)}, ensure_ascii=False) + "\n")
            return "messages"
        for i in range(n):
            f.write(json.dumps({"type": "article", "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                "title": words[i % 1000][:20], "content": words[(i * 7) % 1000],
                                "created_at": iso(start + i * 1000)}, ensure_ascii=False) + "\n")
        return "articles (this store has no chat yet)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (10 000 articles, 100 000 messages)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rss-n", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5, help="rounds of each measurement (median)")
    args = parser.parse_args()
    n = 10_000 if args.quick else args.n
    rss_n = 100_000 if args.quick else args.rss_n
    runs = 3 if args.quick else args.runs
    rng = random.Random(7)
    folder = Path(tempfile.mkdtemp(prefix="noteskit-exchange-bench-"))
    print(f"exchange benchmark: {n} articles of 100–500 mixed CJK/Latin characters, files in {folder}")

    start = 1_700_000_000_000
    records = [{"uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "title": text(rng, 5, 30),
                "content": text(rng, 100, 500), "created_at": iso(start + i * 1000), "updated_at": iso(start + i * 1000)}
               for i in range(n)]
    store = nk.Store.open(folder / "source.db")
    store.articles.create_many(records)
    peer_src = sqlite3.connect(folder / "peer-source.db", isolation_level=None)
    peer_src.executescript(PEER_SCHEMA)
    peer_src.execute("BEGIN")
    peer_src.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                         ((r["uid"], r["title"], r["content"], ms(r["created_at"]), ms(r["updated_at"])) for r in records))
    peer_src.execute("COMMIT")

    # ---- export ----
    ours_export, peer_export_t = alternating(runs, lambda i: store.export(folder / "ours.jsonl"),
                                             lambda i: peer_export(peer_src, folder / "peer.jsonl"))
    with open(folder / "ours.jsonl", encoding="utf-8") as a, open(folder / "peer.jsonl", encoding="utf-8") as b:
        next(a), next(b)
        assert [json.loads(x) for x in a] == [json.loads(x) for x in b], "the two exports differ"
    size = (folder / "ours.jsonl").stat().st_size

    # ---- import of the same file into an empty store ----
    def ours_import(i: int) -> None:
        with nk.Store.open(folder / f"ours-import-{i}.db") as target:
            assert target.import_(folder / "ours.jsonl").created == n

    def peer_import_run(i: int) -> None:
        peer_import(folder / "ours.jsonl", folder / f"peer-import-{i}.db").close()

    ours_import_t, peer_import_t = alternating(runs, ours_import, peer_import_run)

    print()
    table([
        (f"export {n} articles to JSON Lines", ours_export, "sqlite3 + json.dumps", peer_export_t, "≤ 1.0×",
         f"; {size / ours_export / 1e6:,.0f} vs {size / peer_export_t / 1e6:,.0f} MB/s = {peer_export_t / ours_export:.2f}× the peer, goal ≥ 1.0×"),
        (f"import {n} articles from JSON Lines", ours_import_t, "json.loads + executemany", peer_import_t, "≤ 1.0×",
         f"; {n / ours_import_t:,.0f} vs {n / peer_import_t:,.0f} records/s = {peer_import_t / ours_import_t:.2f}× the peer, goal ≥ 1.0×"),
    ])
    store.close()
    peer_src.close()

    # ---- peak memory of a big import, in a fresh process ----
    big = folder / "big.jsonl"
    what = write_big_jsonl(big, rss_n, rng)
    out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(big), str(folder / "big.db")], check=True,
                         capture_output=True, text=True, env=dict(os.environ)).stdout.split()
    created, elapsed, rss_kb = int(out[0]), float(out[1]), int(out[2])
    big_mb = big.stat().st_size / 1e6
    shutil.rmtree(folder, ignore_errors=True)
    print(f"\nimport of {rss_n:,} {what} from JSON Lines ({big_mb:,.0f} MB) in a fresh process: "
          f"{created:,} records created (the conversation too) in {elapsed:.1f} s, peak RSS {rss_kb / 1024:.0f} MB (goal < 200 MB)")


if __name__ == "__main__":
    main()
