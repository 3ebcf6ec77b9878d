"""A store on PostgreSQL: opening it, its errors, its users and their walls (row-level security).

Runs on the throwaway server the suite starts (``pg_cluster`` in conftest.py); each test gets a
fresh database (``pg_database``: the administrator's URI of it).
"""
from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import noteskit as nk

SCRIPT = Path(sys.executable).parent / "noteskit"


def new_role() -> str:
    """A role name no other test uses (roles belong to the whole server)."""
    return "u_" + secrets.token_hex(5)


def database_of(uri: str) -> str:
    return uri.rsplit("/", 1)[1]


def test_opening_an_empty_database_creates_the_store_owned_by_the_administrator(pg_cluster: Any, pg_database: str) -> None:
    with nk.Store.open(pg_database) as store:
        assert "***" in repr(store) and pg_cluster.admin_password not in repr(store)
        assert store.path is None and store.uri is not None and store.uri.startswith("postgresql://noteskit_admin:***@")
    owners = pg_cluster.psql("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'noteskit'",
                             database=database_of(pg_database))
    assert owners.split() == ["noteskit_admin"]
    # Every table with users' rows has row-level security, forced on its owner too.
    rows = pg_cluster.psql("SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class c JOIN pg_namespace n "
                           "ON n.oid = c.relnamespace WHERE n.nspname = 'noteskit' AND c.relkind = 'r' "
                           "AND relname NOT IN ('migrations', 'feed_head') ORDER BY 1", database=database_of(pg_database))
    tables = [line.split("|") for line in rows.split()]
    assert {name for name, _, _ in tables} >= {"articles", "drafts", "conversations", "messages", "feed", "meta"}
    assert all(rls == "t" and forced == "t" for _, rls, forced in tables)
    # Opening it again finds it at this library's schema.
    with nk.Store.open(pg_database.replace("postgresql://", "postgres://")) as again:
        assert not again.closed


def test_a_wrong_password_is_an_authentication_error_that_hides_the_password(pg_cluster: Any, pg_database: str) -> None:
    wrong = pg_database.replace(pg_cluster.admin_password, "not-the-password")
    with pytest.raises(nk.AuthenticationError) as caught:
        nk.Store.open(wrong)
    assert caught.value.code == "wrong_password" and isinstance(caught.value, nk.StorageError)
    assert "not-the-password" not in str(caught.value) and "***" in str(caught.value)


def test_an_unreachable_server_is_an_unreachable_error(pg_cluster: Any) -> None:
    from examples.throwaway_postgres import free_port

    with pytest.raises(nk.UnreachableError) as caught:
        nk.Store.open(f"postgresql://someone:pw@127.0.0.1:{free_port()}/notes?connect_timeout=3")
    assert caught.value.code == "server_unreachable" and "is it running" in str(caught.value)


def test_a_host_that_never_answers_is_an_unreachable_error_within_the_uris_timeout(pg_cluster: Any) -> None:
    # 192.0.2.1 (TEST-NET-1, RFC 5737) is never routed: the connection times out, or the network
    # says at once that it cannot get there.
    with pytest.raises(nk.UnreachableError) as caught:
        nk.Store.open("postgresql://someone:secret@192.0.2.1:5432/notes?connect_timeout=2")
    assert caught.value.code == "server_unreachable" and "secret" not in str(caught.value)


def test_a_missing_database_and_a_bad_uri_are_named(pg_cluster: Any) -> None:
    with pytest.raises(nk.StorageError) as caught:
        nk.Store.open(pg_cluster.uri(database="no_such_database"))
    assert caught.value.code == "database_missing"
    with pytest.raises(nk.InvalidArgumentError):
        nk.Store.open("postgresql://a:b@127.0.0.1:notaport/x")
    with pytest.raises(nk.ValidationError):
        nk.Store.open(pg_cluster.uri(), mode=0o640)


def test_a_database_of_another_application_is_refused_and_left_alone(pg_cluster: Any, pg_database: str) -> None:
    db = database_of(pg_database)
    pg_cluster.psql("CREATE TABLE public.invoices(id int); INSERT INTO public.invoices VALUES (1)", database=db,
                    user="noteskit_admin")
    with pytest.raises(nk.SchemaError) as caught:
        nk.Store.open(pg_database)
    assert caught.value.code == "not_a_store"
    assert pg_cluster.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'noteskit'", database=db).strip() == "0"
    assert pg_cluster.psql("SELECT count(*) FROM public.invoices", database=db).strip() == "1"


def test_a_schema_called_noteskit_that_is_not_a_store_is_refused(pg_cluster: Any, pg_database: str) -> None:
    pg_cluster.psql("CREATE SCHEMA noteskit; CREATE TABLE noteskit.articles(x int)", database=database_of(pg_database),
                    user="noteskit_admin")
    with pytest.raises(nk.SchemaError) as caught:
        nk.Store.open(pg_database)
    assert caught.value.code == "not_a_store"


def test_a_store_written_by_a_newer_noteskit_is_refused(pg_cluster: Any, pg_database: str) -> None:
    nk.Store.open(pg_database).close()
    pg_cluster.psql("INSERT INTO noteskit.migrations VALUES (999, '0999_from_the_future', 0)",
                    database=database_of(pg_database), user="noteskit_admin")
    with pytest.raises(nk.SchemaError) as caught:
        nk.Store.open(pg_database)
    assert caught.value.code == "schema_newer" and "upgrade noteskit" in str(caught.value)


def test_read_only_does_not_create_a_store(pg_cluster: Any, pg_database: str) -> None:
    with pytest.raises(nk.SchemaError):
        nk.Store.open(pg_database, read_only=True)
    assert pg_cluster.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'noteskit'",
                           database=database_of(pg_database)).strip() == "0"


def test_create_user_makes_a_login_role_with_only_the_grants_it_needs(pg_cluster: Any, pg_database: str) -> None:
    name = new_role()
    with nk.Store.open(pg_database) as store:
        store.create_user(name, password="s3cret")
        with pytest.raises(nk.ConflictError):
            store.create_user(name, password="again")
    flags = pg_cluster.psql(f"SELECT rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles "
                            f"WHERE rolname = '{name}'").strip()
    assert flags == "t|f|f|f|f"
    db = database_of(pg_database)
    with nk.Store.open(pg_cluster.uri(name, "s3cret", db)) as user_store:
        # A user is not an administrator: no users of its own, no tables.
        with pytest.raises(nk.StorageError) as caught:
            user_store.create_user(new_role())
        assert caught.value.code == "permission_denied"
    with pytest.raises(RuntimeError, match="permission denied"):
        pg_cluster.psql("CREATE TABLE noteskit.mine(x int)", database=db, user=name, password="s3cret")
    with pytest.raises(RuntimeError, match="must be owner"):
        pg_cluster.psql("DROP TABLE noteskit.articles", database=db, user=name, password="s3cret")


def test_create_user_takes_sql_metacharacters_literally(pg_cluster: Any, pg_database: str) -> None:
    name = "x'); DROP TABLE noteskit.articles; --\"" + secrets.token_hex(3)
    password = "p'w\"; DROP ROLE noteskit_admin; --"
    with nk.Store.open(pg_database) as store:
        store.create_user(name, password=password)
    assert pg_cluster.psql("SELECT count(*) FROM noteskit.articles", database=database_of(pg_database)).strip() == "0"
    from urllib.parse import quote
    uri = pg_database.replace("noteskit_admin:" + pg_cluster.admin_password, quote(name, safe="") + ":" + quote(password, safe=""))
    with nk.Store.open(uri):
        pass


def test_create_user_refuses_bad_names_and_a_sqlite_store(pg_database: str, db_path: Path) -> None:
    with nk.Store.open(pg_database) as store:
        with pytest.raises(nk.ValidationError):
            store.create_user("")
        with pytest.raises(nk.ValidationError):
            store.create_user("x" * 64)
        with pytest.raises(nk.ValidationError):
            store.create_user(new_role(), password="")
    with nk.Store.open(db_path) as sqlite_store:
        with pytest.raises(nk.ValidationError) as caught:
            sqlite_store.create_user("alice")
        assert caught.value.code == "not_postgres"


def test_a_second_role_sees_and_changes_none_of_the_first_roles_rows_through_sql(pg_cluster: Any, pg_database: str) -> None:
    alice, bob = new_role(), new_role()
    db = database_of(pg_database)
    with nk.Store.open(pg_database) as store:
        store.create_user(alice, password="a")
        store.create_user(bob, password="b")
    nk.Store.open(pg_cluster.uri(alice, "a", db)).close()

    def as_alice(sql: str) -> str:
        return str(pg_cluster.psql(sql, database=db, user=alice, password="a"))

    def as_bob(sql: str) -> str:
        return str(pg_cluster.psql(sql, database=db, user=bob, password="b"))

    as_alice("INSERT INTO noteskit.articles(uid, title, content, created_at, updated_at) "
             "VALUES (gen_random_uuid(), 'alice''s', 'secret', 0, 0)")
    as_alice("INSERT INTO noteskit.conversations(uid, title, created_at, last_activity_at, activity_seq) "
             "VALUES (gen_random_uuid(), 'alice chat', 0, 0, 0)")
    conversation = as_alice("SELECT id FROM noteskit.conversations").strip()
    assert as_alice("SELECT count(*) FROM noteskit.articles").strip() == "1"
    assert as_bob("SELECT count(*) FROM noteskit.articles").strip() == "0"
    assert as_bob("SELECT count(*) FROM noteskit.conversations").strip() == "0"
    assert as_bob("UPDATE noteskit.articles SET content = 'mine now' RETURNING id").strip() == ""
    assert as_bob("DELETE FROM noteskit.articles RETURNING id").strip() == ""
    with pytest.raises(RuntimeError, match="row-level security"):
        as_bob(f"INSERT INTO noteskit.articles(uid, owner, title, content, created_at, updated_at) "
               f"VALUES (gen_random_uuid(), '{alice}', 'planted', 'x', 0, 0)")
    with pytest.raises(RuntimeError, match="row-level security"):
        as_bob(f"INSERT INTO noteskit.messages(uid, conversation_id, content, from_me, sent_at) "
               f"VALUES (gen_random_uuid(), {conversation}, 'into alice''s chat', 1, 0)")
    with pytest.raises(RuntimeError, match="row-level security"):
        as_alice(f"UPDATE noteskit.articles SET owner = '{bob}'")
    assert as_alice("SELECT title, content FROM noteskit.articles").strip() == "alice's|secret"
    # The administrator is walled off the same way (row-level security is forced on the tables' owner).
    assert pg_cluster.psql("SELECT count(*) FROM noteskit.articles", database=db, user="noteskit_admin").strip() == "0"


def test_the_command_line_adds_a_user(pg_cluster: Any, pg_database: str) -> None:
    name = new_role()
    done = subprocess.run([str(SCRIPT), "--db", pg_database, "admin", "add-user", name, "--password-stdin"],
                          input="from-stdin\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert name in done.stdout
    nk.Store.open(pg_cluster.uri(name, "from-stdin", database_of(pg_database))).close()
    again = subprocess.run([str(SCRIPT), "--db", pg_database, "admin", "add-user", name, "--no-password"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "exists already" in again.stderr and "Traceback" not in again.stderr
    piped = subprocess.run([str(SCRIPT), "--db", pg_database, "admin", "add-user", new_role()],
                           input="", capture_output=True, text=True, timeout=60)
    assert piped.returncode == 1 and "--password-stdin" in piped.stderr and "Traceback" not in piped.stderr


def test_a_rare_search_in_one_statement_sees_pending_and_raw_sql_rows_and_only_its_roles(pg_cluster: Any, pg_database: str,
                                                                                         monkeypatch: Any) -> None:
    """A rare 3+-character search plans and reads its postings and pending records with one
    statement: it still finds the records the index has not taken in (new through NotesKit or raw
    SQL, changed since), under every plan, and a second role's identical search finds none of them."""
    import search_oracle as oracle
    from datetime import datetime, timedelta, timezone

    alice, bob = new_role(), new_role()
    db = database_of(pg_database)
    with nk.Store.open(pg_database) as store:
        store.create_user(alice, password="a")
        store.create_user(bob, password="b")
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    # Long posting lists for the common grams (blocks, not only tails), a few rare words among them.
    with nk.Store.open(pg_cluster.uri(alice, "a", db)) as store:
        store.articles.create_many([{"title": f"note {i}", "content": ("quux Zyxel量子 " if i % 97 == 0 else "quick ux text ") * 3,
                                     "created_at": base + timedelta(minutes=i)} for i in range(3_000)])
        changed = store.articles.create_many([{"title": "plain", "content": "nothing here", "created_at": base}])[0]
        fresh = store.articles.create(title="QUX fresh", content="new, not folded")  # pending: new
        store.articles.update(changed.id, content="now it has qUx in it")             # pending: changed
    pg_cluster.psql("INSERT INTO noteskit.articles(uid, title, content, created_at, updated_at) "
                    "VALUES (gen_random_uuid(), 'raw qux', 'written by SQL', 1, 1)", database=db, user=alice, password="a")
    with nk.Store.open(pg_cluster.uri(alice, "a", db)) as store:
        stored = list(store.articles.iter())
        for q in ("qUx", "Zyxel量", "量子", "fresh", "absent zzq"):
            expected = oracle.search(stored, q, "any", False)
            for plan in ("auto", "scan", "index", "handover"):
                monkeypatch.setenv("NOTESKIT_SEARCH_PLAN", plan)
                got, after = [], None
                while True:
                    page = store.articles.search(q, limit=20, after=after)
                    got += page.items
                    if page.next_cursor is None:
                        break
                    after = page.next_cursor
                assert [(h.article.id, h.spans) for h in got] == expected, (plan, q)
            monkeypatch.delenv("NOTESKIT_SEARCH_PLAN")
        found = {h.article.id for h in store.articles.search("qux", limit=1000).items}
        assert {changed.id, fresh.id} <= found and any(h.article.title == "raw qux" for h in store.articles.search("qux", limit=1000).items)
    with nk.Store.open(pg_cluster.uri(bob, "b", db)) as store:
        for q in ("qUx", "Zyxel量", "量子", "fresh"):
            assert store.articles.search(q).items == []
