"""Search over records the index has not taken in yet (issue 3: a send must stay cheap).

A write leaves its records pending; a search that checks 512 of them folds the pending set into
the index after its page, and a write once it holds 4 096 messages (512 articles). Searches see pending and indexed records alike, in one order, under every plan.
"""
from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk

import search_oracle as oracle

BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)
PLANS = ("auto", "scan", "index", "handover")


def pending(path):
    """(records above the indexed-through id, changed or removed indexed records) of articles."""
    with sqlite3.connect(path) as db:
        through = db.execute("SELECT value FROM meta WHERE key = 'article_search_through'").fetchone()[0]
        newer = db.execute("SELECT count(*) FROM articles WHERE id > ?", (through,)).fetchone()[0]
        # Changed articles are listed under kind 0, removed ones under kind 2.
        changed = db.execute("SELECT count(*) FROM search_pending WHERE kind IN (0, 2)").fetchone()[0]
        return newer, changed


def index_rows(path):
    with sqlite3.connect(path) as db:
        return [db.execute(f"SELECT count(*), coalesce(sum(df), 0) FROM {t}_grams").fetchone() for t in ("article", "message")]


def every_page(search, limit):
    got, after = [], None
    while True:
        page = search(limit=limit, after=after)
        got += page.items
        if page.next_cursor is None:
            return got
        after = page.next_cursor


def check_all_plans(store, monkeypatch, queries, limit=7):
    stored = list(store.articles.iter())
    for q in queries:
        expected = oracle.search(stored, q, "any", False)
        for plan in PLANS:
            monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
            got = every_page(lambda **kw: store.articles.search(q, **kw), limit)
            assert [(h.article.id, h.spans) for h in got] == expected, (plan, q)
    monkeypatch.delenv("NOTESKIT_SEARCH_PLAN")


def test_new_articles_are_found_before_the_index_takes_them_in_and_pages_mix_them_in_time_order(db_path, monkeypatch):
    with nk.Store.open(db_path) as store:
        store.articles.create_many([{"title": f"旧 {i}", "content": f"shared words {i} 麒麟" if i % 3 else f"plain {i}",
                                     "created_at": BASE + timedelta(minutes=2 * i)} for i in range(600)])
        assert pending(db_path) == (0, 0)
        # Written one by one, with times between the indexed ones': they stay pending.
        for i in range(40):
            store.articles.create_many([{"title": f"新 {i}", "content": f"shared words new {i} 麒麟",
                                         "created_at": BASE + timedelta(minutes=30 * i + 1)}])
        assert pending(db_path) == (40, 0)
        check_all_plans(store, monkeypatch, ["shared", "麒麟", "new", "新", "new 3", "旧 5", "absent", "麟"])


def test_changed_and_deleted_articles_are_right_before_and_after_the_fold(db_path, monkeypatch):
    with nk.Store.open(db_path) as store:
        made = store.articles.create_many([{"title": f"t{i}", "content": f"filler {i}"} for i in range(520)])
        indexed = made[0]
        store.articles.update(indexed.id, content="gamma ray")
        removed = store.articles.create("doomed", "epsilon")
        new = store.articles.create("fresh", "alpha")
        store.articles.update(new.id, content="beta")  # pending, then changed before any fold
        store.articles.update(indexed.id, content="delta wave")  # changed twice: the index still has "filler 0"
        store.articles.delete(removed.id)
        store.articles.delete(made[1].id)  # indexed, then removed
        assert pending(db_path) == (1, 2)  # "fresh" is new; "doomed" was new and is gone
        for q, found in [("alpha", []), ("beta", [new.id]), ("gamma", []), ("delta", [indexed.id]),
                         ("filler 0", []), ("filler 1 ", []), ("t1", [made[i].id for i in range(10, 20)] + [made[i].id for i in range(100, 200)]),
                         ("epsilon", []), ("doomed", [])]:
            for plan in PLANS:
                monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
                got = [h.article.id for h in store.articles.search_iter(q, batch_size=3)]
                assert sorted(got) == sorted(found), (plan, q)
        monkeypatch.delenv("NOTESKIT_SEARCH_PLAN")
        check_all_plans(store, monkeypatch, ["beta", "delta", "filler", "t1", "e"])
        # Enough further writes fold everything in: the index then holds what a rebuild holds.
        store.articles.create_many([{"title": "more", "content": f"x{i}"} for i in range(510)])
        assert pending(db_path) == (0, 0)
        check_all_plans(store, monkeypatch, ["beta", "delta", "gamma", "filler 1", "epsilon", "more"])
        folded = index_rows(db_path)
        store.reindex()
        assert index_rows(db_path) == folded


def through(path, kind="message"):
    """The highest id the search index of `kind` has taken in."""
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT value FROM meta WHERE key = '{kind}_search_through'").fetchone()[0]


def test_a_search_that_checks_512_pending_messages_folds_them_in_and_sends_do_not(db_path):
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        for i in range(511):
            conv.send(f"message {i} 天气")
        assert through(db_path) == 0
        # Searches that check 511 pending messages leave them pending.
        assert [h.message.id for h in store.messages.search_iter("天气 1", batch_size=50)] == \
            [h.message.id for h in store.messages.search_iter("天气 1", conversation=conv.id, batch_size=50)]
        before = [h.message.id for h in store.messages.search_iter("e 5", batch_size=13)]
        assert through(db_path) == 0
        last = conv.send("number 512")
        assert through(db_path) == 0  # a send leaves 512 pending: the next search folds them
        assert [h.message.id for h in store.messages.search("number 512").items] == [last.id]
        assert through(db_path) == last.id
        assert [h.message.id for h in store.messages.search_iter("e 5", batch_size=13)] == before
        assert [h.message.id for h in store.messages.search("number 512").items] == [last.id]


def test_writes_with_no_search_between_fold_at_eight_times_the_threshold_for_messages_once_for_articles(db_path, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_FOLD", "4")  # searches fold 4 pending records, writes 32 messages or 4 articles
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("c")
        for i in range(31):
            conv.send(f"note {i}")
        assert through(db_path) == 0
        last = conv.send("note 31")
        assert through(db_path) == last.id
        articles = [store.articles.create(f"t{i}", "text") for i in range(3)]
        assert through(db_path, "article") == 0
        articles.append(store.articles.create("t3", "text"))
        assert through(db_path, "article") == articles[-1].id
        more = [conv.send(f"more {i}") for i in range(6)]
        # (On a store this small a search's first short scan reads every row and answers without
        # the pending set; planned on the index, it checks the pending set and folds it in.)
        monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", "index")
        stored = list(store.messages.select())
        expected = oracle.search_messages(stored, "more", None, False)
        # A read-only handle finds the pending messages and folds nothing.
        with nk.Store.open(db_path, read_only=True) as reader:
            assert [(h.message.id, h.spans) for h in reader.messages.search_iter("more")] == expected
        assert through(db_path) == last.id
        assert [(h.message.id, h.spans) for h in store.messages.search_iter("more")] == expected
        assert through(db_path) == more[-1].id
        assert [(h.message.id, h.spans) for h in store.messages.search_iter("more")] == expected


def test_messages_sent_since_the_fold_are_found_with_indexed_ones_in_every_scope(monkeypatch):
    with nk.Store.memory() as store:
        a, b = store.conversations.create("a"), store.conversations.create("b")
        store.messages.insert_many(a.id, [{"content": f"hello {i}", "from_me": True,
                                           "sent_at": BASE + timedelta(minutes=i)} for i in range(600)])
        sent = [b.send("hello there"), a.send("hello again"), b.receive("not this one")]
        store.messages.delete(store.messages.history(a.id, limit=1000)[5].id)  # an indexed one
        stored = [m for c in (a, b) for m in store.messages.history(c.id, limit=1000)]
        for plan in PLANS:
            monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
            for conversation in (None, a.id, b.id):
                for q in ("hello", "hello 5", "again", "there", "this"):
                    expected = oracle.search_messages(stored, q, conversation, False)
                    got = [(h.message.id, h.spans) for h in
                           store.messages.search_iter(q, conversation=conversation, batch_size=9)]
                    assert got == expected, (plan, q, conversation)
        assert sent[0].id in [h.message.id for h in store.messages.search("there").items]


def test_a_store_from_before_the_pending_set_keeps_its_index_when_opened(db_path, monkeypatch):
    monkeypatch.setenv("NOTESKIT_SEARCH_FOLD", "0")  # every write indexes its records, as before 0004
    with nk.Store.open(db_path) as store:
        a = store.articles.create(title="t", content="迁移之前的文章")
        m = store.conversations.create("c").send("迁移之前的消息")
    monkeypatch.delenv("NOTESKIT_SEARCH_FOLD")
    with sqlite3.connect(db_path) as db:  # make it look like a store written before migration 0004
        db.execute("DROP TABLE search_pending")
        db.execute("DELETE FROM meta WHERE key LIKE '%_search_through'")
        db.execute("DELETE FROM migrations WHERE name = '0004_search_pending'")
    with nk.Store.open(db_path) as store:
        assert pending(db_path) == (0, 0)
        assert [h.article.id for h in store.articles.search("之前")] == [a.id]
        b = store.articles.create(title="t2", content="之后的文章")
        store.articles.update(a.id, content="改过的文章")
        assert pending(db_path) == (1, 1)
        assert [h.article.id for h in store.articles.search("文章")] == [b.id, a.id]
        assert [h.article.id for h in store.articles.search("之前")] == []
        assert [h.message.id for h in store.messages.search("之前")] == [m.id]


def test_a_bulk_write_larger_than_a_fold_chunk_is_indexed_as_it_goes_and_finds_everything(tmp_path):
    # About 20 MB of text in one transaction, past the 16 MiB fold chunk: folded before the commit.
    filler = "今天天气真好 the quick brown fox " * 100
    records = [{"content": f"{filler} marker{i:05d}", "from_me": i % 2 == 0} for i in range(6_000)]
    with nk.Store.open(tmp_path / "bulk.db") as store:
        conv = store.conversations.create("bulk")
        store.messages.insert_many(conv.id, records)
        for i in (0, 2_999, 5_999):
            [hit] = store.messages.search(f"marker{i:05d}").items
            assert hit.message.content.endswith(f"marker{i:05d}")
        assert len(store.messages.search("marker0").items) == 20
        counts = sqlite3.connect(tmp_path / "bulk.db").execute(
            "SELECT count(*) FROM search_pending").fetchone()[0]
        assert counts == 0


def removed_pending(path):
    """(rows of removed messages waiting in the pending set, their count in meta)."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT count(*) FROM search_pending WHERE kind = 3").fetchone()[0]
        counted = db.execute("SELECT value FROM meta WHERE key = 'message_search_removed'").fetchone()
        return rows, counted[0] if counted else 0


def test_a_bulk_delete_leaves_the_index_by_the_batch_and_every_search_stays_exact(db_path, monkeypatch):
    with nk.Store.open(db_path) as store:
        a, b = store.conversations.create("a"), store.conversations.create("b")
        for conv in (a, b):
            store.messages.insert_many(conv.id, [{"content": f"word {i} 天气{i % 7} {'rare' if i % 97 == 0 else 'x'}",
                                                  "from_me": i % 2 == 0, "sent_at": BASE + timedelta(minutes=i)}
                                                 for i in range(3000)])
        ids = [m.id for c in (a, b) for m in store.messages.select(conversation=c.id)]
        assert len(ids) == 6000
        doomed = ids[::10]  # 600: more than a fold's few, less than an eighth of the index
        store.messages.delete_many(doomed)
        assert removed_pending(db_path) == (600, 600)
        folded = index_rows(db_path)
        stored = [m for m in store.messages.select()]

        def check():
            for plan in PLANS:
                monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
                for conversation in (None, a.id):
                    for q in ("rare", "天气3", "word 12", "气", "x"):
                        expected = oracle.search_messages(stored, q, conversation, False)
                        got = [(h.message.id, h.spans) for h in
                               store.messages.search_iter(q, conversation=conversation, batch_size=200)]
                        assert got == expected, (plan, q, conversation)
            monkeypatch.delenv("NOTESKIT_SEARCH_PLAN")

        check()
        # Sends neither fold the removed records out nor count them.
        b.send("a rare one")
        assert removed_pending(db_path) == (600, 600) and index_rows(db_path) == folded
        # Once the removed records are an eighth of the index, the write that makes them so takes
        # them all out: the index then holds what a rebuild holds.
        store.messages.delete_many(ids[5::10][:200])
        assert removed_pending(db_path) == (0, 0)
        stored = [m for m in store.messages.select()]
        check()
        maintained = index_rows(db_path)
        store.reindex()
        assert index_rows(db_path) == maintained
