"""Power cuts at every sync point: a write that returned survives, an export is old or new, never half.

Each trial forks a child that loads the power-cut simulator (``stress/powercut_sim.c``, built here
with the system C compiler; TESTING ONLY: it makes its SQLite VFS the default and stands behind the
exporters' file seam, ``nk_testing_set_file_calls``) and runs one scripted sequence of calls through
the public Python API, telling the parent before each call begins and after it returns. The
simulator cuts the power before a chosen event (a write, truncate, sync or name change of a file in
the trial's folder): unsynced writes and name changes are undone, and the child ends inside the
call. The parent then opens the folder with the normal VFS and checks:

- the store opens (a ``CorruptStoreError`` or any other failure counts as ``unclean``) and
  ``PRAGMA integrity_check`` is ok;
- its records are exactly those of every call that returned, with or without the call that was
  running (``lost`` counts trials where they are not: a returned write missing or a half-done call);
- the search index finds what a fresh rebuild finds (``index_mismatch``);
- the export target is absent or the last returned export, byte for byte, or (when an export was
  running) a complete new export of the records of that moment (``export_bad``).

``torn_writes`` counts the torn-mode cuts that found an unsynced write to tear (the others had
nothing unsynced: a cut right after a sync).

Sequences: drafts typed and saved (with updates and deletes), a chat sent and received, an import
of 20 000 records over another, ``reindex``, the migration of a store of the oldest schema, and
exports replacing each other (a JSON file, and folders of Markdown files); each creates or opens its store and closes it at the end. Cut points:
before every sync and just after it, plus random events between; in the drop mode and in the torn
mode (the last unsynced write's last sector lands half new or as garbage). A dry run of each
sequence numbers its events first.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from ctypes import CDLL, CFUNCTYPE, RTLD_GLOBAL, Structure, c_char_p, c_int, c_long, c_longlong, c_uint, c_ulong, c_void_p
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import noteskit as nk
from noteskit import _ffi

from .common import REPO

SOURCE = REPO / "stress" / "powercut_sim.c"
BUILT = REPO / ".build" / "powercut" / "libpowercut.so"
CUT_EXIT = 86
MODES = {"drop": 0, "torn": 1}  # torn: 1 (half new) or 2 (garbage), alternating

Op = Tuple[Any, ...]
State = Dict[str, Any]


def simulator() -> CDLL:
    """Builds (when stale) and loads the simulator, sharing the process's libsqlite3 with NotesKit."""
    if not BUILT.exists() or BUILT.stat().st_mtime < SOURCE.stat().st_mtime:
        BUILT.parent.mkdir(parents=True, exist_ok=True)
        tmp = BUILT.with_suffix(f".{os.getpid()}.so")
        subprocess.run(["cc", "-O1", "-Wall", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE), "-lsqlite3", "-lpthread"],
                       check=True)
        tmp.replace(BUILT)
    lib = CDLL(str(BUILT), mode=RTLD_GLOBAL)
    lib.powercut_start.argtypes = [c_char_p, c_longlong, c_int, c_uint]
    lib.powercut_start.restype = c_int
    lib.powercut_file_calls.restype = c_void_p
    lib.powercut_trace.restype = c_char_p
    lib.powercut_now.restype = None
    lib.powercut_report_to.argtypes = [c_int]
    lib.powercut_report_to.restype = None
    lib.powercut_sabotage.argtypes = [c_int]
    lib.powercut_sabotage.restype = None
    return lib


# ---- Sequences ------------------------------------------------------------------------------------

class Sequence:
    """A scripted list of calls, the folder it starts from, and the records it starts with."""
    name = ""
    queries: List[str] = []

    def __init__(self, size: int) -> None:
        self.size = size

    def setup(self, folder: Path) -> None:
        """Makes the starting folder (with the normal VFS, before any trial)."""

    def start_state(self) -> State:
        return {"articles": {}, "drafts": {}, "conversations": {}, "exports": [], "folders": {}}

    def ops(self) -> List[Op]:
        raise NotImplementedError


class Drafts(Sequence):
    name = "drafts"
    queries = ["draft 1", "typed", "edited", "今天"]

    def ops(self) -> List[Op]:
        out: List[Op] = [("open",)]
        for i in range(self.size):
            out.append(("draft", i))
            for k in range(3):
                out.append(("type", i, f"typed {i} {k} 今天" + "x" * (k * 50)))
            if i % 2 == 0:
                out.append(("save", i))
            if i % 4 == 2:
                out.append(("update", f"draft {i - 2}", f"edited {i - 2} 天气"))
            if i % 8 == 4:
                out.append(("delete", f"draft {i - 4}"))
        return out + [("close",)]


class Chat(Sequence):
    name = "chat"
    queries = ["hello", "消息 1", "reply", "2"]

    def ops(self) -> List[Op]:
        out: List[Op] = [("open",), ("conversation", "Alice"), ("conversation", "Bob")]
        for i in range(self.size):
            who = "Alice" if i % 3 else "Bob"
            out.append(("send", who, f"hello {i} 消息 {i}") if i % 2 == 0 else ("receive", who, f"reply {i} " + "y" * (i % 7)))
        return out + [("close",)]


def _records(count: int, version: int) -> Dict[str, str]:
    return {f"imported {n}": f"version {version} imported {n} " + "z" * (n % 300) for n in range(count)}


class Import(Sequence):
    """An import of `size` records, then a second one replacing it (same uids, other contents)."""
    name = "import"
    queries = ["imported 17 ", "version 1 imported 3"]

    def setup(self, folder: Path) -> None:
        nk.Store.open(folder / "store.db").close()
        with nk.Store.memory() as scratch:
            made = scratch.articles.create_many({"title": t, "content": c} for t, c in _records(self.size, 0).items())
            scratch.export(folder / "version0.jsonl")
            for a, content in zip(made, _records(self.size, 1).values()):
                scratch.articles.update(a.id, content=content)
            scratch.export(folder / "version1.jsonl")

    def ops(self) -> List[Op]:
        return [("open",), ("import", 0), ("import", 1), ("close",)]


class Reindex(Sequence):
    name = "reindex"
    queries = ["article 1", "note 2", "消息", "rewritten"]

    def setup(self, folder: Path) -> None:
        with nk.Store.open(folder / "store.db") as s:
            s.articles.create_many({"title": f"article {n}", "content": f"note {n} 消息 {n}"} for n in range(self.size))
            conv = s.conversations.create("Carol")
            s.messages.insert_many(conv.id, [{"content": f"消息 {n}", "from_me": n % 2 == 0} for n in range(self.size)])

    def start_state(self) -> State:
        state = super().start_state()
        state["articles"] = {f"article {n}": f"note {n} 消息 {n}" for n in range(self.size)}
        state["conversations"] = {"Carol": [(n % 2 == 0, f"消息 {n}") for n in range(self.size)]}
        return state

    def ops(self) -> List[Op]:
        return [("open",), ("reindex",), ("update", "article 1", "rewritten 1"), ("create", "article new", "rewritten new"),
                ("reindex",), ("close",)]


class Migration(Sequence):
    """A store of the oldest schema (migration 0001 only: articles, drafts and the change feed, uids
    as text), written with the SQL that migration shipped (``stress/old_store.py``): opening it
    runs every later migration, the rewrite into compact rows (0005) included."""
    name = "migration"
    queries = ["old 1", "迁移", "new"]
    migrations = 0

    def setup(self, folder: Path) -> None:
        import uuid

        from .old_store import APPLICATION_ID, MIGRATIONS

        db_path = folder / "store.db"
        with nk.Store.open(folder / "current.db"):
            pass
        current = sqlite3.connect(folder / "current.db")
        self.migrations = current.execute("SELECT count(*) FROM migrations").fetchone()[0]
        current.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{folder / 'current.db'}{suffix}").unlink(missing_ok=True)
        db = sqlite3.connect(db_path)
        with db:
            db.execute("CREATE TABLE migrations(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at INTEGER NOT NULL)")
            db.executescript(MIGRATIONS[0][1])
            db.execute("INSERT INTO migrations(name, applied_at) VALUES (?, 0)", (MIGRATIONS[0][0],))
            for n in range(self.size):
                uid = str(uuid.UUID(int=random.Random(n).getrandbits(128), version=4))
                cur = db.execute("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) "
                                 "VALUES (?, ?, ?, ?, ?, 1)", (uid, f"old {n}", f"迁移之前 {n}", 1_764_000_000_000 + n, 1_764_000_000_000 + n))
                db.execute("INSERT INTO changes(entity, op, entity_id, uid, revision, at) VALUES ('article', 'create', ?, ?, 1, ?)",
                           (cur.lastrowid, uid, 1_764_000_000_000 + n))
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute("PRAGMA user_version = 1")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        assert self.migrations > 1, "the library has no later migrations to run"

    def start_state(self) -> State:
        state = super().start_state()
        state["articles"] = {f"old {n}": f"迁移之前 {n}" for n in range(self.size)}
        return state

    def ops(self) -> List[Op]:
        return [("open",), ("create", "new 1", "new after the migration"), ("close",)]


class Export(Sequence):
    """Exports replacing each other, with writes between them."""
    name = "export"
    queries = ["exported 1", "changed"]

    def setup(self, folder: Path) -> None:
        with nk.Store.open(folder / "store.db") as s:
            s.articles.create_many({"title": f"exported {n}", "content": f"text {n} " + "e" * (n % 200)} for n in range(self.size))

    def start_state(self) -> State:
        state = super().start_state()
        state["articles"] = {f"exported {n}": f"text {n} " + "e" * (n % 200) for n in range(self.size)}
        return state

    def ops(self) -> List[Op]:
        return [("open",), ("export",), ("export_folder", 1), ("update", "exported 1", "changed 1"), ("export",),
                ("create", "exported new", "changed new"), ("export",), ("export_folder", 2), ("close",)]


SEQUENCES: Dict[str, Callable[[int], Sequence]] = {
    "drafts": Drafts, "chat": Chat, "import": Import, "reindex": Reindex, "migration": Migration, "export": Export,
}


def apply(state: State, op: Op, size: int) -> State:
    """The records after `op` returned."""
    s = json.loads(json.dumps(state))
    kind = op[0]
    if kind == "draft":
        s["drafts"][f"draft {op[1]}"] = ""
    elif kind == "type":
        s["drafts"][f"draft {op[1]}"] = op[2]
    elif kind == "save":
        title = f"draft {op[1]}"
        s["articles"][title] = s["drafts"].pop(title)
    elif kind in ("update", "create"):
        s["articles"][op[1]] = op[2]
    elif kind == "delete":
        del s["articles"][op[1]]
    elif kind == "conversation":
        s["conversations"][op[1]] = []
    elif kind in ("send", "receive"):
        s["conversations"][op[1]].append([kind == "send", op[2]])
    elif kind == "import":
        s["articles"].update(_records(size, op[1]))
    elif kind == "export":
        s["exports"].append(dict(s["articles"]))
    elif kind == "export_folder":
        s["folders"][str(op[1])] = dict(s["articles"])
    return s


# ---- The child ------------------------------------------------------------------------------------

def run_child(folder: Path, ops: List[Op], report: Callable[[str], None], durability: str = "durable") -> None:
    """Runs the calls, reporting "B n" before call n and "A n [sha]" after it returned."""
    store: Optional[nk.Store] = None
    drafts: Dict[int, Any] = {}
    ids: Dict[str, int] = {}
    conversations: Dict[str, int] = {}
    for n, op in enumerate(ops):
        report(f"B {n}")
        kind, extra = op[0], ""
        if kind == "open":
            store = nk.Store.open(folder / "store.db", durability=durability)
            ids = {a.title: a.id for a in store.articles.iter()}
            conversations = {c.title: c.id for c in store.conversations.iter()}
        assert store is not None
        if kind == "draft":
            drafts[op[1]] = store.articles.new_draft(title=f"draft {op[1]}")
        elif kind == "type":
            drafts[op[1]].content = op[2]
        elif kind == "save":
            a = drafts.pop(op[1]).save()
            ids[a.title] = a.id
        elif kind == "update":
            store.articles.update(ids[op[1]], content=op[2])
        elif kind == "create":
            ids[op[1]] = store.articles.create(title=op[1], content=op[2]).id
        elif kind == "delete":
            store.articles.delete(ids.pop(op[1]))
        elif kind == "conversation":
            conversations[op[1]] = store.conversations.create(op[1]).id
        elif kind == "send":
            store.messages.send(conversations[op[1]], op[2])
        elif kind == "receive":
            store.messages.receive(conversations[op[1]], op[2])
        elif kind == "import":
            store.import_(folder / f"version{op[1]}.jsonl", on_conflict="replace")
        elif kind == "reindex":
            store.reindex()
        elif kind == "export":
            store.export(folder / "backup.json")
            extra = " " + hashlib.sha256((folder / "backup.json").read_bytes()).hexdigest()
        elif kind == "export_folder":
            store.export(folder / f"notes-{op[1]}", format="markdown")
            extra = " " + folder_hash(folder / f"notes-{op[1]}")
        elif kind == "close":
            store.close()
        report(f"A {n}{extra}")


def trial(sim: CDLL, template: Path, work: Path, ops: List[Op], cut_before: int, mode: int, seed: int,
          durability: str = "durable", sabotage: int = 0) -> Tuple[int, List[str], str]:
    """Runs one trial in a forked child; returns its exit status, its report lines and its trace."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(template, work)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read_end)
            sim.powercut_start(str(work).encode(), cut_before, mode, seed)
            sim.powercut_report_to(write_end)
            sim.powercut_sabotage(sabotage)
            _ffi.check(_ffi.nk_testing_set_file_calls(sim.powercut_file_calls()))
            run_child(work, ops, lambda line: os.write(write_end, (line + "\n").encode()) and None, durability)
            os.write(write_end, b"T " + (sim.powercut_trace() or b"") + b"\n")
            status = 0
        except BaseException:
            os.write(write_end, ("E " + traceback.format_exc().replace("\n", " | ") + "\n").encode())
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            chunk = pipe.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    lines = b"".join(chunks).decode().splitlines()
    trace = next((line[2:] for line in lines if line.startswith("T ")), "")
    return os.waitstatus_to_exitcode(status), lines, trace


def replace_file(sim: CDLL, folder: Path, sync_data: bool, sync_folder: bool) -> Optional[bytes]:
    """What a power cut leaves of a file replaced the way the exporters do (write a temporary file,
    rename it over the old one) when the data and/or the folder were synced or not: the model's
    own check, with the seam's calls made directly in a forked child."""
    target, temp = folder / "target.txt", folder / ".target.txt.tmp"
    target.write_bytes(b"old contents")
    pid = os.fork()
    if pid == 0:
        try:
            sim.powercut_start(str(folder).encode(), 0, 0, 1)
            calls = FileCalls.from_address(sim.powercut_file_calls())
            fd = calls.openat(AT_FDCWD, str(temp).encode(), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            calls.write(fd, b"new contents", 12)
            if sync_data:
                calls.fsync(fd)
            calls.close(fd)
            calls.renameat(AT_FDCWD, str(temp).encode(), AT_FDCWD, str(target).encode())
            if sync_folder:
                fd = calls.openat(AT_FDCWD, str(folder).encode(), os.O_RDONLY | os.O_DIRECTORY, 0)
                calls.fsync(fd)
                calls.close(fd)
            sim.powercut_now()
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == CUT_EXIT
    return target.read_bytes() if target.exists() else None


AT_FDCWD = -100


class FileCalls(Structure):
    """nk_file_calls of include/noteskit.h."""
    _fields_ = [("openat", CFUNCTYPE(c_int, c_int, c_char_p, c_int, c_uint)),
                ("write", CFUNCTYPE(c_long, c_int, c_char_p, c_ulong)),
                ("fsync", CFUNCTYPE(c_int, c_int)), ("syncfs", CFUNCTYPE(c_int, c_int)), ("close", CFUNCTYPE(c_int, c_int)),
                ("renameat", CFUNCTYPE(c_int, c_int, c_char_p, c_int, c_char_p)),
                ("mkdirat", CFUNCTYPE(c_int, c_int, c_char_p, c_uint)), ("unlinkat", CFUNCTYPE(c_int, c_int, c_char_p, c_int))]


# ---- The checks -----------------------------------------------------------------------------------

def read_state(store: nk.Store) -> State:
    articles = {a.title: a.content for a in store.articles.iter()}
    drafts = {d.title: d.content for d in store.articles.drafts()}
    conversations = {}
    for c in store.conversations.iter():
        history = store.messages.history(c.id, limit=1000).items
        conversations[c.title] = [[m.from_me, m.content] for m in history]
    return {"articles": articles, "drafts": drafts, "conversations": conversations}


def search_results(store: nk.Store, queries: List[str]) -> List[Any]:
    out: List[Any] = []
    for q in queries:
        out.append([h.article.id for h in store.articles.search_iter(q)])
        out.append([h.message.id for h in store.messages.search_iter(q)])
    return out


def without_exports(state: State) -> State:
    return {k: v for k, v in state.items() if k not in ("exports", "folders")}


def folder_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def check(work: Path, seq: Sequence, ops: List[Op], lines: List[str]) -> Dict[str, Any]:
    """The outcome of one trial: which promises held."""
    began = [int(line.split()[1]) for line in lines if line.startswith("B ")]
    acked = [line.split() for line in lines if line.startswith("A ")]
    done = len(acked)
    state = seq.start_state()
    for op in ops[:done]:
        state = apply(state, op, seq.size)
    running = ops[done] if began and began[-1] == done else None
    after = apply(state, running, seq.size) if running else state
    outcome: Dict[str, Any] = {"acked": done, "unclean": "", "lost": "", "index": "", "export": ""}
    db_path = work / "store.db"
    if done and isinstance(seq, Migration) and seq.migrations:  # the migration returned: it is on disk
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            applied = db.execute("SELECT count(*) FROM migrations").fetchone()[0]
        finally:
            db.close()
        if applied != seq.migrations:
            outcome["lost"] = f"the migration returned, but the store holds {applied} of {seq.migrations} migrations"
    try:
        store = nk.Store.open(db_path)
    except nk.NotesError as e:
        outcome["unclean"] = f"{type(e).__name__}: {e}"
        return outcome
    try:
        sqlite_check = "; ".join(row[0] for row in sqlite3.connect(db_path).execute("PRAGMA integrity_check"))
        if sqlite_check != "ok":
            outcome["unclean"] = f"integrity_check: {sqlite_check[:200]}"
        found = read_state(store)
        if found not in (without_exports(state), without_exports(after)):
            outcome["lost"] = describe(found, without_exports(state))
        before = search_results(store, seq.queries)
        store.reindex()
        if search_results(store, seq.queries) != before:
            outcome["index"] = "the search index disagrees with a rebuild"
    except nk.NotesError as e:
        outcome["unclean"] = f"{type(e).__name__}: {e}"
    finally:
        store.close()
    if any(op[0] == "export" for op in ops):
        hashes = [a[2] for a in acked if ops[int(a[1])][0] == "export"]
        outcome["export"] = check_export(work / "backup.json", hashes, running, after)
    for n, op in enumerate(ops):
        if op[0] == "export_folder" and not outcome["export"]:
            outcome["export"] = check_folder(work / f"notes-{op[1]}", acked[n] if n < done else None,
                                             after["folders"].get(str(op[1])) if running == op else None)
    return outcome


def check_folder(target: Path, acked: Optional[List[str]], running: Optional[Dict[str, str]]) -> str:
    """A folder export: absent until it returned (or whole, when it was running), then the same."""
    if acked is not None:
        return "" if target.is_dir() and folder_hash(target) == acked[2] else f"the returned folder export {target.name} changed"
    if not target.exists() or not any(target.iterdir()):
        return ""
    if running is None:
        return f"a folder export {target.name} that never ran is there"
    try:
        with nk.Store.memory() as scratch:
            scratch.import_(target, format="markdown")
            got = {a.title: a.content for a in scratch.articles.iter()}
    except nk.NotesError as e:
        return f"the folder export {target.name} is incomplete: {e}"
    return "" if got == running else f"the folder export {target.name} holds other records"


def check_export(target: Path, hashes: List[str], running: Optional[Op], after: State) -> str:
    """The JSON export: absent before the first returned, else the last returned byte for byte, or
    (when one was running) a whole new export of the records of that moment."""
    if not target.exists():
        return "" if not hashes else "a returned export is gone"
    if hashes and hashlib.sha256(target.read_bytes()).hexdigest() == hashes[-1]:
        return ""
    if running is None or running[0] != "export":
        return "the export file is not the last returned export"
    try:
        with nk.Store.memory() as scratch:
            scratch.import_(target)
            got = {a.title: a.content for a in scratch.articles.iter()}
    except nk.NotesError as e:
        return f"the export file is incomplete: {e}"
    return "" if got == after["exports"][-1] else "the export file holds other records"


def describe(found: State, expected: State) -> str:
    for key in expected:
        if found.get(key) != expected[key]:
            want, got = expected[key], found.get(key) or {}
            missing = [k for k in want if k not in got][:3]
            extra = [k for k in got if k not in want][:3]
            changed = [k for k in want if k in got and got[k] != want[k]][:3]
            return f"{key}: missing {missing}, unexpected {extra}, changed {changed}"
    return "differs"


# ---- The run --------------------------------------------------------------------------------------

def cut_points(trace: str, random_points: int, max_points: Optional[int], rng: random.Random) -> List[int]:
    """Event numbers to cut before: every sync and the event after it, plus random ones between."""
    syncs = [i + 1 for i, kind in enumerate(trace) if kind == "s"]
    points = set(syncs) | {s + 1 for s in syncs if s < len(trace)}
    others = [e for e in range(1, len(trace) + 1) if e not in points]
    points |= set(rng.sample(others, min(random_points, len(others))))
    chosen = sorted(points)
    if max_points is not None and len(chosen) > max_points:
        chosen = sorted(rng.sample(chosen, max_points))
    return chosen


SIZES = {"drafts": 12, "chat": 30, "import": 20_000, "reindex": 300, "migration": 200, "export": 200}


def run(sequences: Optional[List[str]] = None, random_points: int = 60, max_points: Optional[int] = None,
        sizes: Optional[Dict[str, int]] = None, seed: int = 16, folder: Optional[Path] = None,
        durability: str = "durable", sabotage: int = 0) -> Dict[str, Any]:
    """Every sequence (or those named), cut at every sync point and `random_points` more (at most
    `max_points` per sequence), in both modes. `durability="fast"` shows what the fast mode loses;
    `sabotage` (1: syncfs, 2: folder fsyncs do nothing) shows the trials catch a missing sync."""
    sim = simulator()
    rng = random.Random(seed)
    names = sequences or list(SEQUENCES)
    base = Path(folder or ("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()))
    totals = {"drop_cuts": 0, "sync_points": 0, "lost": 0, "unclean": 0, "index_mismatch": 0, "export_bad": 0,
              "torn_cuts": 0, "torn_writes": 0, "torn_unclean": 0, "torn_lost": 0, "not_reached": 0}
    failures: List[str] = []
    with tempfile.TemporaryDirectory(prefix="nk-powercut-", dir=base) as tmp:
        root = Path(os.path.realpath(tmp))
        for name in names:
            size = (sizes or {}).get(name, SIZES[name])
            seq = SEQUENCES[name](size)
            template = root / f"{name}-template"
            template.mkdir()
            seq.setup(template)
            ops = seq.ops()
            work = root / name
            status, lines, trace = trial(sim, template, work, ops, 0, 0, seed, durability, sabotage)
            if status != 0 or not trace:
                raise AssertionError(f"{name}: the dry run failed ({status}): {lines[-3:]}")
            dry = check(work, seq, ops, lines)
            if any(dry[k] for k in ("unclean", "lost", "index", "export")):
                raise AssertionError(f"{name}: the uncut run does not check out: {dry}")
            points = cut_points(trace, random_points, max_points, rng)
            totals["sync_points"] += trace.count("s")
            for k, point in enumerate(points):
                for mode_name, mode in MODES.items():
                    mode_value = mode if mode == 0 else 1 + k % 2
                    status, lines, _ = trial(sim, template, work, ops, point, mode_value, seed + k, durability, sabotage)
                    if status not in (CUT_EXIT, 0):
                        raise AssertionError(f"{name}: the child failed at cut {point}: {[l for l in lines if l.startswith('E')]}")
                    totals["not_reached"] += status == 0
                    outcome = check(work, seq, ops, lines)
                    torn = mode != 0
                    totals["torn_cuts" if torn else "drop_cuts"] += 1
                    totals["torn_writes"] += any(line.startswith("X torn") for line in lines)
                    if outcome["unclean"]:
                        totals["torn_unclean" if torn else "unclean"] += 1
                    if outcome["lost"] or outcome["export"]:
                        totals["torn_lost" if torn else "lost"] += 1
                    totals["index_mismatch"] += bool(outcome["index"])
                    totals["export_bad"] += bool(outcome["export"])
                    problems = {k: v for k, v in outcome.items() if k != "acked" and v}
                    if problems and len(failures) < 10:
                        failures.append(f"{name} cut before event {point} ({trace[point - 1] if point <= len(trace) else '-'}"
                                        f", {mode_name}{'' if not torn else ' half' if mode_value == 1 else ' garbage'}): {problems}")
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(template, ignore_errors=True)
    figures: Dict[str, Any] = {"cuts": totals["drop_cuts"] + totals["torn_cuts"], **totals, "sequences": len(names)}
    if failures:
        figures["detail"] = " || ".join(failures)
    return figures


def run_isolated(**options: Any) -> Dict[str, Any]:
    """`run(**options)` in a fresh Python process: the trials fork, and a process with other threads
    (a test session's) must not be forked while one of them may hold a lock of the Swift runtime."""
    from .common import child_env
    code = "import json, sys; from stress import powercut; print('@@' + json.dumps(powercut.run(**json.loads(sys.argv[1]))))"
    out = subprocess.run([sys.executable, "-c", code, json.dumps(options)], cwd=REPO, env=child_env(),
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return dict(json.loads(line[2:]))
    raise AssertionError(f"the power-cut run failed ({out.returncode}): {out.stderr[-2000:]}")


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sequences", nargs="*", choices=[[], *SEQUENCES], metavar="sequence")
    parser.add_argument("--random-points", type=int, default=60)
    parser.add_argument("--max-points", type=int)
    args = parser.parse_args()
    show("powercut", run(args.sequences or None, args.random_points, args.max_points))
