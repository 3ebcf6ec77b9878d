"""The store's per-call fixed cost (issue 15: its lock became a compiler-checked `Mutex<Connection?>`):
this build against another build of the library (`--before`, e.g. main), measured in the same run.

    .venv/bin/python benchmarks/lock_bench.py --before /path/to/main/checkout [--n 10000] [--rounds 5]

Each side runs in its own subprocess (one library per process), in alternating rounds so a shared
machine's drift hits both alike: `nk_article_get` through the raw C ABI (the lock, one prepared
statement, a packed row; the Python API's decoding left out), `store.articles.get` through the
Python API, `nk_article_count`, and the raw get on four threads at once on one store (contention).
Prints the medians, after/before ratios and the load average. `--before` takes a checkout with
`.build/release/libNotesCAPI.so`, or the `.so` itself.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def worker(path: str, n: int, calls: int) -> Dict[str, float]:
    from ctypes import byref, c_int64, c_void_p

    import noteskit as nk
    from noteskit import _ffi

    store = nk.Store.open(path, durability="fast")
    if store.articles.count() == 0:
        store.articles.create_many([{"title": f"title {i}", "content": "今天天气真好 " * (i % 20 + 1)} for i in range(n)])
    out = c_void_p()
    handle = c_void_p()
    assert _ffi.nk_store_open(path.encode(), 2, 0, byref(handle)) == 0
    rng = random.Random(7)
    ids = [rng.randint(1, n) for _ in range(calls)]

    def raw_get() -> float:
        start = time.perf_counter()
        for i in ids:
            _ffi.nk_article_get(handle, i, None, 0, byref(out))
            _ffi.nk_free(out)
        return (time.perf_counter() - start) / len(ids)

    def api_get() -> float:
        get = store.articles.get
        start = time.perf_counter()
        for i in ids:
            get(i)
        return (time.perf_counter() - start) / len(ids)

    def count() -> float:
        value = c_int64()
        start = time.perf_counter()
        for _ in range(200):
            _ffi.nk_article_count(handle, byref(value))
        return (time.perf_counter() - start) / 200

    def contended() -> float:
        def loop() -> None:
            mine = c_void_p()
            for i in ids:
                _ffi.nk_article_get(handle, i, None, 0, byref(mine))
                _ffi.nk_free(mine)
        threads = [threading.Thread(target=loop) for _ in range(4)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return (time.perf_counter() - start) / (4 * len(ids))

    raw_get(), api_get()  # warm the page cache and the statement cache
    result = {"raw_get": raw_get(), "api_get": api_get(), "count": count(), "contended_get": contended()}
    _ffi.nk_store_close(handle)
    store.close()
    return result


def library(before: Path) -> Path:
    return before if before.suffix == ".so" else before / ".build" / "release" / "libNotesCAPI.so"


def run(lib: Optional[Path], path: str, n: int, calls: int) -> Dict[str, float]:
    env = dict(os.environ)
    if lib is not None:
        env["NOTESKIT_LIBRARY"] = str(lib)
    cmd = [sys.executable, __file__, "--worker", "--path", path, "--n", str(n), "--calls", str(calls)]
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=False, help="the other build: a checkout or a libNotesCAPI.so")
    parser.add_argument("--after", type=Path, help="this side's library (default: what the package loads)")
    parser.add_argument("--n", type=int, default=10_000, help="articles in the store")
    parser.add_argument("--calls", type=int, default=5_000, help="calls per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.path, args.n, args.calls)))
        return
    folder = Path(tempfile.mkdtemp(prefix="noteskit-lock-bench-"))
    path = str(folder / "store.db")
    after_lib = library(args.after) if args.after else None
    before_lib = library(args.before) if args.before else None
    sides = [("after", after_lib)] + ([("before", before_lib)] if before_lib else [])
    print(f"lock benchmark: {args.n} articles, {args.calls} calls a measurement, {args.rounds} rounds; "
          f"load {os.getloadavg()[0]:.2f}")
    results: Dict[str, List[Dict[str, float]]] = {name: [] for name, _ in sides}
    for _ in range(args.rounds):
        for name, lib in sides:
            results[name].append(run(lib, path, args.n, args.calls))
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in results.items()}
    labels = {"raw_get": "get one article, raw C ABI", "api_get": "get one article, Python API",
              "count": "count articles, raw C ABI", "contended_get": "raw get, 4 threads on one store (per call)"}
    print(f"{'measurement':44} {'after':>10} {'before':>10}  ratio")
    for key, label in labels.items():
        a = medians["after"][key]
        b = medians.get("before", {}).get(key)
        ratio = f"{a / b:5.2f}×" if b else "   -"
        print(f"{label:44} {a * 1e6:8.2f}µs {b * 1e6 if b else float('nan'):8.2f}µs  {ratio}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
