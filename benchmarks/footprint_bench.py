"""Footprint benchmark (issue 18): how big a store is against a plain sqlite3 table of the same
columns, and what the change feed costs, measured in the same run.

    .venv/bin/python benchmarks/footprint_bench.py [--scale 0.01] [--before DIR] [--text-max 120]

1. chat: 1 000 000 messages (20 conversations, ``insert_many`` of 10 000 at a time, so the search
   index is folded and the feed holds its runs) against a peer table ``messages(id, uid TEXT,
   conversation_id, content, from_me, sent_at)`` with one ``(conversation_id, sent_at, id)`` index
   and no search. Goals: ≤ 1.5× the peer's file, ≤ 3× the text (UTF-8 bytes).
2. notes: 100 000 articles of 100–500 characters (``create_many``) against ``articles(id, uid
   TEXT, title, content, created_at, updated_at, revision)`` with one ``(created_at, id)`` index.
   Goals: ≤ 1.3× the peer's file, ≤ 2× the text.
3. edits: 10 000 notes edited 100 times each, then ``store.compact()``: ``changes(since=0)`` per
   note (goal ≤ 2), the feed's rows, the file before and after.
4. speed: ``insert_many`` throughput and history paging (a page of 50, newest to oldest), against
   the same calls on another build of the library when ``--before DIR`` names one (a checkout of
   main with ``.build/release/libNotesCAPI.so``, or a folder holding ``libNotesCAPI.so`` and
   ``bindings/python/src``): the same run, alternating, so the machine's drift hits both.

Sizes are of the checkpointed file (the store closed). ``--scale`` multiplies every count (0.01 for
a check). Our side runs in a subprocess per library (``--worker``), which prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import text  # noqa: E402

CONVERSATIONS = 20
BATCH = 10_000


def corpus(n: int, low: int, high: int, seed: int) -> List[str]:
    rng = random.Random(seed)
    return [text(rng, low, high) for _ in range(n)]


def utf8(texts: List[str]) -> int:
    return sum(len(t.encode()) for t in texts)


def file_size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def per_table(path: Path, rows: int) -> Dict[str, float]:
    db = sqlite3.connect(path)
    try:
        return {name: size / rows for name, size in
                db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name HAVING sum(pgsize) > 8192 ORDER BY 2 DESC")}
    except sqlite3.OperationalError:  # no dbstat in this build of SQLite
        return {}
    finally:
        db.close()


# ---- our side, in a worker process (one per library) -------------------------------------------

def worker(task: str, args: argparse.Namespace) -> Dict[str, Any]:
    import noteskit as nk

    path = Path(args.path)
    out: Dict[str, Any] = {"library": str(nk.LIBRARY_PATH)}
    if task == "chat":
        texts = corpus(args.n, 2, args.text_max, 7)
        store = nk.Store.open(path)
        convs = [store.conversations.create(f"chat {i}") for i in range(CONVERSATIONS)]
        start = time.perf_counter()
        for k, first in enumerate(range(0, args.n, BATCH)):
            chunk = texts[first:first + BATCH]
            store.messages.insert_many(convs[k % CONVERSATIONS].id,
                                       [{"content": t, "from_me": i % 2 == 0} for i, t in enumerate(chunk)])
        out["insert_many_s"] = time.perf_counter() - start
        # History paging: a page of 50 at a time through one conversation, newest to oldest.
        pages: List[float] = []
        cursor = None
        while True:
            t0 = time.perf_counter()
            page = store.messages.history(convs[0].id, limit=50, before=cursor)
            pages.append(time.perf_counter() - t0)
            cursor = page.next_cursor
            if cursor is None or len(pages) >= 2_000:
                break
        out["history_page_s"] = statistics.median(pages)
        out["changes_rows"] = len(store.changes(since=0, limit=1000))
        store.close()
    elif task == "notes":
        rng = random.Random(8)
        records = [{"title": text(rng, 5, 30), "content": text(rng, 100, 500)} for _ in range(args.n)]
        store = nk.Store.open(path)
        for first in range(0, args.n, BATCH):
            store.articles.create_many(records[first:first + BATCH])
        store.close()
    elif task == "edits":
        store = nk.Store.open(path)
        made = store.articles.create_many([{"title": f"note {i}", "content": "x" * 200} for i in range(args.n)])
        for round in range(2, args.edits + 1):
            for a in made:
                store.articles.update(a.id, content=f"{round} " + "x" * 200)
        store.close()
        out["before_compact_bytes"] = file_size(path)
        store = nk.Store.open(path)
        total, since = 0, 0
        while True:
            page = store.changes(since=since, limit=1000)
            if not page:
                break
            total, since = total + len(page), page[-1].seq
        out["changes_before"] = total
        if hasattr(store, "compact"):
            t0 = time.perf_counter()
            report = store.compact()
            out["compact_s"] = time.perf_counter() - t0
            out["bytes_freed"] = report.bytes_freed
            total, since = 0, 0
            while True:
                page = store.changes(since=since, limit=1000)
                if not page:
                    break
                total, since = total + len(page), page[-1].seq
            out["changes_after"] = total
        store.close()
        out["after_compact_bytes"] = file_size(path)
    out["bytes"] = file_size(path)
    out["tables"] = per_table(path, args.n)
    return out


def run_worker(task: str, n: int, path: Path, args: argparse.Namespace, before: Optional[Path]) -> Dict[str, Any]:
    env = dict(os.environ)
    if before is not None:
        lib = before / "libNotesCAPI.so"
        if not lib.exists():
            lib = before / ".build" / "release" / "libNotesCAPI.so"
        env["NOTESKIT_LIBRARY"] = str(lib)
        env["PYTHONPATH"] = str(before / "bindings" / "python" / "src")
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if p.exists():
            p.unlink()
    cmd = [sys.executable, __file__, "--worker", task, "--n", str(n), "--path", str(path),
           "--text-max", str(args.text_max), "--edits", str(args.edits)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker {task} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- the peer -----------------------------------------------------------------------------------

def peer_chat(path: Path, n: int, text_max: int) -> int:
    texts = corpus(n, 2, text_max, 7)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("""
        CREATE TABLE messages(id INTEGER PRIMARY KEY, uid TEXT NOT NULL, conversation_id INTEGER NOT NULL,
            content TEXT NOT NULL, from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL);
        CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
        """)
    now = time.time_ns() // 1_000_000
    db.execute("BEGIN")
    db.executemany("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at) VALUES (?, ?, ?, ?, ?)",
                   ((str(uuid.uuid4()), 1 + (i // BATCH) % CONVERSATIONS, t, i % 2 == 0, now + i // BATCH)
                    for i, t in enumerate(texts)))
    db.execute("COMMIT")
    db.close()
    return file_size(path)


def peer_notes(path: Path, n: int) -> int:
    rng = random.Random(8)
    records = [(text(rng, 5, 30), text(rng, 100, 500)) for _ in range(n)]
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("""
        CREATE TABLE articles(id INTEGER PRIMARY KEY, uid TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL,
            created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL);
        CREATE INDEX articles_newest ON articles(created_at, id);
        """)
    now = time.time_ns() // 1_000_000
    db.execute("BEGIN")
    db.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, 1)",
                   ((str(uuid.uuid4()), t, c, now, now) for t, c in records))
    db.execute("COMMIT")
    db.close()
    return file_size(path)


def mb(n: float) -> str:
    return f"{n / 1e6:9.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every count (0.01 for a check)")
    parser.add_argument("--before", type=Path, help="another build to compare speed and size with (e.g. main)")
    parser.add_argument("--text-max", type=int, default=120, help="chat messages are 2..N characters (default 120)")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args)))
        return

    messages, notes, edited = (max(1_000, int(c * args.scale)) for c in (1_000_000, 100_000, 10_000))
    folder = Path(tempfile.mkdtemp(prefix="noteskit-footprint-"))
    print(f"footprint benchmark, files in {folder}; load average {os.getloadavg()[0]:.2f}")
    sides = [("after", None)] + ([("before", args.before)] if args.before else [])

    # ---- 1. chat ----
    text_bytes = utf8(corpus(messages, 2, args.text_max, 7))
    peer = peer_chat(folder / "peer-chat.db", messages, args.text_max)
    chat = {name: run_worker("chat", messages, folder / f"{name}-chat.db", args, lib) for name, lib in sides}
    print(f"\n1. chat: {messages:,} messages of 2–{args.text_max} mixed CJK/Latin characters, "
          f"{text_bytes / messages:.1f} bytes of text each ({mb(text_bytes).strip()})")
    print(f"   peer (uid text, one index, no search)  {mb(peer)}  {peer / text_bytes:5.2f}× the text")
    for name, r in chat.items():
        print(f"   noteskit {name:6} (search index, feed)   {mb(r['bytes'])}  {r['bytes'] / text_bytes:5.2f}× the text  "
              f"{r['bytes'] / peer:5.2f}× the peer   (goals ≤ 3× the text, ≤ 1.5× the peer)")
        print("      per message: " + ", ".join(f"{k} {v:.1f} B" for k, v in r["tables"].items()))

    # ---- 2. notes ----
    text_bytes = 0
    rng = random.Random(8)
    for _ in range(notes):
        text_bytes += len(text(rng, 5, 30).encode()) + len(text(rng, 100, 500).encode())
    peer = peer_notes(folder / "peer-notes.db", notes)
    noted = {name: run_worker("notes", notes, folder / f"{name}-notes.db", args, lib) for name, lib in sides}
    print(f"\n2. notes: {notes:,} articles of 100–500 characters ({mb(text_bytes).strip()} of text)")
    print(f"   peer (uid text, one index, no search)  {mb(peer)}  {peer / text_bytes:5.2f}× the text")
    for name, r in noted.items():
        print(f"   noteskit {name:6} (search index, feed)   {mb(r['bytes'])}  {r['bytes'] / text_bytes:5.2f}× the text  "
              f"{r['bytes'] / peer:5.2f}× the peer   (goals ≤ 2× the text, ≤ 1.3× the peer)")
        print("      per note: " + ", ".join(f"{k} {v:.1f} B" for k, v in r["tables"].items()))

    # ---- 3. edits, then compact ----
    edits = {name: run_worker("edits", edited, folder / f"{name}-edits.db", args, lib) for name, lib in sides}
    print(f"\n3. edits: {edited:,} notes edited {args.edits} times each")
    for name, r in edits.items():
        line = (f"   noteskit {name:6} changes(since=0): {r['changes_before'] / edited:6.1f} per note, "
                f"file {mb(r['before_compact_bytes']).strip()}")
        if "changes_after" in r:
            line += (f"; after compact() ({r['compact_s']:.2f} s): {r['changes_after'] / edited:.1f} per note "
                     f"(goal ≤ 2), file {mb(r['after_compact_bytes']).strip()}, freed {mb(r['bytes_freed']).strip()}")
        print(line)

    # ---- 4. speed ----
    print(f"\n4. speed (chat run above; load average {os.getloadavg()[0]:.2f})")
    for name, r in chat.items():
        print(f"   noteskit {name:6} insert_many {messages / r['insert_many_s']:12,.0f} messages/s   "
              f"history page of 50 {r['history_page_s'] * 1e6:8.1f} µs")
    if "before" in chat:
        a, b = chat["after"], chat["before"]
        print(f"   after/before: insert_many throughput {b['insert_many_s'] / a['insert_many_s']:.2f}×, "
              f"history page time {a['history_page_s'] / b['history_page_s']:.2f}× (goal: no slower)")


if __name__ == "__main__":
    main()
