"""A store of the shape NotesKit wrote before migration 0005 (uids as text, one `changes` row per
change), built with Python's sqlite3 from the SQL of migrations 0001-0004 as they shipped.

Used by the migration test (``tests/test_compact_migration.py``) and the kill -9 trials of the
migration (``stress/kill9.py``). ``build`` returns what the store holds, as the API must show it
after the migration.
"""
from __future__ import annotations

import random
import sqlite3
import uuid
from pathlib import Path
from typing import Any, Dict, List

APPLICATION_ID = 0x4E4B5354

MIGRATION_0001 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE articles(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 1);
CREATE INDEX articles_newest ON articles(created_at, id);
CREATE TABLE drafts(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, article_id INTEGER,
    base_revision INTEGER, title TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL);
CREATE TABLE changes(seq INTEGER PRIMARY KEY AUTOINCREMENT, entity TEXT NOT NULL, op TEXT NOT NULL,
    entity_id INTEGER NOT NULL, uid TEXT NOT NULL, revision INTEGER, at INTEGER NOT NULL);
"""
MIGRATION_0002 = """
CREATE TABLE conversations(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    created_at INTEGER NOT NULL, last_activity_at INTEGER NOT NULL, activity_seq INTEGER NOT NULL);
CREATE INDEX conversations_recent ON conversations(last_activity_at, activity_seq);
CREATE TABLE messages(id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE, content TEXT NOT NULL,
    from_me INTEGER NOT NULL, sent_at INTEGER NOT NULL);
CREATE INDEX messages_history ON messages(conversation_id, sent_at, id);
"""
# 0003's index is built by its `then` step over the rows; an empty index with every record
# pending (0004: ids above the indexed-through id) is a store of today's shape whose writes never
# reached the fold threshold.
MIGRATION_0003 = """
CREATE TABLE article_grams(gram INTEGER PRIMARY KEY, df INTEGER NOT NULL, tail BLOB NOT NULL);
CREATE TABLE article_blocks(gram INTEGER NOT NULL, first INTEGER NOT NULL, ids BLOB NOT NULL,
    PRIMARY KEY (gram, first)) WITHOUT ROWID;
CREATE TABLE message_grams(gram INTEGER PRIMARY KEY, df INTEGER NOT NULL, tail BLOB NOT NULL);
CREATE TABLE message_blocks(gram INTEGER NOT NULL, first INTEGER NOT NULL, ids BLOB NOT NULL,
    PRIMARY KEY (gram, first)) WITHOUT ROWID;
CREATE INDEX messages_newest ON messages(sent_at, id);
"""
MIGRATION_0004 = """
CREATE TABLE search_pending(kind INTEGER NOT NULL, id INTEGER NOT NULL, grams BLOB NOT NULL,
    PRIMARY KEY (kind, id)) WITHOUT ROWID;
INSERT OR REPLACE INTO meta(key, value) VALUES ('article_search_through', 0), ('message_search_through', 0);
"""
MIGRATIONS = [("0001_articles_drafts_changes", MIGRATION_0001), ("0002_conversations_messages", MIGRATION_0002),
              ("0003_search_index", MIGRATION_0003), ("0004_search_pending", MIGRATION_0004)]

WORDS = "今天 天气 真好 公园 散步 下雨 明天 朋友 weather park walk note rain sun Straße café".split()


def build(path: Path, articles: int = 200, conversations: int = 5, messages: int = 2_000, through: int = 4,
          seed: int = 1) -> Dict[str, Any]:
    """Writes an old-shape store at ``path`` (migrations 0001..``through`` applied) and returns its
    records: ``articles``, ``drafts``, ``conversations``, ``messages`` (tuples as the API shows
    them, times in ms) and ``changes`` (seq, entity, op, id, uid, revision, at)."""
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE migrations(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at INTEGER NOT NULL)")
    for name, sql in MIGRATIONS[:through]:
        db.executescript(sql)
        db.execute("INSERT INTO migrations(name, applied_at) VALUES (?, 0)", (name,))
    t = 1_764_000_000_000

    def change(entity: str, op: str, id: int, uid: str, revision: Any, at: int = 0) -> int:
        cur = db.execute("INSERT INTO changes(entity, op, entity_id, uid, revision, at) VALUES (?, ?, ?, ?, ?, ?)",
                         (entity, op, id, uid, revision, at or t))
        return int(cur.lastrowid or 0)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))

    for n in range(articles):
        t += rng.randint(0, 3)
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        cur = db.execute("INSERT INTO articles(uid, title, content, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, 1)",
                         (uid, f"note {n} {text(1, 3)}", text(5, 60), t, t))
        change("article", "create", int(cur.lastrowid or 0), uid, 1)
    ids = [r[0] for r in db.execute("SELECT id FROM articles")]
    for id in rng.sample(ids, len(ids) // 4):  # edits
        t += 1
        uid, revision = db.execute("SELECT uid, revision FROM articles WHERE id = ?", (id,)).fetchone()
        db.execute("UPDATE articles SET content = ?, updated_at = ?, revision = ? WHERE id = ?", (text(5, 40), t, revision + 1, id))
        change("article", "update", id, uid, revision + 1)
    for id in [max(ids)] + rng.sample(ids[:-1], len(ids) // 10):  # deletes, the newest article among them
        t += 1
        uid, revision = db.execute("SELECT uid, revision FROM articles WHERE id = ?", (id,)).fetchone()
        db.execute("DELETE FROM articles WHERE id = ?", (id,))
        change("article", "delete", id, uid, revision)
    left = [r[0] for r in db.execute("SELECT id, revision FROM articles")]
    for n in range(3):  # drafts: a new article's, and edits of stored ones
        article = left[n] if n else None
        base = db.execute("SELECT revision FROM articles WHERE id = ?", (article,)).fetchone()[0] if article else None
        db.execute("INSERT INTO drafts(uid, article_id, base_revision, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (str(uuid.UUID(int=rng.getrandbits(128), version=4)), article, base, f"draft {n}", text(2, 9), t, t))
    if through >= 2:
        conv_ids = []
        for n in range(conversations):
            t += 1
            uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            cur = db.execute("INSERT INTO conversations(uid, title, created_at, last_activity_at, activity_seq) VALUES (?, ?, ?, ?, 0)",
                             (uid, f"chat {n}", t, t))
            cid = int(cur.lastrowid or 0)
            seq = change("conversation", "create", cid, uid, None)
            db.execute("UPDATE conversations SET activity_seq = ? WHERE id = ?", (seq, cid))
            conv_ids.append(cid)
        imported_at = t + 10 ** 9  # the import's one instant (its messages were sent before it)
        for n in range(messages):  # bulk imports: one change row per message, as insert_many wrote them
            cid = conv_ids[n * conversations // max(messages, 1)]
            t += rng.randint(0, 1)
            uid = str(uuid.UUID(int=(t << 80) | (0x7 << 76) | rng.getrandbits(62) | (2 << 62)))
            cur = db.execute("INSERT INTO messages(uid, conversation_id, content, from_me, sent_at) VALUES (?, ?, ?, ?, ?)",
                             (uid, cid, text(1, 12), n % 2, t))
            seq = change("message", "create", int(cur.lastrowid or 0), uid, None, imported_at)
            db.execute("UPDATE conversations SET last_activity_at = ?, activity_seq = ? WHERE id = ?", (t, seq, cid))
        gone = conv_ids[-1]  # a conversation deleted with its messages: one delete each, then its own
        t = imported_at + 1
        for mid, uid in db.execute("SELECT id, uid FROM messages WHERE conversation_id = ? ORDER BY sent_at, id", (gone,)).fetchall():
            change("message", "delete", mid, uid, None)
        uid = db.execute("SELECT uid FROM conversations WHERE id = ?", (gone,)).fetchone()[0]
        db.execute("DELETE FROM messages WHERE conversation_id = ?", (gone,))
        db.execute("DELETE FROM conversations WHERE id = ?", (gone,))
        change("conversation", "delete", gone, uid, None)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {through}")
    db.commit()
    expected = {
        "articles": db.execute("SELECT id, uid, title, content, created_at, updated_at, revision FROM articles ORDER BY id").fetchall(),
        "drafts": db.execute("SELECT id, uid, article_id, base_revision, title, content, created_at, updated_at FROM drafts ORDER BY id").fetchall(),
        "conversations": db.execute("SELECT id, uid, title, created_at, last_activity_at FROM conversations ORDER BY id").fetchall() if through >= 2 else [],
        "messages": db.execute("SELECT id, uid, conversation_id, content, from_me, sent_at FROM messages ORDER BY id").fetchall() if through >= 2 else [],
        "changes": db.execute("SELECT seq, entity, op, entity_id, uid, revision, at FROM changes ORDER BY seq").fetchall(),
        "max_article_id": max(ids),
    }
    db.close()
    return expected
