"""Privacy benchmark (issue 19): what sweeping a folder for leftovers of killed exports costs.

Store.open (not read-only) and every export read the folder they write in, looking for leftovers.
Measured in a folder of N other files and in an empty one, against peers measured in the same run:
opening the same file with Python's sqlite3 (and reading its journal mode), and writing the same
small JSON document the way an atomic writer in Python does (mkstemp beside the target, fsync,
os.replace).

    .venv/bin/python benchmarks/privacy_bench.py [--files 10000] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import table, timeit  # noqa: E402


def peer_open(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode").fetchone()
    db.close()


def peer_export(document: str, target: Path) -> None:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=".peer-")
    with os.fdopen(fd, "w") as f:
        f.write(document)
        f.flush()
        os.fsync(f.fileno())
    os.replace(name, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="other files in the crowded folder (default 10 000)")
    parser.add_argument("--quick", action="store_true", help="1 000 files, fewer rounds")
    args = parser.parse_args()
    files = 1_000 if args.quick else args.files
    repeat = 3 if args.quick else 7
    rows = []
    with tempfile.TemporaryDirectory(prefix="nk-privacy-bench-") as tmp:
        for label, count in (("empty folder", 0), (f"{files} other files", files)):
            folder = Path(tmp) / f"f{count}"
            folder.mkdir()
            for i in range(count):
                (folder / f"other-{i}.txt").touch()
            db = folder / "notes.db"
            with nk.Store.open(db) as store:
                store.articles.create(title="t", content="c")
                document = json.dumps({"articles": [{"title": "t", "content": "c"}]})
                ours = timeit(lambda: nk.Store.open(db).close(), repeat=repeat, number=20)
                peer = timeit(lambda: peer_open(db), repeat=repeat, number=20)
                rows.append((f"open + close, {label}", ours, "sqlite3.connect", peer, "", ""))
                ours = timeit(lambda: store.export(folder / "backup.json"), repeat=repeat, number=20)
                peer = timeit(lambda: peer_export(document, folder / "peer.json"), repeat=repeat, number=20)
                rows.append((f"export of 1 article, {label}", ours, "mkstemp+fsync+replace", peer, "", ""))
    table(rows)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
