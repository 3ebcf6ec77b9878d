"""Rows of ``analysis_bench.py`` for ``store.search`` over both kinds and for Parquet (issue 13, items 6-7).

``analysis_bench.py`` adds ``ROWS`` to its table; each row's ``prepare(ctx)`` gets its ``Context``
(the store and the plain SQLite peer holding the same messages) and returns (ours, theirs).

- ``store.search`` over articles and messages, first page of 20, for a rare and a frequent query,
  against two ``LIKE`` queries (one per kind, each ``ORDER BY`` time ``LIMIT 21``) merged in
  Python. The articles (one for every 20 messages) are added to both sides here; a few articles
  and messages get the rare word.
- Parquet export of every message: ``store.export(path, table="messages")`` against ADBC's
  ``fetch_arrow_table`` of the same rows written with ``pyarrow.parquet.write_table``.
- Parquet import of that file into a new store: ``store.import_(path)`` against
  ``pq.read_table`` + ``executemany`` into a new plain SQLite file (same schema, same indexes),
  which, as ours, makes the file's conversations and puts each message into its new one.
"""
from __future__ import annotations

import heapq
import itertools
import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, List, Tuple

import noteskit as nk
from _common import text

RARE = "zebracorn"
FREQUENT = "weather"

PEER_ARTICLES = """
CREATE TABLE IF NOT EXISTS articles(id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS articles_newest ON articles(created_at);
"""
Pair = Tuple[Callable[[], object], Callable[[], object]]


def _with_articles(ctx: Any) -> None:
    """Adds one article for every 20 messages to both sides (once), and the rare word to a few records."""
    marker = ctx.folder / "built.json"  # (stores kept by an earlier run, analysis_bench --keep, have them)
    built = json.loads(marker.read_text()) if marker.exists() else {}
    if getattr(ctx, "_search_articles", False) or built.get("search_articles"):
        return
    ctx._search_articles = True
    from datetime import datetime, timedelta, timezone

    rng = ctx.rng
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    n = max(ctx.n_messages // 20, 10)
    records = [{"title": text(rng, 5, 20), "content": text(rng, 50, 300) + (f" {RARE}" if k % (n // 3 + 1) == 7 else ""),
                "created_at": base + timedelta(minutes=20 * k + 3)} for k in range(n)]
    made = ctx.store.articles.create_many(records)
    ctx.peer.executescript(PEER_ARTICLES)
    ctx.peer.execute("BEGIN")
    ctx.peer.executemany("INSERT INTO articles VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(a.id, a.uid, a.title, a.content, int(a.created_at.timestamp() * 1000),
                           int(a.updated_at.timestamp() * 1000), 1) for a in made])
    ctx.peer.execute("COMMIT")
    conv = ctx.conversations[0]
    for m in ctx.store.messages.insert_many(conv.id, [{"content": f"a {RARE} sighting", "from_me": False,
                                                       "sent_at": base + timedelta(minutes=k * 997)} for k in range(3)]):
        ctx.peer.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (m.id, m.uid, conv.id, m.content, 0, int(m.sent_at.timestamp() * 1000), None))
    if marker.exists():
        marker.write_text(json.dumps({**built, "search_articles": True}))


def _search_pair(ctx: Any, query: str) -> Pair:
    _with_articles(ctx)
    like = f"%{query}%"
    articles_sql = ("SELECT id, uid, title, content, created_at, updated_at, revision FROM articles "
                    "WHERE title LIKE ? OR content LIKE ? ORDER BY created_at DESC, id DESC LIMIT 21")
    messages_sql = ("SELECT id, uid, conversation_id, content, from_me, sent_at, sender FROM messages "
                    "WHERE content LIKE ? ORDER BY sent_at DESC, id DESC LIMIT 21")

    # The peer builds what ours returns: a SearchHit/MessageHit holding its Article/Message (aware
    # datetimes) and the spans of every match (LIKE's case folding: ASCII only, as ours).
    pattern = re.compile(re.escape(query), re.IGNORECASE | re.ASCII)

    def spans(text_: str) -> List[Tuple[int, int]]:
        return [m.span() for m in pattern.finditer(text_)]

    def time(ms: int) -> datetime:
        return datetime.fromtimestamp(ms / 1000, timezone.utc)

    def article_hit(r: Tuple[Any, ...]) -> Any:
        article = nk.Article(r[0], r[1], r[2], r[3], time(r[4]), time(r[5]), r[6])
        return nk.SearchHit(article, {"title": spans(r[2]), "content": spans(r[3])})

    def message_hit(r: Tuple[Any, ...]) -> Any:
        return nk.MessageHit(nk.Message(r[0], r[1], r[2], r[3], bool(r[4]), time(r[5]), r[6]), {"content": spans(r[3])})

    def theirs() -> List[Any]:
        arts = [(r[4], 1, r[0], r) for r in ctx.peer.execute(articles_sql, (like, like))]
        msgs = [(r[5], 0, r[0], r) for r in ctx.peer.execute(messages_sql, (like,))]
        merged = itertools.islice(heapq.merge(arts, msgs, reverse=True), 20)
        return [article_hit(r) if kind else message_hit(r) for _, kind, _, r in merged]

    def ours() -> Any:
        return ctx.store.search(query)

    a, b = ours(), theirs()
    assert list(a) == b, (query, len(a), len(b))
    return ours, theirs


def _search_rare(ctx: Any) -> Pair:
    return _search_pair(ctx, RARE)


def _search_frequent(ctx: Any) -> Pair:
    return _search_pair(ctx, FREQUENT)


def _parquet_export(ctx: Any) -> Pair:
    import adbc_driver_sqlite.dbapi as adbc
    import pyarrow.parquet as pq

    ours_path, peer_path = ctx.folder / "ours.parquet", ctx.folder / "peer.parquet"
    connection = adbc.connect(str(ctx.peer_path))
    cursor = connection.cursor()

    def theirs() -> Any:
        cursor.execute("SELECT id, uid, conversation_id, content, from_me, sent_at, sender FROM messages ORDER BY sent_at, id")
        pq.write_table(cursor.fetch_arrow_table(), peer_path)

    def ours() -> Any:
        return ctx.store.export(ours_path, table="messages")

    ours(), theirs()
    assert pq.read_metadata(ours_path).num_rows == pq.read_metadata(peer_path).num_rows
    return ours, theirs


def _parquet_import(ctx: Any) -> Pair:
    import noteskit as nk
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = ctx.folder / "import.parquet"
    ctx.store.export(source, table="messages")
    counter = itertools.count()

    def fresh(name: str) -> Path:
        """A new store file's path (one a kept folder's earlier run left there is removed first)."""
        path = ctx.folder / f"{name}-{next(counter)}.db"
        for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)
        return path

    schema = ctx.peer.execute("SELECT group_concat(sql, ';') FROM sqlite_master WHERE tbl_name IN ('conversations', 'messages') "
                              "AND sql IS NOT NULL").fetchone()[0]

    def ours() -> Any:
        with nk.Store.open(fresh("import")) as target:
            return target.import_(source)

    def theirs() -> Any:
        # The same work as ours: the file's conversations are made (by uid, with their title, dated
        # by their messages) and each message goes into its new conversation; the file's ids are
        # another store's. (Grouped and looked up with Arrow compute: the peer's cheapest way.)
        peer = sqlite3.connect(fresh("peer-import"), isolation_level=None)
        peer.executescript("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; " + schema + ";")
        table = pq.read_table(source, columns=["uid", "content", "from_me", "sent_at", "sender", "conversation_uid",
                                               "conversation_title"])
        sent_at = table["sent_at"].cast(pa.int64())
        chats = (pa.table({"uid": table["conversation_uid"], "title": table["conversation_title"], "sent_at": sent_at})
                 .group_by("uid", use_threads=False).aggregate([("title", "min"), ("sent_at", "min"), ("sent_at", "max")]))
        conversation_id = pc.add(pc.index_in(table["conversation_uid"], value_set=chats["uid"]), 1)
        peer.execute("BEGIN")
        peer.executemany("INSERT INTO conversations(id, uid, title, created_at, last_activity_at) VALUES (?, ?, ?, ?, ?)",
                         zip(range(1, chats.num_rows + 1), *(chats[name].to_pylist() for name in
                                                              ("uid", "title_min", "sent_at_min", "sent_at_max"))))
        columns = [table["uid"], conversation_id, table["content"], table["from_me"], sent_at, table["sender"]]
        peer.executemany("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at, sender) VALUES (?, ?, ?, ?, ?, ?)",
                         zip(*(c.to_pylist() for c in columns)))
        peer.execute("COMMIT")
        peer.close()

    # Every message still in the store (earlier rows, delete_many among them, may have removed some).
    assert ours().created >= ctx.store.messages.count()  # the report counts conversations too
    return ours, theirs


#: (name, goal, what the peer does, prepare, calls per round)
ROWS = [
    ("store.search, rare query, both kinds", "≥ 100× faster (ratio ≤ 0.01×)", "two LIKE queries merged in Python", _search_rare, 5),
    ("store.search, frequent query, both kinds", "≤ 1.0×", "two LIKE queries merged in Python", _search_frequent, 20),
    ("Parquet export of every message", "≥ 1.0× faster (ratio ≤ 1.0×)", "ADBC fetch_arrow_table → pq.write_table",
     _parquet_export, 1),
    ("Parquet import into a new store", "≥ 1.0× faster (ratio ≤ 1.0×)", "pq.read_table → executemany into a new file",
     _parquet_import, 1),
]
