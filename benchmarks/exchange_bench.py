"""Exchange benchmark (issue 6): export of N articles to JSON Lines and import of the same file into an
empty store, against a Python peer (``json`` + ``sqlite3.executemany`` into an equivalent schema: WAL,
synchronous=FULL as our default, durable store has, the same table and indexes), measured in the same run; the import of a Telegram
Desktop export (``result.json``) and of a WhatsApp chat (``.txt``) of N messages against Python peers
(``json.load``, or a regular expression over the lines, then the same message records through
``executemany``); then the peak RSS of a 1 000 000-message import (JSON Lines and Telegram) in a fresh
process.

Our side does more than the peer: every record is validated, uids are checked for duplicates, every
write is recorded in the change feed (and indexed for search, once the store has a search index),
and the exported file is written beside its target, fsync'ed and renamed.

    .venv/bin/python benchmarks/exchange_bench.py [--quick] [--n 100000] [--chat-n 100000] [--rss-n 1000000]
        [--parts articles,chats,rss]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noteskit as nk  # noqa: E402
from _common import table, text  # noqa: E402

PEER_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE articles(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 1);
CREATE INDEX articles_newest ON articles(created_at, id);
"""


PEER_CHAT_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE conversations(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    created_at INTEGER NOT NULL, last_activity_at INTEGER NOT NULL, activity_seq INTEGER NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE, content TEXT NOT NULL,
    from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL, sender TEXT);
CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
CREATE INDEX messages_newest ON messages(sent_at, id);
"""
PEOPLE = ["Alice Liddell", "Bob Stone", "Carol King", "陈小明"]


def write_telegram(path: Path, n: int, rng: random.Random) -> None:
    """A Telegram Desktop group chat export of n messages, as Telegram writes it (indented, text and
    text_entities, every 50th a service message, some with entity lists)."""
    words = [text(rng, 10, 120) for _ in range(1000)]
    start = 1_700_000_000
    with open(path, "w", encoding="utf-8") as f:
        f.write('{\n "name": "Bench group",\n "type": "private_group",\n "id": 4242,\n "messages": [\n')
        for i in range(n):
            when = start + i
            local = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
            if i % 50 == 49:
                record: dict = {"id": i + 1, "type": "service", "date": local, "date_unixtime": str(when), "actor": PEOPLE[0],
                                "actor_id": "user1", "action": "pin_message", "message_id": i, "text": "", "text_entities": []}
            else:
                who = i % len(PEOPLE)
                body = words[i % 1000]
                entities = [{"type": "plain", "text": body}]
                value: object = body
                if i % 7 == 0:
                    value = [body, {"type": "link", "text": "https://example.org"}]
                    entities = [{"type": "plain", "text": body}, {"type": "link", "text": "https://example.org"}]
                record = {"id": i + 1, "type": "message", "date": local, "date_unixtime": str(when), "from": PEOPLE[who],
                          "from_id": f"user{who + 1}", "text": value, "text_entities": entities}
            f.write(("  ,\n" if i else "") + textwrap.indent(json.dumps(record, ensure_ascii=False, indent=1), "  ") + "\n")
        f.write(" ]\n}\n")


def peer_telegram(path: Path, db_path: Path) -> int:
    """json.load, then the same records as ours (derived uid, joined text, from_me, UTC time, sender)."""
    with open(path, encoding="utf-8") as f:
        chat = json.load(f)
    db = sqlite3.connect(db_path, isolation_level=None)
    db.executescript(PEER_CHAT_SCHEMA)
    db.execute("BEGIN")
    conv = db.execute("INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES (?, ?, 0, 0, 0)",
                      (str(uuid.uuid5(uuid.NAMESPACE_URL, f"telegram/{chat['id']}")), chat["name"])).lastrowid

    def rows():
        for m in chat["messages"]:
            if m.get("type") != "message":
                continue
            t = m["text"]
            content = t if isinstance(t, str) else "".join(p if isinstance(p, str) else p.get("text", "") for p in t)
            if not content.strip():
                continue
            yield (str(uuid.uuid5(uuid.NAMESPACE_URL, f"telegram/{chat['id']}/{m['id']}")), conv, content,
                   m.get("from_id") == "user2", int(m["date_unixtime"]) * 1000, m.get("from"))

    db.executemany("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at, sender) VALUES (?, ?, ?, ?, ?, ?)", rows())
    count = db.execute("SELECT count(*) FROM messages").fetchone()[0]
    db.execute("COMMIT")
    db.close()
    return count


def write_whatsapp(path: Path, lines: int, rng: random.Random) -> int:
    """An Android WhatsApp export of about `lines` lines (12-hour times, a few multi-line messages,
    system lines and <Media omitted>); returns the number of messages."""
    words = [text(rng, 10, 120) for _ in range(1000)]
    start = 1_700_000_000
    written = messages = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("11/14/23, 10:13 PM - Messages and calls are end-to-end encrypted. No one outside of this chat, not even "
                "WhatsApp, can read or listen to them. Tap to learn more.\n")
        written = 1
        i = 0
        while written < lines:
            t = time.gmtime(start + i * 60)
            hour = t.tm_hour % 12 or 12
            stamp = f"{t.tm_mon}/{t.tm_mday}/{t.tm_year % 100:02}, {hour}:{t.tm_min:02}\u202f{'PM' if t.tm_hour >= 12 else 'AM'}"
            who = PEOPLE[i % 2].split()[0]
            if i % 97 == 0:
                f.write(f"{stamp} - {who}: <Media omitted>\n")
            elif i % 11 == 0:
                f.write(f"{stamp} - {who}: {words[i % 1000]}\n{words[(i + 1) % 1000]}\n")
                written += 1
                messages += 1
            else:
                f.write(f"{stamp} - {who}: {words[i % 1000]}\n")
                messages += 1
            written += 1
            i += 1
    return messages


WHATSAPP_LINE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2,4}), (\d{1,2}):(\d{2})[\s\u202f]?([AP]M)? - ([^:]+): (.*)$")


def peer_whatsapp(path: Path, db_path: Path) -> int:
    """A regular expression over the lines (continuation lines joined), then executemany of the same
    records (derived uid, text, from_me for "Bob", UTC time, sender)."""
    db = sqlite3.connect(db_path, isolation_level=None)
    db.executescript(PEER_CHAT_SCHEMA)
    db.execute("BEGIN")
    conv = db.execute("INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES (?, ?, 0, 0, 0)",
                      (str(uuid.uuid5(uuid.NAMESPACE_URL, "whatsapp/Alice")), "Alice")).lastrowid

    def rows():
        pending = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                m = WHATSAPP_LINE.match(line)
                if m is None:
                    if pending is not None and not line.startswith(("1", "2", "3", "4", "5", "6", "7", "8", "9")):
                        pending[2] += "\n" + line
                    continue
                if pending is not None and pending[2] != "<Media omitted>":
                    yield tuple(pending)
                month, day, year, hour, minute, ampm, who, body = m.groups()
                h = int(hour) % 12 + (12 if ampm == "PM" else 0) if ampm else int(hour)
                when = int(datetime(2000 + int(year) if len(year) == 2 else int(year), int(month), int(day), h, int(minute),
                                    tzinfo=timezone.utc).timestamp() * 1000)
                pending = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"{who}/{when}/{body}")), conv, body, who == "Bob", when, who]
        if pending is not None and pending[2] != "<Media omitted>":
            yield tuple(pending)

    db.executemany("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at, sender) VALUES (?, ?, ?, ?, ?, ?)", rows())
    count = db.execute("SELECT count(*) FROM messages").fetchone()[0]
    db.execute("COMMIT")
    db.close()
    return count


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def peer_export(db: sqlite3.Connection, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "noteskit", "version": 1, "exported_at": iso(int(time.time() * 1000))}) + "\n")
        for uid, title, content, created, updated, revision in db.execute(
                "SELECT uid, title, content, created_at, updated_at, revision FROM articles ORDER BY id"):
            f.write(json.dumps({"type": "article", "uid": uid, "title": title, "content": content,
                                "created_at": iso(created), "updated_at": iso(updated), "revision": revision},
                               ensure_ascii=False) + "\n")


def peer_import(path: Path, db_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(db_path, isolation_level=None)
    db.executescript(PEER_SCHEMA)

    def rows():
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "article":
                    yield (r["uid"], r["title"], r["content"], ms(r["created_at"]), ms(r["updated_at"]), r["revision"])

    db.execute("BEGIN")
    db.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?)", rows())
    db.execute("COMMIT")
    return db


def alternating(runs: int, ours, peer) -> "tuple[float, float]":
    """The median seconds of ``ours(i)`` and ``peer(i)`` over ``runs`` rounds run in turn, so that a
    machine whose load drifts during the run weighs on both alike."""
    times: "tuple[list, list]" = ([], [])
    for i in range(runs):
        for fn, out in ((ours, times[0]), (peer, times[1])):
            start = time.perf_counter()
            fn(i)
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


# The peak RSS is VmHWM of the child's own address space: getrusage's ru_maxrss survives execve on
# Linux, so a child of a big parent would report the parent's peak.
RSS_CHILD = textwrap.dedent("""
    import sys, time
    import noteskit as nk
    with nk.Store.open(sys.argv[2]) as store:
        start = time.perf_counter()
        report = store.import_(sys.argv[1], **({"me": "Bob Stone"} if sys.argv[1].endswith("result.json") else {}))
        elapsed = time.perf_counter() - start
    with open("/proc/self/status") as f:
        peak_kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(report.created, elapsed, peak_kb)
""")


def write_big_jsonl(path: Path, n: int, rng: random.Random) -> str:
    """n messages in one conversation if the store has chat, else n articles; returns what was written."""
    words = [text(rng, 20, 120) for _ in range(1000)]
    chat = hasattr(nk.Store, "conversations") or "conversations" in dir(nk.Store.memory())
    start = 1_700_000_000_000
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"type":"noteskit","version":1}\n')
        if chat:
            conv = str(uuid.uuid4())
            f.write(json.dumps({"type": "conversation", "uid": conv, "title": "bench", "created_at": iso(start)}) + "\n")
            for i in range(n):
                f.write(json.dumps({"type": "message", "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                    "conversation_uid": conv, "content": words[i % 1000], "from_me": i % 2 == 0,
                                    "sent_at": iso(start + i * 1000)}, ensure_ascii=False) + "\n")
            return "messages"
        for i in range(n):
            f.write(json.dumps({"type": "article", "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                "title": words[i % 1000][:20], "content": words[(i * 7) % 1000],
                                "created_at": iso(start + i * 1000)}, ensure_ascii=False) + "\n")
        return "articles (this store has no chat yet)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small smoke run (10 000 articles, 100 000 messages)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rss-n", type=int, default=1_000_000)
    parser.add_argument("--chat-n", type=int, default=100_000, help="messages of the Telegram export, lines of the WhatsApp chat")
    parser.add_argument("--runs", type=int, default=5, help="rounds of each measurement (median)")
    parser.add_argument("--parts", default="articles,chats,rss", help="which measurements: articles, chats, rss")
    args = parser.parse_args()
    n = 10_000 if args.quick else args.n
    chat_n = 10_000 if args.quick else args.chat_n
    rss_n = 100_000 if args.quick else args.rss_n
    runs = 3 if args.quick else args.runs
    parts = set(args.parts.split(","))
    rng = random.Random(7)
    folder = Path(tempfile.mkdtemp(prefix="noteskit-exchange-bench-"))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if "chats" in parts:
        chats(folder, chat_n, runs, rng)
    if "articles" in parts:
        articles(folder, n, runs, rng)
    if "rss" in parts:
        rss(folder, rss_n, rng)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def chats(folder: Path, n: int, runs: int, rng: random.Random) -> None:
    """Telegram and WhatsApp imports into an empty store against their Python peers."""
    telegram = folder / "result.json"
    write_telegram(telegram, n, rng)
    whatsapp = folder / "WhatsApp Chat with Alice.txt"
    messages = write_whatsapp(whatsapp, n, rng)
    expected = {}

    def ours(path: Path, i: int, **options: object) -> None:
        with nk.Store.open(folder / f"ours-{path.suffix}-{i}.db") as target:
            report = target.import_(path, **options)  # type: ignore[arg-type]
            expected.setdefault(path, report.created - 1)
            assert report.created - 1 == expected[path]
        os.unlink(folder / f"ours-{path.suffix}-{i}.db")

    def peer(fn, path: Path, i: int) -> None:
        count = fn(path, folder / f"peer-{path.suffix}-{i}.db")
        os.unlink(folder / f"peer-{path.suffix}-{i}.db")
        assert count == expected[path], (count, expected[path])

    ours(telegram, -1, me="Bob Stone")
    ours(whatsapp, -1)
    tg_ours, tg_peer = alternating(runs, lambda i: ours(telegram, i, me="Bob Stone"), lambda i: peer(peer_telegram, telegram, i))
    wa_ours, wa_peer = alternating(runs, lambda i: ours(whatsapp, i), lambda i: peer(peer_whatsapp, whatsapp, i))
    print(f"chat imports: a Telegram export of {n} messages ({telegram.stat().st_size / 1e6:,.0f} MB, {expected[telegram]} "
          f"imported), a WhatsApp chat of {n} lines ({messages} messages, {expected[whatsapp]} imported)\n")
    table([
        (f"import a Telegram export of {n} messages", tg_ours, "json.load + executemany", tg_peer, "≥ 1.0×",
         f"; {tg_peer / tg_ours:.2f}× the peer, goal ≥ 1.0×"),
        (f"import a WhatsApp chat of {n} lines", wa_ours, "regex + executemany", wa_peer, "≥ 1.0×",
         f"; {wa_peer / wa_ours:.2f}× the peer, goal ≥ 1.0×"),
    ])
    print()


def articles(folder: Path, n: int, runs: int, rng: random.Random) -> None:
    print(f"exchange benchmark: {n} articles of 100–500 mixed CJK/Latin characters, files in {folder}")

    start = 1_700_000_000_000
    records = [{"uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "title": text(rng, 5, 30),
                "content": text(rng, 100, 500), "created_at": iso(start + i * 1000), "updated_at": iso(start + i * 1000)}
               for i in range(n)]
    store = nk.Store.open(folder / "source.db")
    store.articles.create_many(records)
    peer_src = sqlite3.connect(folder / "peer-source.db", isolation_level=None)
    peer_src.executescript(PEER_SCHEMA)
    peer_src.execute("BEGIN")
    peer_src.executemany("INSERT INTO articles(uid, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                         ((r["uid"], r["title"], r["content"], ms(r["created_at"]), ms(r["updated_at"])) for r in records))
    peer_src.execute("COMMIT")

    # ---- export ----
    ours_export, peer_export_t = alternating(runs, lambda i: store.export(folder / "ours.jsonl"),
                                             lambda i: peer_export(peer_src, folder / "peer.jsonl"))
    with open(folder / "ours.jsonl", encoding="utf-8") as a, open(folder / "peer.jsonl", encoding="utf-8") as b:
        next(a), next(b)
        assert [json.loads(x) for x in a] == [json.loads(x) for x in b], "the two exports differ"
    size = (folder / "ours.jsonl").stat().st_size

    # ---- import of the same file into an empty store ----
    def ours_import(i: int) -> None:
        with nk.Store.open(folder / f"ours-import-{i}.db") as target:
            assert target.import_(folder / "ours.jsonl").created == n

    def peer_import_run(i: int) -> None:
        peer_import(folder / "ours.jsonl", folder / f"peer-import-{i}.db").close()

    ours_import_t, peer_import_t = alternating(runs, ours_import, peer_import_run)

    print()
    table([
        (f"export {n} articles to JSON Lines", ours_export, "sqlite3 + json.dumps", peer_export_t, "≤ 1.0×",
         f"; {size / ours_export / 1e6:,.0f} vs {size / peer_export_t / 1e6:,.0f} MB/s = {peer_export_t / ours_export:.2f}× the peer, goal ≥ 1.0×"),
        (f"import {n} articles from JSON Lines", ours_import_t, "json.loads + executemany", peer_import_t, "≤ 1.0×",
         f"; {n / ours_import_t:,.0f} vs {n / peer_import_t:,.0f} records/s = {peer_import_t / ours_import_t:.2f}× the peer, goal ≥ 1.0×"),
    ])
    store.close()
    peer_src.close()


def rss(folder: Path, rss_n: int, rng: random.Random) -> None:
    """The peak memory of big imports (JSON Lines, a Telegram export), each in a fresh process."""
    big = folder / "big.jsonl"
    what = write_big_jsonl(big, rss_n, rng)
    telegram = folder / "result.json"
    write_telegram(telegram, rss_n, rng)
    for path, label in ((big, f"{what} from JSON Lines"), (telegram, "messages from a Telegram export")):
        out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(path), str(folder / f"big-{path.suffix}.db")], check=True,
                             capture_output=True, text=True, env=dict(os.environ)).stdout.split()
        created, elapsed, rss_kb = int(out[0]), float(out[1]), int(out[2])
        print(f"\nimport of {rss_n:,} {label} ({path.stat().st_size / 1e6:,.0f} MB) in a fresh process: "
              f"{created:,} records created (the conversation too) in {elapsed:.1f} s, peak RSS {rss_kb / 1024:.0f} MB (goal < 200 MB)")


if __name__ == "__main__":
    main()
