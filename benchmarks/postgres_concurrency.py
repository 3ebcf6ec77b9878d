"""Many client processes on one PostgreSQL store: a mixed workload, its throughput, and its checks.

Each client is a process with its own NotesKit store on the server, logged in as one of ``--users``
roles (row-level security walls them off from each other), subscribed to the change feed. For
``--seconds`` every client loops over a mix of writes and reads:

- 25% create an article, 5% create_many of 5;
- 20% update its role's shared article at the revision it just read (a ``ConflictError`` when another
  client got there first: read again next time);
- 20% send a message into its role's shared conversation;
- 30% read: get an article it made, the newest page of articles, or a search.

Then it checks, and the script fails (exit 1) unless all hold:

- 0 lost writes: every article and message a client was told it wrote is there, and each shared
  article's revision is 1 + the updates that succeeded on it;
- 0 duplicate or skipped changes: every client's subscription delivered exactly its role's feed
  since the start, each change once, in seq order, and none of another role's records.

There is no peer: the figure is the store's own ops/s at this load (the load average is printed).

    .venv/bin/python benchmarks/postgres_concurrency.py                  # 16 clients, 60 s, 4 roles
    .venv/bin/python benchmarks/postgres_concurrency.py --seconds 5 --clients 4

Without ``--uri`` it starts a throwaway server (examples/throwaway_postgres.py) and removes it
after; with ``--uri`` (an administrator's URI of an empty database) it uses that one.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import noteskit as nk  # noqa: E402


def client(n: int, uri: str, article_id: int, conversation_id: int, seconds: float, start: Any, stop: Any,
           results: Any) -> None:
    """One client process: subscribe, run the mix for ``seconds``, then compare its subscription with the feed."""
    rng = random.Random(n)
    counts = {"create": 0, "create_many": 0, "update": 0, "conflict": 0, "send": 0, "read": 0}
    created: List[int] = []
    sent: List[int] = []
    got: List[nk.Change] = []
    lock = threading.Lock()

    def collect(changes: List[nk.Change]) -> None:
        with lock:
            got.extend(changes)

    with nk.Store.open(uri) as store:
        subscription = store.subscribe(collect)
        since = store.last_change_seq()
        start.wait()
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            i += 1
            r = rng.random()
            if r < 0.25:
                created.append(store.articles.create(title=f"client {n} #{i}", content="the quick brown fox 今天").id)
                counts["create"] += 1
            elif r < 0.30:
                made = store.articles.create_many([{"title": f"client {n} #{i}.{k}", "content": "batch"} for k in range(5)])
                created += [a.id for a in made]
                counts["create_many"] += 1
            elif r < 0.50:
                shared = store.articles.get(article_id)
                try:
                    store.articles.update(article_id, content=f"client {n} #{i}", expected_revision=shared.revision)
                    counts["update"] += 1
                except nk.ConflictError:
                    counts["conflict"] += 1
            elif r < 0.70:
                sent.append(store.messages.send(conversation_id, f"client {n} #{i}").id)
                counts["send"] += 1
            else:
                pick = rng.random()
                if pick < 0.4 and created:
                    store.articles.get(rng.choice(created))
                elif pick < 0.7:
                    store.articles.list(limit=20)
                else:
                    store.articles.search("fox", limit=20)
                counts["read"] += 1
        stop.wait()  # every client has stopped writing
        feed: List[nk.Change] = []
        while True:
            page = store.changes(since=feed[-1].seq if feed else since, limit=1000)
            if not page:
                break
            feed += page
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with lock:
                if got and feed and got[-1].seq >= feed[-1].seq or not feed:
                    break
            time.sleep(0.01)
        time.sleep(0.2)  # anything delivered twice or late shows up now
        subscription.close()
    seqs = [c.seq for c in got]
    expected = [c.seq for c in feed]
    results.put({
        "client": n, "counts": counts, "created": created, "sent": sent,
        "duplicates": len(seqs) - len(set(seqs)),
        "skipped": len(set(expected) - set(seqs)),
        "unexpected": len(set(seqs) - set(expected)),
        "in_order": seqs == sorted(seqs),
        "exact": seqs == expected,
        "article_creates": sorted({c.id for c in got if c.entity == "article" and c.op == "create"}),
        "delivered": len(seqs),
    })


def run(admin_uri: str, seconds: float, clients: int, users: int) -> bool:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(admin_uri)
    password = secrets.token_hex(8)
    roles = [f"bench_{k}_{secrets.token_hex(3)}" for k in range(users)]
    with nk.Store.open(admin_uri) as admin:
        for role in roles:
            admin.create_user(role, password=password)

    def uri_of(role: str) -> str:
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, f"{role}:{password}@{host}", parts.path, parts.query, parts.fragment))

    shared: Dict[str, Any] = {}
    for role in roles:
        with nk.Store.open(uri_of(role)) as store:
            shared[role] = (store.articles.create(title="shared", content="start").id,
                            store.conversations.create(f"{role}'s room").id)
    ctx = multiprocessing.get_context("spawn")
    start, stop, results = ctx.Barrier(clients + 1), ctx.Barrier(clients + 1), ctx.Queue()
    processes = []
    for n in range(clients):
        role = roles[n % users]
        article_id, conversation_id = shared[role]
        p = ctx.Process(target=client, args=(n, uri_of(role), article_id, conversation_id, seconds, start, stop, results))
        p.start()
        processes.append(p)
    start.wait(timeout=300)
    began = time.perf_counter()
    load_before = os.getloadavg()
    stop.wait(timeout=seconds + 300)
    elapsed = time.perf_counter() - began
    load_after = os.getloadavg()
    reports = [results.get(timeout=300) for _ in processes]
    for p in processes:
        p.join(timeout=60)

    ok = all(p.exitcode == 0 for p in processes)
    totals: Dict[str, int] = {}
    for r in reports:
        for k, v in r["counts"].items():
            totals[k] = totals.get(k, 0) + v
    lost = 0
    for k, role in enumerate(roles):
        mine = [r for r in reports if r["client"] % users == k]
        article_id, _ = shared[role]
        with nk.Store.open(uri_of(role)) as store:
            created = [i for r in mine for i in r["created"]]
            sent = [i for r in mine for i in r["sent"]]
            lost += len(created) - len(store.articles.get_many(created, missing="skip"))
            lost += len(sent) - len(store.messages.get_many(sent, missing="skip"))
            updates = sum(r["counts"]["update"] for r in mine)
            lost += abs(store.articles.get(article_id).revision - (1 + updates))
        # Row-level security: a listener hears of its own role's articles only.
        own = set(created) | {article_id}
        foreign = sum(len(set(r["article_creates"]) - own) for r in mine)
        if foreign:
            print(f"role {k}: listeners heard of {foreign} articles of other roles")
            ok = False
    bad_feeds = sum(r["duplicates"] + r["skipped"] + r["unexpected"] for r in reports)
    disordered = sum(not r["in_order"] or not r["exact"] for r in reports)
    ops = sum(totals.values())
    print(f"{clients} client processes, {users} roles, {seconds:g} s on loopback "
          f"(load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; {os.cpu_count()} cores)")
    print("  " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    print(f"  {ops} operations in {elapsed:.1f} s: {ops / elapsed:,.0f} ops/s "
          f"({(ops - totals['read']) / elapsed:,.0f} writes/s)")
    print(f"  {lost} lost writes")
    print(f"  {bad_feeds} duplicate or skipped changes, {disordered} listeners out of order "
          f"(each of {clients} listeners got {min(r['delivered'] for r in reports)}–"
          f"{max(r['delivered'] for r in reports)} changes)")
    return ok and lost == 0 and bad_feeds == 0 and disordered == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--users", type=int, default=4, help="roles the clients are spread over")
    parser.add_argument("--uri", help="an administrator's URI of an empty database (default: a throwaway server)")
    args = parser.parse_args()
    users = max(1, min(args.users, args.clients))
    if args.uri:
        return 0 if run(args.uri, args.seconds, args.clients, users) else 1
    from examples.throwaway_postgres import ThrowawayCluster

    with ThrowawayCluster() as cluster:
        cluster.psql("CREATE DATABASE concurrency OWNER noteskit_admin")
        return 0 if run(cluster.uri(database="concurrency"), args.seconds, args.clients, users) else 1


if __name__ == "__main__":
    sys.exit(main())
