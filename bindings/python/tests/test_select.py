"""``select``: lazy selections that pyarrow, pandas, polars and DuckDB read through the Arrow PyCapsule
Interface, and that iterate as records without pyarrow."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import noteskit as nk
from noteskit import _arrow

UTC = timezone.utc
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def every_arrow_struct_is_released():
    """Each test ends with every struct the library handed out released exactly once."""
    before = _arrow.outstanding()
    yield
    assert _arrow.outstanding() == before


@pytest.fixture
def chat(store):
    alice, bob = store.conversations.create("Alice"), store.conversations.create("Bob")
    store.messages.insert_many(alice.id, [{"content": f"a{i}", "from_me": i % 2 == 0, "sent_at": T0 + timedelta(hours=i)}
                                          for i in range(6)])
    store.messages.insert_many(bob.id, [{"content": "周末见", "from_me": False, "sent_at": T0 + timedelta(minutes=30)}])
    return store, alice, bob


def test_articles_select_takes_since_inclusive_until_exclusive_newest_first(store):
    store.articles.create_many([{"title": f"t{i}", "content": "c", "created_at": T0 + timedelta(days=i)} for i in range(5)])
    sel = store.articles.select(since=T0 + timedelta(days=1), until=T0 + timedelta(days=3))
    assert [a.title for a in sel] == ["t2", "t1"]
    assert sel.count() == 2
    assert [a.title for a in store.articles.select(order="asc")] == ["t0", "t1", "t2", "t3", "t4"]
    naive = datetime(2026, 1, 4)  # naive is UTC
    assert [a.title for a in store.articles.select(since=naive)] == ["t4", "t3"]
    other_zone = datetime(2026, 1, 4, 8, tzinfo=timezone(timedelta(hours=8)))  # = 2026-01-04T00:00Z
    assert [a.title for a in store.articles.select(until=other_zone, order="asc")] == ["t0", "t1", "t2"]


def test_messages_select_filters_by_conversation_sender_and_time(chat):
    store, alice, bob = chat
    assert [m.content for m in store.messages.select()] == ["a0", "周末见", "a1", "a2", "a3", "a4", "a5"]
    assert [m.content for m in store.messages.select(conversation=alice.id, from_me=False)] == ["a1", "a3", "a5"]
    assert [m.content for m in store.messages.select(from_me=True, order="desc")] == ["a4", "a2", "a0"]
    window = store.messages.select(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=3))
    assert [m.content for m in window] == ["a1", "a2"]
    assert window.count() == 2 and store.messages.select(conversation=bob.id).count() == 1


def test_an_unknown_conversation_or_a_bad_argument_is_refused_clearly(chat):
    store, _, _ = chat
    with pytest.raises(nk.NotFoundError):
        list(store.messages.select(conversation=999))
    with pytest.raises(nk.NotFoundError):
        store.messages.select(conversation=999).count()
    with pytest.raises(nk.ValidationError, match="order"):
        store.messages.select(order="sideways")
    with pytest.raises(nk.InvalidArgumentError, match="since"):
        store.articles.select(since="2026-01-01")  # type: ignore[arg-type]
    with pytest.raises(nk.InvalidArgumentError, match="from_me"):
        store.messages.select(from_me=1)  # type: ignore[arg-type]


def test_conversations_select_yields_bound_conversations_most_recent_first(chat):
    store, alice, bob = chat
    alice.send("now")  # the latest activity
    conversations = list(store.conversations.select())
    assert [c.title for c in conversations] == ["Alice", "Bob"] == [c.title for c in store.conversations.list()]
    assert conversations[0] == store.conversations.get(alice.id)
    conversations[1].send("from a selection")  # bound to the store
    assert [c.title for c in store.conversations.select()] == ["Bob", "Alice"]
    assert store.conversations.select().count() == 2


def test_pyarrow_reads_a_selection_with_the_record_field_names_and_types(chat):
    store, _, _ = chat
    table = pa.table(store.messages.select())
    assert table.schema.names == ["id", "uid", "conversation_id", "content", "from_me", "sent_at", "sender"]
    assert [str(t) for t in table.schema.types] == ["int64", "string", "int64", "string", "bool", "timestamp[ms, tz=UTC]", "string"]
    assert table.schema.field("sender").nullable and set(table.column("sender").to_pylist()) == {None}
    assert table.column("content").to_pylist()[:2] == ["a0", "周末见"]
    assert table.equals(store.messages.select().to_arrow())
    assert table.column("sent_at").to_pylist()[0] == T0


def test_pandas_polars_and_duckdb_read_the_same_rows(chat):
    store, alice, _ = chat
    sel = store.messages.select(conversation=alice.id)
    frame = sel.to_pandas()
    assert list(frame["content"]) == ["a0", "a1", "a2", "a3", "a4", "a5"]
    assert str(frame["sent_at"].dtype) == "datetime64[ms, UTC]" and frame["from_me"].dtype == bool
    assert pd.DataFrame.from_arrow(sel)["content"].tolist() == frame["content"].tolist()  # the capsule, straight
    polars_frame = sel.to_polars()
    assert polars_frame["content"].to_list() == frame["content"].tolist()
    assert polars_frame.schema["sent_at"] == pl.Datetime("ms", "UTC")
    assert pl.DataFrame(sel).equals(polars_frame)
    # DuckDB asks for the stream more than once (schema, then scan): every call is a fresh stream.
    mine = duckdb.sql("SELECT count(*), min(content) FROM sel WHERE from_me").fetchall()
    assert mine == [(3, "a0")]
    assert duckdb.sql("SELECT content FROM sel ORDER BY sent_at DESC LIMIT 1").fetchall() == [("a5",)]


def test_every_stream_is_fresh_and_sees_the_store_as_it_is_when_read(chat):
    store, alice, _ = chat
    sel = store.messages.select(conversation=alice.id)
    first = pa.table(sel)
    alice.send("later")
    second = pa.table(sel)
    assert (first.num_rows, second.num_rows) == (6, 7)
    assert sel.count() == 7


def test_iteration_builds_the_same_frozen_records_as_the_other_calls(chat):
    store, alice, _ = chat
    from_select = list(store.messages.select(conversation=alice.id))
    from_history = list(alice.history(limit=50))
    assert from_select == from_history
    m = from_select[0]
    assert type(m) is nk.Message and m == nk.Message(m.id, m.uid, m.conversation_id, m.content, m.from_me, m.sent_at)
    assert hash(m) == hash(dataclasses.replace(m))
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "changed"  # type: ignore[misc]


def test_a_file_store_is_read_on_two_threads_in_the_same_order(tmp_path):
    # Enough rows for the two-thread read (20 000), with long runs of equal sent_at: the halves meet
    # inside a run and must neither repeat nor drop a row.
    with nk.Store.open(tmp_path / "many.db") as store:
        conv = store.conversations.create("many")
        rows = [{"content": f"m{i}", "from_me": i % 3 == 0, "sent_at": T0 + timedelta(seconds=i // 5000)} for i in range(70_000)]
        store.messages.insert_many(conv.id, rows)
        sel = store.messages.select()
        table = sel.to_arrow()  # two threads
        assert table.num_rows == 70_000 and table.column("content").to_pylist() == [r["content"] for r in rows]
        assert [m.content for m in sel] == [r["content"] for r in rows]  # one thread, two batches
        newest = store.messages.select(order="desc", from_me=True).to_arrow().column("content").to_pylist()
        assert newest == [r["content"] for r in reversed(rows) if r["from_me"]]


def test_a_selection_of_a_closed_store_fails_with_a_clear_error(tmp_path):
    store = nk.Store.open(tmp_path / "closed.db")
    store.articles.create(title="t", content="c")
    sel = store.articles.select()
    store.close()
    with pytest.raises(nk.ClosedError):
        list(sel)
    with pytest.raises(nk.ClosedError):
        sel.to_arrow()


def test_a_store_closed_under_an_open_stream_fails_the_next_batch_cleanly(tmp_path):
    store = nk.Store.open(tmp_path / "s.db")
    conv = store.conversations.create("c")
    store.messages.insert_many(conv.id, [{"content": "x", "from_me": True}] * 70_000)
    batches = iter(store.messages.select())
    next(batches)  # first batch read
    store.close()
    with pytest.raises(nk.NotesError, match="closed"):
        list(batches)


def test_without_pyarrow_the_package_works_and_to_arrow_names_the_extra(tmp_path):
    script = textwrap.dedent("""
        import sys
        for name in ("pyarrow", "pandas", "polars"):
            sys.modules[name] = None  # as if not installed
        import noteskit as nk
        with nk.Store.memory() as store:
            a = store.articles.create(title="t", content="今天")
            assert store.articles.list()[0] == a and store.articles.search("今")[0].article == a
            assert [x.title for x in store.articles.select()] == ["t"]
            for call in ("to_arrow", "to_pandas", "to_polars"):
                try:
                    getattr(store.articles.select(), call)()
                except nk.NotesError as e:
                    assert "noteskit[arrow]" in str(e), e
                else:
                    raise AssertionError(call)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_messages_written_out_of_time_order_still_come_in_time_order(tmp_path):
    # A many-row store read on two threads tries rowid order first; history imported later with
    # older times (or one old message in the middle) must send it back to the index's order.
    with nk.Store.open(tmp_path / "imported.db") as store:
        a, b = store.conversations.create("a"), store.conversations.create("b")
        recent = [{"content": f"r{i}", "from_me": i % 2 == 0, "sent_at": T0 + timedelta(seconds=i)} for i in range(30_000)]
        store.messages.insert_many(a.id, recent)
        assert store.messages.select().to_arrow().column("content").to_pylist() == [r["content"] for r in recent]
        older = [{"content": f"o{i}", "from_me": True, "sent_at": T0 - timedelta(days=1) + timedelta(seconds=i)}
                 for i in range(30_000)]
        store.messages.insert_many(b.id, older)  # rowid order is no longer time order: the halves meet out of order
        expected = [r["content"] for r in older + recent]
        assert store.messages.select().to_arrow().column("content").to_pylist() == expected
        assert store.messages.select(order="desc").to_arrow().column("content").to_pylist() == expected[::-1]
        assert [m.content for m in store.messages.select()] == expected  # one thread, by the index
        store.messages.insert_many(a.id, [{"content": "late", "from_me": False, "sent_at": T0 + timedelta(seconds=5.5)}])
        mine = store.messages.select(from_me=False).to_arrow().column("content").to_pylist()
        assert mine == [r["content"] for r in recent[:6] if not r["from_me"]] + ["late"] + \
            [r["content"] for r in recent[6:] if not r["from_me"]]
