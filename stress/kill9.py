"""A child process killed with SIGKILL at random moments while it writes.

Modes:

- ``drafts``: the child opens drafts, types into them (each keystroke written through) and saves
  some, printing a line after each call returns. After every kill: the file opens,
  ``PRAGMA integrity_check`` is ok, every draft the child reported is there with at least the
  content it reported, every article it reported saved is there, and no draft is both saved and
  still open.
- ``import``: the child imports two versions of one large file in turn, each replacing the other
  (each import one transaction). After every kill: integrity ok, and every article is of one and
  the same version (each import all or nothing).
- ``export``: the child exports a store to a JSON file and to a Markdown folder in turn, over and
  over. After every kill: what is at the targets is whole (the old export or the new one), what
  the killed export left beside them is readable by the owner only, and the next export into that
  folder leaves no leftover.
- ``chat-import``: the child imports a large Telegram export and a large WhatsApp chat in turn,
  deleting the conversation after each. After every kill: integrity ok, at most one conversation,
  and it holds every message of its file (each import all or nothing).
- ``migration``: the child opens a store of the shape before migration 0005 (which rewrites it
  into the compact form, then VACUUMs it) and is killed at a random moment. After every kill:
  integrity ok, and the store opens with every record and change as before.
"""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import noteskit as nk

from .common import child_env, integrity

DRAFT_CHILD = r"""
import sys, noteskit as nk
s = nk.Store.open(sys.argv[1])
start = int(sys.argv[2])
for i in range(start, start + 10**9):
    d = s.articles.new_draft(title=f"draft {i}")
    print("draft", d.id, i, flush=True)
    for k in range(3):
        d.content = f"content {i} {k}"
        print("typed", d.id, i, k, flush=True)
    if i % 3 == 0:
        a = d.save()
        print("saved", a.id, i, flush=True)
"""

IMPORT_CHILD = r"""
import sys, noteskit as nk
s = nk.Store.open(sys.argv[1])
files = sys.argv[3:]
n = int(sys.argv[2])
print("ready", flush=True)  # the parent's random clock starts here, so a kill can hit the first import
while True:
    print("importing", n % 2, flush=True)
    report = s.import_(files[n % 2], on_conflict="replace")
    print("imported", n % 2, flush=True)
    n += 1
"""


EXPORT_CHILD = r"""
import shutil, sys, noteskit as nk
s = nk.Store.open(sys.argv[1], read_only=True)
out = sys.argv[2]
print("ready", flush=True)
while True:
    print("exporting json", flush=True)
    s.export(out + "/backup.json")
    print("removing vault", flush=True)
    shutil.rmtree(out + "/vault", ignore_errors=True)
    print("exporting markdown", flush=True)
    s.export(out + "/vault", format="markdown")
"""


CHAT_IMPORT_CHILD = r"""
import sys, noteskit as nk
s = nk.Store.open(sys.argv[1])
files = [(sys.argv[2], "telegram"), (sys.argv[3], "whatsapp")]
# The child before this one may have been killed between an import and its delete: start empty, or
# the next import would make a second conversation that the check would take for a half import.
for c in list(s.conversations):
    c.delete()
print("ready", flush=True)
while True:
    for path, fmt in files:
        print("importing", fmt, flush=True)
        s.import_(path, format=fmt, me="Bob", **({"date_order": "dmy"} if fmt == "whatsapp" else {}))
        print("imported", fmt, flush=True)
        for c in list(s.conversations):
            c.delete()
"""


def _kill_at_random(argv: List[str], rng: random.Random, low: float, high: float) -> List[str]:
    """Starts the child, reads its lines for a random time, SIGKILLs it; returns the lines read."""
    proc = subprocess.Popen([sys.executable, "-c", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=child_env())
    assert proc.stdout is not None
    lines: List[str] = []
    first = proc.stdout.readline()  # wait until the child is writing, then give it a random time
    if not first:
        proc.wait()
        raise AssertionError(f"the child died before writing: {proc.stderr.read() if proc.stderr else ''}")
    lines.append(first)
    deadline = time.monotonic() + rng.uniform(low, high)
    import selectors
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if selector.select(timeout=max(0.0, deadline - time.monotonic())):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    selector.close()
    assert proc.returncode == -signal.SIGKILL, f"the child ended on its own ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}"
    return lines


def run_drafts(kills: int = 50, seed: int = 9, path: Optional[Path] = None) -> Dict[str, Any]:
    rng = random.Random(seed)
    drafts: Dict[int, tuple] = {}   # draft id -> (i, last typed k or -1)
    saved: Dict[int, int] = {}      # article id -> i
    with tempfile.TemporaryDirectory(prefix="nk-kill9-") as tmp:
        db = path or Path(tmp) / "kill9.db"
        nk.Store.open(db).close()
        start = 0
        for _ in range(kills):
            for line in _kill_at_random([DRAFT_CHILD, str(db), str(start)], rng, 0.05, 0.6):
                word, *numbers = line.split()
                if word == "draft":
                    drafts[int(numbers[0])] = (int(numbers[1]), -1)
                elif word == "typed":
                    drafts[int(numbers[0])] = (int(numbers[1]), int(numbers[2]))
                elif word == "saved":
                    saved[int(numbers[0])] = int(numbers[1])
                    drafts = {d: v for d, v in drafts.items() if v[0] != int(numbers[1])}
            check = integrity(db)
            assert check == "ok", check
            with nk.Store.open(db) as s:
                open_drafts = {d.id: d for d in s.articles.drafts()}
                titles = {a.title: a for a in s.articles.iter()}
                for id, (i, k) in list(drafts.items()):
                    if id not in open_drafts:  # saved, but killed before it said so
                        assert f"draft {i}" in titles, f"draft {id} (number {i}) was lost"
                        del drafts[id]
                        continue
                    d = open_drafts[id]
                    assert d.title == f"draft {i}"
                    if k >= 0:
                        got = int(d.content.split()[2])
                        assert d.content.startswith(f"content {i} ") and got >= k, (d.content, k)
                for id, i in saved.items():
                    a = s.articles.get(id)
                    assert a.title == f"draft {i}" and a.content.startswith(f"content {i} "), a
                both = [d for d in open_drafts.values() if d.title in titles]
                assert not both, f"drafts both saved and still open: {both[:3]}"
                # drafts the child made but was killed before reporting are there whole, or not at all
                drafts.update({d.id: (int(d.title.split()[1]), -1) for d in open_drafts.values() if d.id not in drafts})
                saved.update({a.id: int(a.title.split()[1]) for a in titles.values() if a.id not in saved})
                start = max([i for i, _ in drafts.values()] + list(saved.values()) + [start - 1]) + 1
        open_count = len(drafts)
    return {"kills": kills, "open": open_count, "saved": len(saved), "lost": 0, "integrity": "ok"}


def run_import(kills: int = 50, records: int = 20_000, seed: int = 10, fmt: str = "jsonl",
               path: Optional[Path] = None) -> Dict[str, Any]:
    """The child imports two versions of one large file (same uids, contents marked "version 0" or
    "version 1") in turn, each replacing the other in one transaction, until it is killed. After
    every kill every article carries one and the same version: no import was half applied."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="nk-kill9-import-") as tmp:
        db = path or Path(tmp) / "kill9.db"
        sources = []
        with nk.Store.memory() as scratch:
            made = scratch.articles.create_many({"title": f"imported {n}", "content": "x" * rng.randrange(10, 400)}
                                                for n in range(records))
            for version in (0, 1):
                for a in made:
                    scratch.articles.update(a.id, content=f"version {version} {a.title}")
                sources.append(Path(tmp) / f"version{version}.{fmt}")
                scratch.export(sources[-1], format=fmt)
        nk.Store.open(db).close()
        seen = {0: 0, 1: 0}
        imports_done = 0
        mid_import = 0
        next_version = 0
        for _ in range(kills):
            lines = _kill_at_random([IMPORT_CHILD, str(db), str(next_version), *map(str, sources)], rng, 0.05, 2.5)
            imports_done += sum(line.startswith("imported") for line in lines)
            mid_import += lines[-1].startswith("importing")  # killed after an import began, before it ended
            check = integrity(db)
            assert check == "ok", check
            with nk.Store.open(db) as s:
                count = s.articles.count()
                versions = {a.content.split()[1] for a in s.articles.iter()}
                assert count in (0, records), f"{count} articles: an import was cut in half"
                assert len(versions) <= 1, f"articles of versions {versions} side by side: an import was cut in half"
                if versions:
                    current = int(versions.pop())
                    seen[current] += 1
                    next_version = 1 - current
        with nk.Store.open(db) as s:
            final = s.articles.count()
    return {"kills": kills, "records_per_import": records, "imports_completed": imports_done, "kills_mid_import": mid_import,
            "kills_after_version_0": seen[0], "kills_after_version_1": seen[1], "final_articles": final,
            "half_imports": 0, "integrity": "ok"}


def run_export(kills: int = 50, records: int = 3_000, seed: int = 11, path: Optional[Path] = None) -> Dict[str, Any]:
    """The child exports one store to ``backup.json`` and to the folder ``vault`` in turn until it
    is killed. After every kill: the targets hold a whole export (or none yet), any leftover of the
    killed export is owner-only (0600 files, 0700 folders), and the next export into that folder
    (here by another process, the parent) removes every leftover."""
    import stat

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="nk-kill9-export-") as tmp:
        db = path or Path(tmp) / "kill9.db"
        with nk.Store.open(db) as s:
            s.articles.create_many({"title": f"exported {n}", "content": "x" * rng.randrange(10, 2000)} for n in range(records))
        out = Path(tmp) / "out"
        out.mkdir()
        with_leftover = 0
        for _ in range(kills):
            lines = _kill_at_random([EXPORT_CHILD, str(db), str(out)], rng, 0.05, 1.5)
            leftovers = [p for p in out.iterdir() if p.name.startswith(".noteskit-")]
            with_leftover += bool(leftovers)
            for p in leftovers:
                bits = stat.S_IMODE(p.lstat().st_mode)
                assert not p.is_symlink() and bits == (0o700 if p.is_dir() else 0o600), (p.name, oct(bits))
                assert all(stat.S_IMODE(q.lstat().st_mode) == 0o600 for q in p.rglob("*")), p.name
            if (out / "backup.json").exists():
                assert len(json.loads((out / "backup.json").read_text())["articles"]) == records
            if (out / "vault").exists() and not lines[-1].startswith("removing"):
                assert len(list((out / "vault").iterdir())) == records, "a half-written Markdown folder is in place"
            with nk.Store.open(db, read_only=True) as s:
                s.export(out / "next.json")
            left = [p.name for p in out.iterdir() if p.name.startswith(".noteskit-")]
            assert not left, f"leftovers survived the next export: {left}"
    return {"kills": kills, "records": records, "kills_leaving_a_leftover": with_leftover, "leftovers_after_next_export": 0}


def write_chat_exports(folder: Path, messages: int) -> "tuple[Path, Path]":
    """A Telegram group export and a WhatsApp chat of `messages` messages each, the shapes those apps
    write (see tests/data/)."""
    start = 1_700_000_000
    telegram = folder / "result.json"
    with open(telegram, "w", encoding="utf-8") as f:
        f.write('{"name": "Kill9 Telegram", "type": "private_group", "id": 99, "messages": [\n')
        for i in range(messages):
            who = ("Alice", "user1") if i % 3 else ("Bob", "user2")
            f.write(("," if i else "") + json.dumps({"id": i + 1, "type": "message", "date_unixtime": str(start + i),
                                                   "from": who[0], "from_id": who[1], "text": f"telegram message {i}"}) + "\n")
        f.write("]}\n")
    whatsapp = folder / "WhatsApp Chat with Kill9.txt"
    with open(whatsapp, "w", encoding="utf-8") as f:
        for i in range(messages):
            t = time.gmtime(start + i * 60)
            f.write(f"{t.tm_mday:02}/{t.tm_mon:02}/{t.tm_year}, {t.tm_hour:02}:{t.tm_min:02} - {'Bob' if i % 2 else 'Alice'}: "
                    f"whatsapp message {i}\nits second line\n")
    return telegram, whatsapp


def run_chat_import(kills: int = 50, messages: int = 20_000, seed: int = 11, path: Optional[Path] = None) -> Dict[str, Any]:
    """The child imports a Telegram export and a WhatsApp chat in turn (deleting the conversation
    after each) until it is killed. After every kill the store holds at most one conversation, with
    every message of its file: no chat import was half applied."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="nk-kill9-chat-") as tmp:
        db = path or Path(tmp) / "kill9.db"
        telegram, whatsapp = write_chat_exports(Path(tmp), messages)
        nk.Store.open(db).close()
        imports_done = mid_import = with_chat = 0
        for _ in range(kills):
            lines = _kill_at_random([CHAT_IMPORT_CHILD, str(db), str(telegram), str(whatsapp)], rng, 0.05, 2.5)
            imports_done += sum(line.startswith("imported") for line in lines)
            mid_import += lines[-1].startswith("importing")
            check = integrity(db)
            assert check == "ok", check
            with nk.Store.open(db) as s:
                chats = list(s.conversations)
                assert len(chats) <= 1, f"{len(chats)} conversations: a delete or an import was cut in half"
                for c in chats:
                    count = _count(c)
                    assert count == messages, f"{c.title}: {count} of {messages} messages: an import was cut in half"
                    with_chat += 1
    return {"kills": kills, "messages_per_import": messages, "imports_completed": imports_done, "kills_mid_import": mid_import,
            "kills_with_a_chat_stored": with_chat, "half_imports": 0, "integrity": "ok"}


def _count(conversation: Any) -> int:
    total, cursor = 0, None
    while True:
        page = conversation.history(limit=1000, before=cursor)
        total += len(page.items)
        if not page.has_more:
            return total
        cursor = page.next_cursor


MIGRATE_CHILD = r"""
import sys, noteskit as nk
print("opening", flush=True)
nk.Store.open(sys.argv[1]).close()
print("migrated", flush=True)
"""


def run_migration(kills: int = 20, messages: int = 60_000, seed: int = 11, path: Optional[Path] = None) -> Dict[str, Any]:
    """A child opens a store of the shape before migration 0005 (which migrates it: one
    transaction, then a VACUUM) and is killed at a random moment. After every kill: integrity ok,
    and the store is either still the old one or the compact one; either way it then opens with
    every record and change intact."""
    import shutil

    from . import old_store

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="nk-kill9-migration-") as tmp:
        template = Path(tmp) / "old.db"
        expected = old_store.build(template, articles=2_000, messages=messages, through=4, seed=seed)
        db = path or Path(tmp) / "kill9.db"
        outcomes = {"old": 0, "migrated": 0, "finished": 0}
        # How long a migration takes here: the kills land inside that window.
        shutil.copy(template, db)  # with its mode: a private store
        started = time.monotonic()
        _kill_at_random_or_end([MIGRATE_CHILD, str(db)], rng, 600.0, 600.0)
        window = time.monotonic() - started
        for _ in range(kills):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            shutil.copy(template, db)  # with its mode: a private store
            lines = _kill_at_random_or_end([MIGRATE_CHILD, str(db)], rng, 0.0, window)
            outcomes["finished"] += any(line.startswith("migrated") for line in lines)
            check = integrity(db)
            assert check == "ok", check
            import sqlite3
            names = [r[0] for r in sqlite3.connect(db).execute("SELECT name FROM migrations ORDER BY id")]
            outcomes["migrated" if names[-1] == "0005_compact_rows_and_feed" else "old"] += 1
            with nk.Store.open(db) as s:
                assert s.articles.count() == len(expected["articles"])
                got = sorted((m.id, m.uid, m.conversation_id, m.content) for c in s.conversations
                             for m in _all_history(s, c.id))
                assert got == [(r[0], r[1], r[2], r[3]) for r in expected["messages"]], "messages differ after the migration"
                seqs = []
                since = 0
                while True:
                    page = s.changes(since=since)
                    if not page:
                        break
                    seqs += [(c.seq, c.uid) for c in page]
                    since = page[-1].seq
                assert seqs == [(r[0], r[4]) for r in expected["changes"]], "the change feed differs after the migration"
    return {"kills": kills, "messages": messages, "migration_s": round(window, 2), "killed_before_commit": outcomes["old"],
            "killed_after_commit": outcomes["migrated"] - outcomes["finished"], "finished": outcomes["finished"],
            "integrity": "ok"}


def _all_history(store: Any, conversation_id: int) -> List[Any]:
    out: List[Any] = []
    cursor = None
    while True:
        page = store.messages.history(conversation_id, limit=1000, before=cursor)
        out += page.items
        cursor = page.next_cursor
        if cursor is None:
            return out


def _kill_at_random_or_end(argv: List[str], rng: random.Random, low: float, high: float) -> List[str]:
    """Like ``_kill_at_random``, but the child may finish first (a migration ends)."""
    proc = subprocess.Popen([sys.executable, "-c", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=child_env())
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first:
        proc.wait()
        raise AssertionError(f"the child died before writing: {proc.stderr.read() if proc.stderr else ''}")
    try:
        proc.wait(timeout=rng.uniform(low, high))
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    rest = proc.stdout.read()
    if proc.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"the child failed ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
    return [first] + rest.splitlines()


def run(kills: int = 50, import_kills: Optional[int] = None) -> Dict[str, Any]:
    figures = {f"drafts_{k}": v for k, v in run_drafts(kills).items()}
    with nk.Store.memory() as s:
        can_import = hasattr(s, "import_") and hasattr(s, "export")
    if can_import:
        figures.update({f"import_{k}": v for k, v in run_import(import_kills or kills).items()})
        figures.update({f"export_{k}": v for k, v in run_export(import_kills or kills).items()})
        from noteskit import exchange
        if "telegram" in exchange.FORMATS:
            figures.update({f"chat_import_{k}": v for k, v in run_chat_import(import_kills or kills).items()})
    figures.update({f"migration_{k}": v for k, v in run_migration(max(5, kills // 2)).items()})
    return figures


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    args = parser.parse_args()
    show("kill9", run(args.kills))
