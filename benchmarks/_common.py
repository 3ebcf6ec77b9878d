"""Shared helpers for the benchmarks: timing, a deterministic corpus, and the ratio table."""
from __future__ import annotations

import random
import statistics
import time
from typing import Callable, List, Tuple

LATIN = "the quick brown fox jumps over lazy dog weather park walk note today rain sun".split()
CJK = "今天天气真好我们去公园散步下雨了明天见朋友写字读书喝茶晚上电影音乐"


def text(rng: random.Random, low: int, high: int) -> str:
    """Mixed Chinese and English text of low..high characters, deterministic for a seeded rng."""
    n = rng.randint(low, high)
    out: List[str] = []
    size = 0
    while size < n:
        piece = rng.choice(LATIN) + " " if rng.random() < 0.5 else "".join(rng.choice(CJK) for _ in range(rng.randint(1, 6)))
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


# The chat peers' tables and indexes: those of migration 0002_conversations_messages, on a plain
# SQLite file (chat_bench, send_bench).
PEER_CHAT_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA foreign_keys = ON;
CREATE TABLE conversations(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    created_at INTEGER NOT NULL, last_activity_at INTEGER NOT NULL);
CREATE INDEX conversations_recent ON conversations(last_activity_at, id);
CREATE TABLE messages(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    content TEXT NOT NULL, from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL);
CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
"""
PEER_MESSAGE_INSERT = "INSERT INTO messages(uid, conversation_id, content, from_me, sent_at) VALUES (?, ?, ?, ?, ?)"


def timeit(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """The median seconds per call of ``fn`` over ``repeat`` rounds of ``number`` calls."""
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)


def interleaved(fns: List[Callable[[], object]], repeat: int, number: int) -> List[float]:
    """The median seconds per call of each of ``fns``, measured in alternating rounds of ``number``
    calls (after one warm-up call each), so that a shared machine's drift during the run hits them
    all alike."""
    rounds: List[List[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(repeat):
        for fn, out in zip(fns, rounds):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return [statistics.median(r) for r in rounds]


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def table(rows: List[Tuple[str, float, str, float, str, str]]) -> None:
    """Prints measurement, ours, peer, ratio (ours/peer for times), goal."""
    print(f"{'measurement':44} {'noteskit':>12} {'peer':>12}  {'ratio':>7}  goal")
    for name, ours, peer_name, peer, goal, note in rows:
        print(f"{name:44} {fmt(ours):>12} {fmt(peer):>12}  {ours / peer:6.2f}×  {goal}  ({peer_name}){note}")
