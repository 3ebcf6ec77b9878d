"""Several processes writing and reading one store file at once.

Each process opens its own store on the same file and runs a mix of creates, revision-checked
updates, draft saves, deletes, page reads and, where the library has chat, sends. The library's
busy timeout must absorb the lock waits: no ``BusyError`` ("database is locked") reaches the
caller. At the end the counts are exact and ``PRAGMA integrity_check`` is ok.
"""
from __future__ import annotations

import json
import multiprocessing
import random
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

import noteskit as nk

from .common import integrity


def _writer(path: str, ops: int, worker: int, results: "multiprocessing.Queue[Any]") -> None:
    rng = random.Random(worker)
    mine: Dict[int, int] = {}  # id -> revision
    writes = sent = 0
    busy = 0
    try:
        with nk.Store.open(path) as s:
            conv = s.conversations.create(f"process {worker}") if hasattr(s, "conversations") else None
            for i in range(ops):
                roll = rng.random()
                try:
                    if roll < 0.3 or not mine:
                        a = s.articles.create(title=f"p{worker}-{i}", content="from a process")
                        mine[a.id] = a.revision
                        writes += 1
                    elif roll < 0.5:
                        id = rng.choice(list(mine))
                        a = s.articles.update(id, content=f"update {i}", expected_revision=mine[id])
                        mine[id] = a.revision
                        writes += 1
                    elif roll < 0.6:
                        d = s.articles.new_draft(title=f"p{worker}-draft-{i}")
                        d.content = "drafted in a process"
                        a = d.save()
                        mine[a.id] = a.revision
                        writes += 1
                    elif roll < 0.65 and len(mine) > 3:
                        id = rng.choice(list(mine))
                        s.articles.delete(id)
                        del mine[id]
                        writes += 1
                    elif roll < 0.8 and conv is not None:
                        conv.send(f"p{worker} says {i}")
                        sent += 1
                    else:
                        page = s.articles.list(limit=20)
                        assert len(page.items) <= 20
                        for id, revision in list(mine.items())[:3]:
                            assert s.articles.get(id).revision == revision
                except nk.BusyError:
                    busy += 1
        results.put(json.dumps({"worker": worker, "live": len(mine), "writes": writes, "sent": sent, "busy": busy}))
    except BaseException as e:
        results.put(json.dumps({"worker": worker, "error": f"{type(e).__name__}: {e}"}))
        raise


def run(processes: int = 4, ops: int = 2_500, path: Optional[Path] = None) -> Dict[str, Any]:
    """Runs `processes` writers of `ops` operations each on one file; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="nk-processes-") as tmp:
        db = path or Path(tmp) / "processes.db"
        nk.Store.open(db).close()
        ctx = multiprocessing.get_context("spawn")
        results: "multiprocessing.Queue[Any]" = ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(str(db), ops, w, results)) for w in range(processes)]
        for p in procs:
            p.start()
        reports = [json.loads(results.get(timeout=600)) for _ in procs]
        for p in procs:
            p.join(60)
        errors = [r["error"] for r in reports if "error" in r]
        assert not errors, errors
        assert [p.exitcode for p in procs] == [0] * processes
        busy = sum(r["busy"] for r in reports)
        assert busy == 0, f"{busy} BusyError (database is locked) reached the callers"
        live = sum(r["live"] for r in reports)
        writes = sum(r["writes"] for r in reports)
        sent = sum(r["sent"] for r in reports)
        with nk.Store.open(db) as s:
            assert s.articles.count() == live, f"{s.articles.count()} articles, the processes kept {live}"
            feed = sends = 0
            since = 0
            while True:
                changes = s.changes(since=since, limit=1000)
                if not changes:
                    break
                # Every seq once, none skipped (nothing was compacted): the sends' lazy run too.
                assert [c.seq for c in changes] == list(range(since + 1, since + 1 + len(changes)))
                feed += sum(c.entity == "article" for c in changes)
                sends += sum(c.entity == "message" and c.op == "create" for c in changes)
                since = changes[-1].seq
            assert feed == writes, f"{feed} article changes for {writes} writes"
            assert sends == sent, f"{sends} message creates in the feed for {sent} sends"
            assert since == s.last_change_seq()
            if sent:
                messages = sum(len(s.messages.history(c.id, limit=1000).items) for c in s.conversations.iter())
                assert messages == sent, f"{messages} messages, {sent} sent"
        check = integrity(db)
        assert check == "ok", check
    return {"processes": processes, "operations": processes * ops, "live_articles": live, "article_writes": writes,
            "messages": sent, "busy_errors": busy, "integrity": check}


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--ops", type=int, default=2_500)
    args = parser.parse_args()
    show("processes", run(args.processes, args.ops))
