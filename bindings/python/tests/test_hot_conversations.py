"""A send to a conversation written to lately writes its row and no index page (SQLite, migration
0011_hot_conversations): only the cold conversations are in the index of activity, the hot ones
(at most 64) are merged into the list in one statement. Which ones are hot never changes what the
list, its cursors, get and counts show."""
from __future__ import annotations

import random
import sqlite3
import struct
from pathlib import Path
from typing import List, Optional, Set, Tuple

import noteskit as nk
from stress import old_store


def stored_order(path: Path) -> List[Tuple[int, int]]:
    """(id, last activity in ms) of every conversation by a plain sort of the stored columns."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return [(r[0], r[1]) for r in db.execute(
            "SELECT id, last_activity_at FROM conversations NOT INDEXED ORDER BY last_activity_at DESC, activity_seq DESC")]


def listed(store: nk.Store, limit: int) -> List[Tuple[int, int]]:
    out: List[Tuple[int, int]] = []
    page = store.conversations.list(limit=limit)
    while True:
        out += [(c.id, round(c.last_activity_at.timestamp() * 1000)) for c in page.items]
        if page.next_cursor is None:
            return out
        page = store.conversations.list(limit=limit, after=page.next_cursor)


def hot(path: Path) -> Set[int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return {r[0] for r in db.execute("SELECT id FROM conversations WHERE hot = 1")}


def test_the_list_keeps_its_order_and_cursors_while_conversations_turn_hot_and_cold(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    rng = random.Random(6)
    with nk.Store.open(path) as store:
        convs = [store.conversations.create(f"c{k}") for k in range(150)]
        seen_hot: Set[int] = set()
        for n in range(600):
            conv = convs[rng.randrange(20)] if n % 3 else convs[rng.randrange(150)]
            if n % 50 == 7:
                # Old history: counted, its place in the list kept.
                store.messages.receive(conv.id, f"old {n}", sent_at=conv.created_at)
            else:
                conv.send(f"m {n}")
            now_hot = hot(path)
            assert len(now_hot) <= 64
            seen_hot |= now_hot
            if n % 37 == 0:
                for limit in (1, 7, 64, 1000):
                    assert listed(store, limit) == stored_order(path), (n, limit)
        assert len(seen_hot) > 64  # some went cold again
        assert 0 < len(hot(path)) <= 64
        assert listed(store, 9) == stored_order(path)
        # A reader paging on never sees one twice; one written meanwhile moves above its position.
        first = store.conversations.list(limit=30)
        moved = store.conversations.get(first.items[-1].id)
        store.messages.send(moved.id, "top")
        rest = listed_after(store, first.next_cursor)
        ids = [c.id for c in first.items] + rest
        assert len(ids) == len(set(ids)) == 150
        assert store.conversations.list(limit=1).items[0].id == moved.id
        # get and the counts read the same row whether hot or cold.
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            counts = dict(db.execute("SELECT conversation_id, count(*) FROM messages GROUP BY conversation_id").fetchall())
        for conv in convs:
            got = store.conversations.get(conv.id)
            assert got.id == conv.id and got.title == conv.title
            assert store.messages.count(conversation=conv.id) == counts.get(conv.id, 0)


def listed_after(store: nk.Store, cursor: Optional[str]) -> List[int]:
    out: List[int] = []
    while cursor is not None:
        page = store.conversations.list(limit=13, after=cursor)
        out += [c.id for c in page.items]
        cursor = page.next_cursor
    return out


def wal_pages(path: Path) -> List[int]:
    data = Path(str(path) + "-wal").read_bytes()
    size = struct.unpack(">I", data[8:12])[0]
    pages, offset = [], 32
    while offset + 24 + size <= len(data):
        pages.append(struct.unpack(">I", data[offset:offset + 4])[0])
        offset += 24 + size
    return pages


def written(path: Path, send: "nk.Conversation") -> Set[str]:
    """The b-trees whose pages one send writes to the WAL."""
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    send.send("hello")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        owner = {page: name for name, page in db.execute("SELECT name, pageno FROM dbstat")}
    return {owner.get(page, "?") for page in wal_pages(path)}


def test_a_send_to_a_hot_conversation_writes_no_index_page_of_activity(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with nk.Store.open(path) as store:
        convs = [store.conversations.create(f"c{k}") for k in range(40)]
        cold = written(path, convs[3])  # cold: it moves from the index of activity to the hot ones
        assert {"conversations", "conversations_recent", "conversations_hot"} <= cold, cold
        for conv in convs:
            conv.send("first")
        for conv in (convs[3], convs[17], convs[39]):
            pages = written(path, conv)
            assert "conversations" in pages and "messages" in pages, pages
            assert "conversations_recent" not in pages and "conversations_hot" not in pages, pages


def test_an_older_store_gets_the_hot_conversations_and_lists_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_store.build(path, articles=10, conversations=12, messages=400, through=4)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE conversations SET last_activity_at = last_activity_at + id % 3")  # not in id order
    with nk.Store.open(path) as store:
        assert listed(store, 5) == stored_order(path)
        convs = list(store.conversations)
        convs[7].send("now")
        assert store.conversations.list(limit=1).items[0].id == convs[7].id
        assert listed(store, 5) == stored_order(path)
    with sqlite3.connect(path) as db:
        sql = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'conversations_recent'").fetchone()[0]
        assert sql.endswith("WHERE hot = 0"), sql
        assert db.execute("SELECT name FROM migrations ORDER BY id DESC LIMIT 1").fetchone() == ("0011_hot_conversations",)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
