"""Stores on broken files: damaged pages, files that are not databases, a full disk.

- ``corruption``: a store is filled, then random bytes are written into random pages (a different
  seed each round). Opening and reading everything either works or raises ``CorruptStoreError``
  (or another ``NotesError``); nothing else, never a crash.
- ``garbage``: files that are not stores (random bytes, text, an empty file, a truncated store,
  another application's SQLite database): a clear ``NotesError``, and the file is not altered.
- ``full_disk``: a store on a small tmpfs (where mounting is allowed), and a store capped with
  ``max_size_bytes``, are written until full: the failing write is a ``StorageFullError`` that
  saves nothing of itself, everything saved before is still there, the file passes
  ``integrity_check``, and once space is freed (or the cap raised) the store writes again.
"""
from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import noteskit as nk

from .common import integrity


def _fill(path: Path, n: int, rng: random.Random) -> None:
    with nk.Store.open(path) as s:
        s.articles.create_many([{"title": f"t{i}", "content": "内容 " * rng.randrange(1, 200)} for i in range(n)])
        for i in range(0, n, 7):
            d = s.articles.new_draft(title=f"draft {i}")
            d.content = "x" * rng.randrange(1, 3000)


def _read_everything(path: Path) -> int:
    """Opens the store and reads every article and draft; returns how many rows were read."""
    with nk.Store.open(path) as s:
        n = sum(1 for _ in s.articles.iter())
        n += len(s.articles.drafts())
        s.changes(limit=1000)
        s.articles.create(title="after", content="damage")
        return n


def run_corruption(rounds: int = 200, seed: int = 11) -> Dict[str, Any]:
    outcomes: Dict[str, int] = {}
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="nk-corrupt-") as tmp:
        pristine = Path(tmp) / "pristine.db"
        _fill(pristine, 1500, rng)
        data = pristine.read_bytes()
        for r in range(rounds):
            damaged = bytearray(data)
            page = 4096
            pages = len(damaged) // page
            for _ in range(rng.choice([1, 5, 50, 500])):
                where = rng.randrange(0 if rng.random() < 0.05 else page, len(damaged))
                damaged[where] = rng.randrange(256)
            if rng.random() < 0.2:  # a whole page of noise
                p = rng.randrange(1, pages)
                damaged[p * page:(p + 1) * page] = rng.randbytes(page)
            target = Path(tmp) / f"damaged-{r}.db"
            target.write_bytes(bytes(damaged))
            target.chmod(0o600)  # a private copy, as the store it damages (no PrivacyWarning)
            try:
                _read_everything(target)
                outcome = "readable"
            except nk.NotesError as e:
                outcome = type(e).__name__
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            target.unlink()
            for suffix in ("-wal", "-shm"):
                Path(str(target) + suffix).unlink(missing_ok=True)
    unexpected = set(outcomes) - {"readable", "CorruptStoreError", "SchemaError", "StorageError"}
    assert not unexpected, f"damaged files gave {outcomes}"
    return {"rounds": rounds, **{f"outcome_{k}": v for k, v in sorted(outcomes.items())}, "crashes": 0}


def garbage_files(folder: Path) -> Dict[str, Path]:
    """Files that are not NotesKit stores, by name."""
    rng = random.Random(12)
    files: Dict[str, bytes] = {
        "random bytes": rng.randbytes(64 * 1024),
        "a text file": "hello, this is not a database\n".encode() * 100,
        "an empty file": b"",
        "one byte": b"S",
        "a SQLite header then noise": b"SQLite format 3\x00" + rng.randbytes(8000),
    }
    paths = {}
    for name, data in files.items():
        p = folder / (name.replace(" ", "_") + ".db")
        p.write_bytes(data)
        paths[name] = p
    store = folder / "store.db"
    _fill(store, 300, rng)
    truncated = folder / "truncated.db"
    truncated.write_bytes(store.read_bytes()[: 4096 * 3 + 100])
    paths["a truncated store"] = truncated
    other = folder / "other_app.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE contacts(name TEXT)")
    db.execute("INSERT INTO contacts VALUES ('someone')")
    db.commit()
    db.close()
    paths["another application's database"] = other
    return paths


def run_garbage() -> Dict[str, str]:
    """What opening (and reading) each non-store file gives; each file is left as it was."""
    outcomes: Dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="nk-garbage-") as tmp:
        for name, path in garbage_files(Path(tmp)).items():
            before = path.read_bytes()
            try:
                with nk.Store.open(path) as s:
                    s.articles.count()
                    list(s.articles.iter())
                outcomes[name] = "opened"
            except nk.NotesError as e:
                outcomes[name] = type(e).__name__
            if outcomes[name] != "opened" and name != "an empty file":
                assert path.read_bytes() == before, f"{name}: the file was altered by a failed open"
    return outcomes


@contextlib.contextmanager
def small_disk(size_kb: int) -> Iterator[Optional[Path]]:
    """A tmpfs of `size_kb` KB mounted on a temporary folder, or None where mounting is not allowed."""
    with tempfile.TemporaryDirectory(prefix="nk-small-disk-") as tmp:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", tmp],
                                 capture_output=True).returncode == 0
        try:
            yield Path(tmp) if mounted else None
        finally:
            if mounted:
                subprocess.run(["umount", "-l", tmp], check=False)


def fill_until_full(path: Path, rng: random.Random, block: int = 20_000,
                    max_size_bytes: Optional[int] = None) -> Dict[str, Any]:
    """Writes to the store at `path` until it is full — the disk (a small tmpfs), or the store's
    `max_size_bytes` cap when given — and checks that nothing saved was lost; returns figures."""
    saved: Dict[int, str] = {}
    full_errors: Dict[str, int] = {}
    ballast = path.parent / "ballast"
    if max_size_bytes is None:  # room to free later: a quarter of the disk in another file
        ballast.write_bytes(b"\0" * (os.statvfs(path.parent).f_bavail * os.statvfs(path.parent).f_frsize // 4))
    with nk.Store.open(path, max_size_bytes=max_size_bytes) as s:
        draft = s.articles.new_draft(title="kept draft")
        draft.content = "draft content before the disk filled"
        for i in range(100_000):
            content = f"{i} " + "".join(rng.choice("abcdefgh字") for _ in range(block))
            try:
                a = s.articles.create(title=f"t{i}", content=content)
                saved[a.id] = content
            except nk.StorageFullError as e:
                full_errors["create"] = full_errors.get("create", 0) + 1
                assert "full" in str(e)
                break
        else:
            raise AssertionError("the disk never filled")
        count_at_full = s.articles.count()
        assert count_at_full == len(saved), f"{count_at_full} articles after the full disk, {len(saved)} saved"
        # every kind of write fails cleanly on the full disk (a small one may still fit in a free page)
        for name, write in (("create_many", lambda: s.articles.create_many(
                                [{"title": "m", "content": "y" * block} for _ in range(20)])),
                            ("draft", lambda: setattr(draft, "content", "z" * (block * 10))),
                            ("update", lambda: s.articles.update(next(iter(saved)), content="w" * (block * 10)))):
            try:
                write()
            except nk.StorageFullError:
                full_errors[name] = full_errors.get(name, 0) + 1
        assert s.articles.count() == count_at_full
        assert s.articles.draft(draft.id).content == "draft content before the disk filled"
        for id, content in saved.items():
            assert s.articles.get(id).content == content
        # freeing space (another file on the disk, or a higher cap) lets the same store write again
        if max_size_bytes is None:
            ballast.unlink()
        else:
            s.set_max_size(max_size_bytes * 2)
        s.articles.create(title="after", content="space was freed")
        draft.content = "typed after space was freed"
        assert draft.save().content == "typed after space was freed"
    with nk.Store.open(path) as s:
        assert s.articles.count() == len(saved) + 2
    check = integrity(path)
    assert check == "ok", check
    return {"saved_before_full": count_at_full, **{f"full_{k}": v for k, v in full_errors.items()},
            "lost": 0, "integrity": check}


def run_full_disk(rounds: int = 5, size_kb: int = 2048, seed: int = 13) -> Dict[str, Any]:
    """Fills stores `rounds` times on a small tmpfs (when mounting is allowed) and `rounds` times
    against a `max_size_bytes` cap; returns the summed figures."""
    rng = random.Random(seed)
    totals: Dict[str, Any] = {"rounds_tmpfs": 0, "rounds_cap": 0}

    def add(figures: Dict[str, Any]) -> None:
        for k, v in figures.items():
            totals[k] = totals.get(k, 0) + v if isinstance(v, int) else v

    for _ in range(rounds):
        block = rng.choice([2_000, 20_000, 100_000])
        with small_disk(size_kb) as disk:
            if disk is not None:
                add(fill_until_full(disk / "full.db", rng, block=block))
                totals["rounds_tmpfs"] += 1
        with tempfile.TemporaryDirectory(prefix="nk-capped-") as tmp:
            add(fill_until_full(Path(tmp) / "capped.db", rng, block=block, max_size_bytes=size_kb * 1024))
            totals["rounds_cap"] += 1
    return totals


def run(rounds: int = 200, full_rounds: int = 5) -> Dict[str, Any]:
    figures = {f"corrupt_{k}": v for k, v in run_corruption(rounds).items()}
    garbage = run_garbage()
    figures["not_a_store"] = ";".join(f"{k}->{v}" for k, v in garbage.items())
    figures.update({f"disk_{k}": v for k, v in run_full_disk(full_rounds).items()})
    return figures


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--full-rounds", type=int, default=5)
    args = parser.parse_args()
    show("broken_files", run(args.rounds, args.full_rounds))
