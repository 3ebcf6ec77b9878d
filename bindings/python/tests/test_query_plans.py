"""Every list, history, search, range and feed query of the library seeks an index (or walks one
in order, stopping at its LIMIT): no query plan scans a table or sorts in a temporary b-tree.

The statements are the library's own SQL (Store/ and Search/), asked with EXPLAIN QUERY PLAN on a
store the library made; the README's "Compact store" section shows these plans.
"""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Dict, List

import pytest

import noteskit as nk

ARTICLE = "id, uid, title, content, created_at, updated_at, revision"
MESSAGE = "id, uid, conversation_id, content, from_me, sent_at"
CONVERSATION = "id, uid, title, created_at, last_activity_at"
DRAFT = "id, uid, article_id, base_revision, title, content, created_at, updated_at"
FEED = "seq, last_seq, kind, entity_id, at, revision, entries, uids"

QUERIES = {
    "article by id": f"SELECT {ARTICLE} FROM articles WHERE id = ?",
    "article by uid": f"SELECT {ARTICLE} FROM articles WHERE uid = ?",
    "article list, first page": f"SELECT {ARTICLE} FROM articles ORDER BY created_at DESC, id DESC LIMIT ?",
    "article list, rest of a millisecond": f"SELECT {ARTICLE} FROM articles WHERE created_at = ? AND id < ? ORDER BY id DESC LIMIT ?",
    "article list, older": f"SELECT {ARTICLE} FROM articles WHERE created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?",
    "article search walk": "SELECT id FROM articles WHERE created_at < ? ORDER BY created_at DESC, id DESC",
    "draft by id": f"SELECT {DRAFT} FROM drafts WHERE id = ?",
    "draft by uid": f"SELECT {DRAFT} FROM drafts WHERE uid = ?",
    "drafts": f"SELECT {DRAFT} FROM drafts ORDER BY id",
    "conversation by id": f"SELECT {CONVERSATION} FROM conversations WHERE id = ?",
    "conversation by uid": f"SELECT {CONVERSATION} FROM conversations WHERE uid = ?",
    # The hot conversations (at most 64, sorted) merged with the cold ones' index walk (HotConversations.swift).
    "conversation list, first page": (f"SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 1 UNION ALL"
                                      f" SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 0"
                                      " ORDER BY last_activity_at DESC, activity_seq DESC LIMIT ?"),
    "conversation list, same millisecond": (f"SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 1 AND last_activity_at = ? AND activity_seq < ?"
                                            f" UNION ALL SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 0 AND last_activity_at = ? AND activity_seq < ?"
                                            " ORDER BY activity_seq DESC LIMIT ?"),
    "conversation list, older": (f"SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 1 AND last_activity_at < ?"
                                 f" UNION ALL SELECT {CONVERSATION}, activity_seq FROM conversations WHERE hot = 0 AND last_activity_at < ?"
                                 " ORDER BY last_activity_at DESC, activity_seq DESC LIMIT ?"),
    "message by id": f"SELECT {MESSAGE} FROM messages WHERE id = ?",
    "message by uid": f"SELECT {MESSAGE} FROM messages WHERE uid = ?",
    "history, newest page": f"SELECT {MESSAGE} FROM messages WHERE conversation_id = ? ORDER BY sent_at DESC, id DESC LIMIT ?",
    "history, rest of a millisecond": f"SELECT {MESSAGE} FROM messages WHERE conversation_id = ? AND sent_at = ? AND id < ? ORDER BY id DESC LIMIT ?",
    "history, earlier": f"SELECT {MESSAGE} FROM messages WHERE conversation_id = ? AND sent_at < ? ORDER BY sent_at DESC, id DESC LIMIT ?",
    "conversation in time order (delete, transcript)": "SELECT id, uid, content FROM messages WHERE conversation_id = ? ORDER BY sent_at, id",
    "transcript line already stored": "SELECT count(*) FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? AND from_me = ? AND content = ?",
    "message search walk, all conversations": f"SELECT {MESSAGE} FROM messages ORDER BY sent_at DESC, id DESC",
    "message search walk, rest of a millisecond": "SELECT id FROM messages WHERE sent_at = ? AND id < ? ORDER BY id DESC",
    "message search walk, older": "SELECT id FROM messages WHERE sent_at < ? ORDER BY sent_at DESC, id DESC",
    "message search walk, one conversation": "SELECT id FROM messages WHERE conversation_id = ? AND sent_at < ? ORDER BY sent_at DESC, id DESC",
    # A first page's scan (issue 11): the table in rowid order, checked against the walk's row number.
    "article search, first page in rowid order": f"SELECT {ARTICLE} FROM articles ORDER BY id DESC",
    "article search, the walk's row number": "SELECT id FROM articles ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
    "message search, first page in rowid order": f"SELECT {MESSAGE} FROM messages ORDER BY id DESC",
    "message search, the walk's row number": "SELECT id FROM messages ORDER BY sent_at DESC, id DESC LIMIT ? OFFSET ?",
    # since/until (issue 13): the range is part of the seek, so a week reads that week only.
    "article list in a range": f"SELECT {ARTICLE} FROM articles WHERE created_at >= ? AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?",
    "article list in a range, oldest first, later keys": f"SELECT {ARTICLE} FROM articles WHERE created_at >= ? AND created_at < ? AND created_at > ? ORDER BY created_at ASC, id ASC LIMIT ?",
    "history in a range, earlier": f"SELECT {MESSAGE} FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? AND sent_at < ? ORDER BY sent_at DESC, id DESC LIMIT ?",
    "one week of one conversation (select, delete_range)": f"SELECT {MESSAGE}, sent_at, id FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ? ORDER BY sent_at ASC, id ASC",
    "message search walk in a range": "SELECT id FROM messages WHERE sent_at >= ? AND sent_at < ? ORDER BY sent_at DESC, id DESC",
    "message count in a range": "SELECT count(*) FROM messages WHERE conversation_id = ? AND sent_at >= ? AND sent_at < ?",
    "feed: the row holding since": f"SELECT {FEED} FROM feed WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
    "feed: rows after since": f"SELECT {FEED} FROM feed WHERE seq > ? ORDER BY seq",
    "feed: newest seq": "SELECT last_seq FROM feed WHERE seq = (SELECT max(seq) FROM feed)",
    "feed: the run of sends' start and newest id": ("SELECT s.value, i.value, (SELECT max(id) FROM messages) FROM meta s, meta i"
                                                    " WHERE s.key = 'feed_lazy_seq' AND i.key = 'feed_lazy_id'"),
    "feed: newest seq, the run of sends included": ("SELECT coalesce((SELECT value FROM meta WHERE key = 'feed_lazy_seq') - (SELECT value FROM meta WHERE key = 'feed_lazy_id')"
                         " + (SELECT max(id) FROM messages), (SELECT last_seq FROM feed WHERE seq = (SELECT max(seq) FROM feed)))"),
    "feed: the run of sends from a seq": "SELECT id, sent_at FROM messages WHERE id >= ? ORDER BY id",
    "feed: tombstones after a seq": f"SELECT {FEED} FROM feed INDEXED BY feed_deletes WHERE kind = ? AND kind >= 6 AND seq > ? ORDER BY seq",
    "feed: uid of a change's record": "SELECT uid FROM messages WHERE id = ?",
}

ORDERED_WALK = re.compile(r"^SCAN \w+ USING (COVERING )?INDEX \w+$|^SCAN \w+$")


def plans(path: Path) -> Dict[str, List[str]]:
    db = sqlite3.connect(path)
    out: Dict[str, List[str]] = {}
    for name, sql in QUERIES.items():
        out[name] = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, [None] * sql.count("?"))]
    return out


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plans") / "plans.db"
    with nk.Store.open(path) as store:
        store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(300)])
        store.articles.new_draft()
        conv = store.conversations.create("c")
        store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": True} for i in range(300)])
        store.messages.delete(1)
    return path


def test_every_query_seeks_an_index_and_never_scans_a_table_or_sorts(store_path: Path) -> None:
    for name, lines in plans(store_path).items():
        # The one sort: the hot conversations' walk (at most 64 rows), right after their seek.
        sorts = [k for k, line in enumerate(lines) if "TEMP B-TREE" in line]
        assert all(name.startswith("conversation list") and lines[k - 1].startswith("SEARCH conversations USING INDEX conversations_hot (hot=?)")
                   and lines[k] == "USE TEMP B-TREE FOR ORDER BY" for k in sorts), (name, lines)
        for line in lines:
            if line == "SCAN CONSTANT ROW":
                continue  # a SELECT of scalar subqueries, no table (each subquery's plan is checked)
            if line.startswith("SCAN"):
                # Only ordered walks that stop at a LIMIT (or read a whole list on purpose: drafts
                # by id, a search walk that stops when the page is full, a first page of search read
                # in rowid order, which stops when the page is full) may start at an end.
                assert ORDERED_WALK.match(line), (name, lines)
                assert "ORDER BY" in QUERIES[name], (name, lines)
                assert "USING" in line or name in ("drafts", "article search, first page in rowid order",
                                                    "message search, first page in rowid order"), (name, lines)


def test_the_indexes_are_exactly_the_ones_the_plans_use(store_path: Path) -> None:
    db = sqlite3.connect(store_path)
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL")}
    assert indexes == {"articles_newest", "conversations_recent", "conversations_hot", "messages_history", "messages_newest", "feed_deletes"}
    used = {m for lines in plans(store_path).values() for line in lines for m in re.findall(r"INDEX (\w+)", line)}
    assert indexes <= used | {"sqlite_autoindex"}, indexes - used
    # No index names the rowid again: SQLite ends every entry with it.
    for name, sql in db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"):
        assert not re.search(r"\bid\)", sql), sql


def test_a_range_is_a_seek_on_both_bounds(store_path: Path) -> None:
    for name, lines in plans(store_path).items():
        if "range" in name or "week" in name:
            key = "created_at" if "article" in name else "sent_at"
            assert any(line.startswith("SEARCH") and f"{key}>? AND {key}<?" in line for line in lines), (name, lines)


def test_print_plans(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines: List[str] = [f"{name}: {' / '.join(plan)}" for name, plan in plans(store_path).items()]
    print("\n".join(lines))
    assert len(lines) == len(QUERIES)
