"""Processes, kill -9, damaged and read-only files (the fast versions; `make stress` runs long ones)."""
from __future__ import annotations

import multiprocessing
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import noteskit as nk


def _writer(path: str, n: int, worker: int) -> None:
    with nk.Store.open(path) as s:
        for i in range(n):
            a = s.articles.create(title=f"w{worker}-{i}", content="from a process")
            s.articles.update(a.id, content="updated by its process")
            s.articles.list(limit=10)


def test_four_processes_writing_one_file_lose_nothing_and_never_see_locked(db_path):
    nk.Store.open(db_path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db_path), 150, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with nk.Store.open(db_path) as s:
        assert s.articles.count() == 600
        assert all(a.revision == 2 for a in s.articles.iter())
        assert len({c.seq for c in s.changes(limit=1000)}) == 1000


DRAFT_WRITER = """
import sys, noteskit as nk
s = nk.Store.open(sys.argv[1])
i = 0
while True:
    d = s.articles.new_draft(title=f"draft {i}")
    d.content = f"content {i}"
    print(i, flush=True)
    i += 1
"""


def test_killing_a_writer_at_random_moments_never_loses_a_saved_draft(db_path):
    nk.Store.open(db_path).close()
    rng = random.Random(3)
    confirmed = 0
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", DRAFT_WRITER, str(db_path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        deadline = time.monotonic() + rng.uniform(0.3, 0.8)
        last = -1
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line:
                last = int(line)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        confirmed += last + 1
        with nk.Store.open(db_path) as s:
            drafts = s.articles.drafts()
            # every draft whose content write returned is there, whole
            assert len(drafts) >= confirmed
            assert all(d.content == "" or d.content == f"content {d.title.split()[1]}" for d in drafts)
        db = sqlite3.connect(db_path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()
        confirmed = len(drafts)


def test_a_read_only_store_reads_and_refuses_writes(db_path):
    with nk.Store.open(db_path) as s:
        a = s.articles.create(title="t", content="c")
    before = db_path.read_bytes()
    with nk.Store.open(db_path, read_only=True) as s:
        assert s.articles.get(a.id) == a
        with pytest.raises(nk.ReadOnlyError, match="read-only"):
            s.articles.create(title="x", content="y")
        with pytest.raises(nk.ReadOnlyError):
            s.articles.new_draft()
    assert db_path.read_bytes() == before


def test_opening_a_missing_file_read_only_does_not_create_it(tmp_path):
    with pytest.raises(nk.StorageError):
        nk.Store.open(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_damaged_store_raises_corrupt_store_error_naming_the_damage(db_path):
    with nk.Store.open(db_path) as s:
        s.articles.create_many([{"title": f"t{i}", "content": "x" * 500} for i in range(2000)])
    data = bytearray(db_path.read_bytes())
    page = 4096
    # Every b-tree page but the first (the schema) gets an impossible page type.
    for offset in range(page, len(data), page):
        data[offset] = 0xFF
    db_path.write_bytes(bytes(data))
    with pytest.raises(nk.CorruptStoreError, match="damaged"):
        with nk.Store.open(db_path) as s:
            for _ in s.articles.iter():
                pass
