"""Before/after of a core change on the hot paths: two builds of libNotesCAPI.so, same workload.

    .venv/bin/python benchmarks/seam_bench.py --before /tmp/old.so [--after .build/release/libNotesCAPI.so]
                                              [--n 2000] [--rounds 15] [--calls 400]

Two libraries with the same soname cannot live in one process, so each round runs one child process
per library, alternately (before, after, before, ...), on its own store of ``--n`` articles; a child
times ``--calls`` calls of each operation (get one article by id, get_many of 100, a frequent and
a rare search, create an article with durability="fast", send a chat message with
durability="fast") and prints the fastest per-call time of its batches, and what its store's
create_many took per article. The figure per operation is the median over rounds of each side: a shared
machine's drift hits both sides alike. Ratio = after / before (1.00× = no change).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List

CHILD = r"""
import json, os, random, sys, tempfile, time
import noteskit as nk
n, calls = int(sys.argv[1]), int(sys.argv[2])
folder = tempfile.mkdtemp(prefix="noteskit-seam-bench-")
rng = random.Random(7)
out = {}
def best(fn, batches=5):
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls // batches):
            fn()
        times.append((time.perf_counter() - start) / (calls // batches))
    return min(times)
with nk.Store.open(os.path.join(folder, "s.db"), durability="fast") as store:
    rows = [{"title": f"t{i}", "content": "今天天气真好 the weather " * 8} for i in range(n)]
    start = time.perf_counter()
    made = store.articles.create_many(rows)
    out["create_many, per article"] = (time.perf_counter() - start) / n
    ids = [a.id for a in made]
    it = iter(rng.choice(ids) for _ in range(10 ** 7))
    out["get one article by id"] = best(lambda: store.articles.get(next(it)))
    some = ids[:100]
    out["get_many of 100 articles"] = best(lambda: store.articles.get_many(some))
    out["search, frequent, page of 20"] = best(lambda: store.articles.search("weather", limit=20))
    out["search, rare (one title)"] = best(lambda: store.articles.search(f"t{n - 1}", field="title"))
    out["create an article, fast"] = best(lambda: store.articles.create(title="t", content="今天天气真好 the weather"))
    conv = store.conversations.create("Alice")
    out["send one message, fast"] = best(lambda: conv.send("hello 你好"))
print(json.dumps(out))
"""


def run(library: str, n: int, calls: int) -> Dict[str, float]:
    env = dict(os.environ, NOTESKIT_LIBRARY=os.path.abspath(library))
    done = subprocess.run([sys.executable, "-c", CHILD, str(n), str(calls)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the library before the change")
    parser.add_argument("--after", default=".build/release/libNotesCAPI.so", help="the library after it")
    parser.add_argument("--n", type=int, default=2_000, help="articles in each store")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=400, help="calls of each operation per child")
    args = parser.parse_args()
    sides: Dict[str, Dict[str, List[float]]] = {"before": {}, "after": {}}
    for _ in range(args.rounds):
        for side, library in (("before", args.before), ("after", args.after)):
            for name, seconds in run(library, args.n, args.calls).items():
                sides[side].setdefault(name, []).append(seconds)
    print(f"seam benchmark: {args.rounds} rounds, {args.n} articles, {args.calls} calls an operation per child")
    print(f"{'measurement':32} {'after':>10} {'before':>10}  {'ratio':>6}")
    for name in sides["before"]:
        before = statistics.median(sides["before"][name])
        after = statistics.median(sides["after"][name])
        print(f"{name:32} {after * 1e6:8.1f} µs {before * 1e6:8.1f} µs  {after / before:5.2f}×")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
