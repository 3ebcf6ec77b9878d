"""A store on PostgreSQL under attack and outage: a second role going after the first role's records
through NotesKit and through raw SQL on its own connection, and the server stopped in the middle of
an import and restarted.

The walls run on the suite's throwaway server (``pg_cluster``, a fresh database per test); the
outages on a throwaway server of their own (``restartable``), which they stop and start.
"""
from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any, Iterator

import pytest

import noteskit as nk


def new_role() -> str:
    """A role name no other test uses (roles belong to the whole server)."""
    return "u_" + secrets.token_hex(5)


def database_of(uri: str) -> str:
    return uri.rsplit("/", 1)[1]


def snapshot(store: nk.Store) -> dict:
    """Everything a role's store holds, as plain values."""
    return {
        "articles": sorted((a.id, a.uid, a.title, a.content, a.revision) for a in store.articles.iter()),
        "drafts": sorted((d.id, d.title, d.content) for d in store.articles.drafts()),
        "conversations": sorted((c.id, c.uid, c.title) for c in store.conversations),
        "messages": sorted((m.id, m.uid, m.conversation_id, m.content) for m in store.messages.iter()),
        "changes": [(c.seq, c.op, c.id) for c in store.changes(since=0)],
    }


@pytest.fixture
def two_users(pg_cluster: Any, pg_database: str) -> Iterator[tuple]:
    """Alice's and Bob's URIs on a new store; Alice has an article (and an unsaved draft of it), a
    conversation with two messages."""
    alice, bob = new_role(), new_role()
    db = database_of(pg_database)
    with nk.Store.open(pg_database) as admin:
        admin.create_user(alice, password="alice-pw")
        admin.create_user(bob, password="bob-pw")
    alice_uri, bob_uri = pg_cluster.uri(alice, "alice-pw", db), pg_cluster.uri(bob, "bob-pw", db)
    with nk.Store.open(alice_uri) as store:
        article = store.articles.create(title="Alice's diary", content="my secret 秘密 plan")
        draft = store.articles.edit(article.id)
        draft.content = "an unsaved secret"
        chat = store.conversations.create("Alice and Carol")
        sent = chat.send("meet me at noon, secret place")
        chat.receive("ok 好的")
        yield alice_uri, bob_uri, alice, bob, article, chat, sent, snapshot(store)


def test_a_second_role_reaches_none_of_the_first_roles_records_through_noteskit(two_users: Any, tmp_path: Path) -> None:
    alice_uri, bob_uri, _, _, article, chat, sent, before = two_users
    with nk.Store.open(bob_uri) as bob:
        # Bob sees nothing of Alice's: not in lists, counts, searches, selections, the feed or exports.
        assert bob.articles.count() == 0 and bob.conversations.count() == 0 and bob.messages.count() == 0
        assert list(bob.articles.list()) == [] and list(bob.conversations) == [] and bob.articles.drafts() == []
        assert list(bob.articles.search("secret")) == [] and list(bob.messages.search("secret")) == []
        assert list(bob.search("secret")) == [] and list(bob.search("秘")) == []
        assert bob.articles.select().to_arrow().num_rows == 0 and bob.messages.select().to_arrow().num_rows == 0
        assert bob.conversations.find("Alice and Carol") == [] and bob.conversations.stats().to_arrow().num_rows == 0
        assert bob.changes(since=0) == []
        report = bob.export(tmp_path / "bob.jsonl")
        assert (tmp_path / "bob.jsonl").read_text() == "" or report.articles == 0
        # Nor can he read, change or delete any of it by id: to him it does not exist.
        for attempt in (lambda: bob.articles.get(article.id),
                        lambda: bob.articles.get_many([article.id]),
                        lambda: bob.articles.update(article.id, content="bob was here"),
                        lambda: bob.articles.update_many([{"id": article.id, "content": "bob", "expected_revision": 1}]),
                        lambda: bob.articles.edit(article.id),
                        lambda: bob.articles.delete(article.id),
                        lambda: bob.articles.delete_many([article.id]),
                        lambda: bob.conversations.get(chat.id),
                        lambda: bob.conversations.rename(chat.id, "bob's now"),
                        lambda: bob.conversations.delete(chat.id),
                        lambda: bob.messages.send(chat.id, "planted by bob"),
                        lambda: bob.messages.receive(chat.id, "planted by bob"),
                        lambda: bob.messages.insert_many(chat.id, [{"content": "planted", "from_me": True}]),
                        lambda: bob.messages.history(chat.id),
                        lambda: bob.messages.get(sent.id),
                        lambda: bob.messages.delete(sent.id),
                        lambda: bob.messages.delete_many([sent.id]),
                        lambda: bob.messages.delete_range(chat.id)):
            with pytest.raises(nk.NotFoundError):
                attempt()
        # His own records are his, and numbered after Alice's changes without showing them.
        mine = bob.articles.create(title="Bob's", content="secret of bob")
        assert [a.id for a in bob.articles.iter()] == [mine.id]
        assert [c.id for c in bob.changes(since=0)] == [mine.id]
    with nk.Store.open(alice_uri) as alice:
        assert snapshot(alice) == before
        assert [h.article.id for h in alice.articles.search("secret")] == [article.id]


def test_a_second_role_reaches_none_of_the_first_roles_rows_through_raw_sql(pg_cluster: Any, pg_database: str,
                                                                             two_users: Any) -> None:
    alice_uri, _, alice, bob, article, chat, _, before = two_users
    db = database_of(pg_database)

    def as_bob(sql: str) -> str:
        return str(pg_cluster.psql(sql, database=db, user=bob, password="bob-pw")).strip()

    # Every table NotesKit wrote Alice's rows into (records, drafts, feed, search index, settings).
    for table in ("articles", "drafts", "conversations", "messages", "feed", "article_grams", "article_blocks",
                  "message_grams", "message_blocks", "search_pending"):
        assert as_bob(f"SELECT count(*) FROM noteskit.{table}") == "0", table
        assert as_bob(f"UPDATE noteskit.{table} SET owner = current_user RETURNING 1") == "", table
        assert as_bob(f"DELETE FROM noteskit.{table} RETURNING 1") == "", table
    assert as_bob(f"SELECT count(*) FROM noteskit.meta WHERE owner = '{alice}'") == "0"
    assert as_bob(f"UPDATE noteskit.articles SET content = 'bob' WHERE id = {article.id} RETURNING id") == ""
    with pytest.raises(RuntimeError, match="permission denied|must be owner"):
        as_bob("TRUNCATE noteskit.articles CASCADE")
    # The walls cannot be switched off or walked around by a user role.
    with pytest.raises(RuntimeError, match="row-level security|permission denied"):
        as_bob("SET row_security = off; SELECT count(*) FROM noteskit.articles")
    with pytest.raises(RuntimeError, match="permission denied"):
        as_bob(f"SET ROLE {alice}")
    with pytest.raises(RuntimeError, match="must be owner|permission denied"):
        as_bob("ALTER TABLE noteskit.articles DISABLE ROW LEVEL SECURITY")
    with pytest.raises(RuntimeError, match="must be owner|permission denied"):
        as_bob("DROP POLICY own_rows ON noteskit.articles")
    with pytest.raises(RuntimeError, match="row-level security"):
        as_bob(f"INSERT INTO noteskit.messages(uid, conversation_id, content, from_me, sent_at) "
               f"VALUES (gen_random_uuid(), {chat.id}, 'planted', 1, 0)")
    with pytest.raises(RuntimeError, match="permission denied"):
        as_bob("UPDATE noteskit.feed_head SET seq = 0")
    with nk.Store.open(alice_uri) as store:
        assert snapshot(store) == before


def test_opening_as_a_user_fails_clearly(pg_cluster: Any, pg_database: str) -> None:
    db = database_of(pg_database)
    name = new_role()
    with nk.Store.open(pg_database) as admin:
        admin.create_user(name, password="right")
    with pytest.raises(nk.AuthenticationError) as caught:
        nk.Store.open(pg_cluster.uri(name, "wrong", db))
    assert caught.value.code == "wrong_password" and "wrong" not in caught.value.message.replace("wrong_password", "")
    with pytest.raises(nk.AuthenticationError):
        nk.Store.open(pg_cluster.uri(new_role(), "whatever", db))  # no such role
    # A user cannot create a store where there is none: only an administrator can.
    pg_cluster.psql("CREATE DATABASE empty_for_users OWNER noteskit_admin")
    try:
        pg_cluster.psql(f"GRANT CONNECT ON DATABASE empty_for_users TO {name}")
        with pytest.raises(nk.SchemaError) as refused:
            nk.Store.open(pg_cluster.uri(name, "right", "empty_for_users"))
        assert refused.value.code == "store_missing"
    finally:
        pg_cluster.psql("DROP DATABASE empty_for_users WITH (FORCE)")


def test_a_store_with_a_newer_schema_is_refused_to_every_role_and_left_alone(pg_cluster: Any, pg_database: str) -> None:
    db = database_of(pg_database)
    name = new_role()
    with nk.Store.open(pg_database) as admin:
        admin.create_user(name, password="pw")
        admin.articles.create(title="kept", content="as it was")
    applied = int(pg_cluster.psql("SELECT count(*) FROM noteskit.migrations", database=db).strip())
    pg_cluster.psql("INSERT INTO noteskit.migrations VALUES (999, '0999_from_the_future', 0)", database=db,
                    user="noteskit_admin")
    for uri in (pg_database, pg_cluster.uri(name, "pw", db)):
        for read_only in (False, True):
            with pytest.raises(nk.SchemaError) as caught:
                nk.Store.open(uri, read_only=read_only)
            assert caught.value.code == "schema_newer" and "0999_from_the_future" in caught.value.message
    assert int(pg_cluster.psql("SELECT count(*) FROM noteskit.migrations", database=db).strip()) == applied + 1
    assert pg_cluster.psql("SET row_security = off; SELECT content FROM noteskit.articles", database=db).strip() == "as it was"


# MARK: - Outages


@pytest.fixture(scope="module")
def restartable() -> Iterator[Any]:
    """A throwaway server of this module's own, to stop and start."""
    from examples.throwaway_postgres import ThrowawayCluster

    with ThrowawayCluster() as cluster:
        yield cluster


@pytest.fixture
def outage_store(restartable: Any) -> Iterator[str]:
    """The URI of a new empty store on the restartable server."""
    with restartable.new_database("o_") as uri:
        yield uri


def articles_file(path: Path, n: int) -> Path:
    """A NotesKit JSON Lines export of `n` articles, written by a SQLite store."""
    with nk.Store.memory() as source:
        source.articles.create_many([{"title": f"imported {i}", "content": f"body {i} 内容"} for i in range(n)])
        source.export(path)
    return path


def test_a_server_stopped_in_the_middle_of_an_import_leaves_none_of_it_and_the_store_reconnects(
        restartable: Any, outage_store: str, tmp_path: Path) -> None:
    source = articles_file(tmp_path / "articles.jsonl", 3_000)
    with nk.Store.open(outage_store) as store:
        kept = store.articles.create(title="before", content="kept")
        seen: list = []

        def stop_the_server_halfway(done: int, total: int) -> bool:
            seen.append(done)
            if len(seen) == 3:  # 1 024 records sent to the server in the import's transaction
                restartable.halt()
            return True

        with pytest.raises(nk.StorageError) as caught:
            store.import_(source, progress=stop_the_server_halfway)
        assert caught.value.code in {"connection_lost", "server_unreachable"}, caught.value
        assert len(seen) >= 3
        # While the server is down, a read says so (after trying to reconnect).
        with pytest.raises(nk.UnreachableError):
            store.articles.count()
        with pytest.raises(nk.UnreachableError):
            store.articles.create(title="while down", content="x")
        restartable.resume()
        # Reconnected: none of the import, nothing of the failed write, the earlier record intact.
        assert store.articles.count() == 1
        assert store.articles.get(kept.id).content == "kept"
        assert [c.id for c in store.changes(since=0)] == [kept.id]
        assert list(store.articles.search("imported")) == []
        # And the import runs again, whole.
        report = store.import_(source)
        assert report.created == 3_000 and store.articles.count() == 3_001
        assert len(list(store.articles.search("imported 2999"))) == 1


def test_after_a_restart_reads_are_retried_and_the_next_write_goes_through(restartable: Any, outage_store: str) -> None:
    with nk.Store.open(outage_store) as store:
        first = store.articles.create(title="first", content="one")
        chat = store.conversations.create("chat")
        chat.send("hello")
        restartable.restart()
        # The connection broke; the read notices, reconnects and runs again.
        assert store.articles.get(first.id).title == "first"
        assert [m.content for m in store.messages.history(chat.id)] == ["hello"]
        restartable.restart()
        # A write that begins on a broken connection begins again on a new one: nothing had run.
        second = store.articles.create(title="second", content="two")
        restartable.restart()
        chat.send("after the restart")
        assert store.articles.count() == 2 and store.articles.get(second.id).content == "two"
        assert [m.content for m in store.messages.history(chat.id)] == ["hello", "after the restart"]
        assert [c.op for c in store.changes(since=0)].count("create") == 5


def test_importing_another_roles_records_is_a_conflict_that_writes_nothing(two_users: Any, tmp_path: Path) -> None:
    alice_uri, bob_uri, _, _, _, _, _, before = two_users
    with nk.Store.open(alice_uri) as alice:
        alice.export(tmp_path / "alice.jsonl")
    with nk.Store.open(bob_uri) as bob:
        mine = bob.articles.create(title="Bob's", content="kept")
        # A uid is unique in the whole store: Bob cannot take over (or learn more of) Alice's records.
        with pytest.raises(nk.ConflictError) as caught:
            bob.import_(tmp_path / "alice.jsonl", on_conflict="replace")
        assert caught.value.code == "uid_taken" and "another user" in caught.value.message
        assert [(a.id, a.content) for a in bob.articles.iter()] == [(mine.id, "kept")]
        assert bob.conversations.count() == 0 and bob.messages.count() == 0
    with nk.Store.open(alice_uri) as alice:
        assert snapshot(alice) == before
