"""A store of the shape NotesKit wrote before migration 0005 opens in the compact form with every
record, draft, change and search hit intact (``stress/old_store.py`` builds it with the SQL of
migrations 0001-0004 as they shipped)."""
from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import noteskit as nk
from stress import old_store


def ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def all_changes(store: nk.Store) -> List[Tuple[Any, ...]]:
    out: List[Tuple[Any, ...]] = []
    since = 0
    while True:
        page = store.changes(since=since, limit=97)
        if not page:
            return out
        out += [(c.seq, c.entity, c.op, c.id, c.uid, c.revision, ms(c.at)) for c in page]
        since = page[-1].seq


@pytest.mark.parametrize("through", [2, 4], ids=["from-0002", "from-0004"])
def test_an_old_store_opens_compact_with_every_record_draft_change_and_search_hit(tmp_path: Path, through: int) -> None:
    path = tmp_path / "old.db"
    old = old_store.build(path, articles=300, messages=3_000, through=through)
    with nk.Store.open(path) as store:
        assert [(a.id, a.uid, a.title, a.content, ms(a.created_at), ms(a.updated_at), a.revision)
                for a in sorted(store.articles.iter(), key=lambda a: a.id)] == old["articles"]
        assert [(d.id, d.uid, d.article_id, d.base_revision, d.title, d.content, ms(d.created_at), ms(d.updated_at))
                for d in store.articles.drafts()] == old["drafts"]
        assert [(c.id, c.uid, c.title, ms(c.created_at), ms(c.last_activity_at))
                for c in sorted(store.conversations, key=lambda c: c.id)] == old["conversations"]
        messages = [m for c in store.conversations for m in store.messages.history(c.id, limit=1000).items]
        assert len(old["messages"]) > 1000
        for row in old["messages"][::97]:
            m = store.messages.get(row[0])
            assert (m.id, m.uid, m.conversation_id, m.content, int(m.from_me), ms(m.sent_at)) == row
        assert messages  # history pages read the migrated rows
        # The feed: every change as it was, uids of deleted records' creates included.
        assert all_changes(store) == old["changes"]
        # Search: the same hits as a plain substring match over the old rows, newest first.
        for q in ("天气", "walk", "straße", "café 公园"):
            want = [r[0] for r in sorted(old["articles"], key=lambda r: (r[4], r[0]), reverse=True)
                    if q.casefold() in r[2].casefold() or q.casefold() in r[3].casefold()]
            assert [h.article.id for h in store.articles.search_iter(q)] == want, q
            want_m = [r[0] for r in sorted(old["messages"], key=lambda r: (r[5], r[0]), reverse=True)
                      if q.casefold() in r[3].casefold()]
            assert [h.message.id for h in store.messages.search_iter(q)] == want_m, q
        # Ids are never reused: the newest article was deleted before the migration.
        assert store.articles.create(title="after", content="the migration").id == old["max_article_id"] + 1
        draft = store.articles.drafts()[0]
        assert draft.save().uid == old["drafts"][0][1]

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.execute("PRAGMA auto_vacuum").fetchone() == (0,)  # as every new store: no pointer map to keep
    # The old tables' pages were given back by the VACUUM after the migration (the copies had doubled the file).
    assert db.execute("PRAGMA freelist_count").fetchone()[0] * 10 < db.execute("PRAGMA page_count").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    assert "changes" not in tables and "feed" in tables
    for table in ("articles", "drafts", "conversations", "messages"):
        assert db.execute(f"SELECT DISTINCT typeof(uid), length(uid) FROM {table}").fetchall() in ([("blob", 16)], [])
    # O(1) feed rows for the old one-row-per-message imports and the conversation deleted with its messages.
    message_rows = db.execute("SELECT count(*) FROM feed WHERE kind % 3 = 2").fetchone()[0]
    assert message_rows < 20, message_rows
    applied = [r[0] for r in db.execute("SELECT name FROM migrations ORDER BY id")]
    assert applied[applied.index("0005_compact_rows_and_feed") + 1:] == ["0006_message_sender", "0007_drafts_unsaved",
                                                                           "0008_messages_numbered_by_floor",
                                                                           "0009_conversation_message_count",
                                                                           "0010_lazy_sends", "0011_hot_conversations"]  # the later ones after it


def test_a_migrated_store_keeps_working_and_deleting_a_conversation_is_one_feed_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = old_store.build(path, articles=20, messages=500, through=4)
    with nk.Store.open(path) as store:
        conv = next(iter(store.conversations))
        before = store.last_change_seq()
        n = len(store.messages.history(conv.id, limit=1000).items)
        conv.delete()
        changes = store.changes(since=before)
        assert [c.op for c in changes] == ["delete"] * (n + 1)
        assert changes[-1].entity == "conversation" and changes[-1].uid == conv.uid
        assert {c.uid for c in changes[:-1]} == {r[1] for r in old["messages"] if r[2] == conv.id}
    rows = sqlite3.connect(path).execute("SELECT count(*) FROM feed WHERE seq > ?", (before,)).fetchone()[0]
    assert rows == 2  # one for the messages, one for the conversation
