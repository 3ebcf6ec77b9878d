"""Issue 13, items 7-9: Parquet export and import (pyarrow), CSV that Excel opens, and what a REPL user meets."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import noteskit as nk


def filled(store: nk.Store) -> None:
    a = store.articles.create(title="标题 \x01 tab\there", content="👩\u200d👩\u200d👧 body\r\nline two é")
    store.articles.update(a.id, content="revised: 天气 " + "长" * 3000)  # revision 2
    store.articles.create_many([{"title": f"n{i}", "content": f"c{i}", "created_at": datetime(1, 1, 1, 0, 0, 0, 1000 * i, tzinfo=timezone.utc),
                                 "updated_at": datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=timezone.utc)} for i in range(3)])
    alice = store.conversations.create("Alice")
    alice.send("hi")
    alice.receive("old one", sent_at=datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=timezone.utc))
    group = store.conversations.create("Book club")
    store.messages.insert_many(group.id, [{"content": "Chapter 3?", "from_me": False, "sender": "Carol",
                                           "sent_at": datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)},
                                          {"content": "  spaces kept  ", "from_me": True}])


def rows(store: nk.Store, table: str):
    """What must survive a round trip: every field but the store's own ids."""
    if table == "articles":
        return sorted((a.uid, a.title, a.content, a.created_at, a.updated_at, a.revision) for a in store.articles.select())
    if table == "conversations":
        return sorted((c.uid, c.title, c.created_at, c.last_activity_at) for c in store.conversations.select())
    titles = {c.id: (c.uid, c.title) for c in store.conversations.select()}
    return sorted((m.uid, titles[m.conversation_id], m.content, m.from_me, m.sent_at, m.sender) for m in store.messages.select())


def test_parquet_round_trip_is_exact_times_to_the_millisecond_text_byte_for_byte(tmp_path):
    with nk.Store.memory() as store:
        filled(store)
        for table in ("conversations", "articles", "messages"):
            report = store.export(tmp_path / f"{table}.parquet", table=table)
            assert getattr(report, table) == len(rows(store, table)) and report.files == 1
        with nk.Store.memory() as copy:
            for table in ("conversations", "articles", "messages"):
                assert copy.import_(tmp_path / f"{table}.parquet").created == len(rows(store, table))
            for table in ("conversations", "articles", "messages"):
                assert rows(copy, table) == rows(store, table)
            again = [copy.import_(tmp_path / f"{t}.parquet") for t in ("conversations", "articles", "messages")]
            assert [(r.created, r.updated) for r in again] == [(0, 0)] * 3  # the same files twice: once
            assert all(r.skipped for r in again)
    written = pq.read_table(tmp_path / "messages.parquet")
    assert written.schema.field("sent_at").type == pa.timestamp("ms", tz="UTC")
    assert written.schema.metadata[b"noteskit.table"] == b"messages"
    assert set(written.column_names) >= {"uid", "content", "from_me", "sent_at", "sender", "conversation_uid", "conversation_title"}
    assert oct(os.stat(tmp_path / "messages.parquet").st_mode & 0o777) == "0o600"  # private, as every export


def test_messages_alone_bring_their_conversations(tmp_path):
    with nk.Store.memory() as store:
        filled(store)
        store.export(tmp_path / "m.parquet", table="messages")
        with nk.Store.memory() as copy:
            report = copy.import_(tmp_path / "m.parquet")
            assert report.created == 4 + 2  # the messages, and their two conversations
            assert sorted(c.title for c in copy.conversations) == ["Alice", "Book club"]
            assert rows(copy, "messages") == rows(store, "messages")


def test_a_parquet_file_from_another_tool_is_read_by_its_columns(tmp_path):
    path = tmp_path / "notes.parquet"
    pq.write_table(pa.table({"title": ["a", "b"], "content": ["x", "y"], "created_at": pa.array([0, 1000], pa.timestamp("s"))}), path)
    with nk.Store.memory() as store:
        assert store.import_(path).created == 2
        assert [a.created_at.year for a in store.articles.select(order="asc")] == [1970, 1970]
        chat = tmp_path / "chat.parquet"
        pq.write_table(pa.table({"content": ["yo"], "from_me": [True], "conversation_title": ["Dan"]}), chat)
        assert store.import_(chat).created == 2  # the message, and its conversation by title
        assert [c.title for c in store.conversations] == ["Dan"]
        assert store.import_(path, on_conflict="replace").created == 0


@pytest.mark.parametrize("columns, field", [
    ({"title": ["a"], "content": ["x"], "colour": ["red"]}, "colour"),               # an unknown column
    ({"title": ["a"], "content": [5]}, "content"),                                    # text of the wrong type
    ({"title": ["a"], "content": ["x"], "created_at": [1.5]}, "created_at"),          # a time of the wrong type
    ({"title": ["a"], "content": ["x"], "revision": ["two"]}, "revision"),
    ({"content": ["x"], "from_me": ["yes"]}, "from_me"),
    ({"content": ["x"], "from_me": [True]}, "conversation_uid"),                      # a message without its conversation
    ({"title": ["a", None], "content": ["x", "y"]}, "title"),                         # a null in a required column
    ({"title": ["a", " "], "content": ["x", "y"]}, "title"),                          # a blank title, on row 2
])
def test_a_parquet_file_with_wrong_columns_or_types_writes_nothing(tmp_path, columns, field):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table(columns), path)
    with nk.Store.memory() as store:
        store.articles.create(title="kept", content="kept")
        with pytest.raises(nk.NotesError) as e:
            store.import_(path)
        assert e.value.field == field, e.value
        assert store.articles.count() == 1 and store.messages.select().count() == 0 and store.conversations.select().count() == 0


def test_a_truncated_or_damaged_parquet_file_is_a_format_error_and_writes_nothing(tmp_path):
    with nk.Store.memory() as store:
        filled(store)
        store.export(tmp_path / "a.parquet", table="articles")
    data = (tmp_path / "a.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "text.parquet").write_text("title,content\na,b\n")
    middle = bytearray(data)
    for k in range(8, min(len(middle) - 200, 400)):  # damage the pages, keep the footer
        middle[k] ^= 0x5A
    (tmp_path / "pages.parquet").write_bytes(bytes(middle))
    with nk.Store.memory() as store:
        for name in ("cut", "empty", "text"):
            with pytest.raises(nk.FormatError) as e:
                store.import_(tmp_path / f"{name}.parquet")
            assert e.value.file == str(tmp_path / f"{name}.parquet") and "Parquet" in e.value.message
        with pytest.raises(nk.FormatError) as damaged:
            store.import_(tmp_path / "pages.parquet")
        assert "is damaged" in damaged.value.message
        assert store.articles.count() == 0
        with pytest.raises(nk.NotesError) as missing:
            store.import_(tmp_path / "nowhere.parquet")
        assert "no such file" in missing.value.message


def test_parquet_options_are_checked(tmp_path):
    with nk.Store.memory() as store:
        with pytest.raises(nk.ValidationError) as e:
            store.export(tmp_path / "x.parquet", table="drafts")
        assert e.value.field == "table"
        with pytest.raises(nk.ValidationError):
            store.export(tmp_path / "x.parquet", excel=True)
        with pytest.raises(nk.ValidationError):
            store.export(tmp_path / "x.parquet", mode=0o755)
        store.export(tmp_path / "shared.parquet", mode=0o644)
        assert os.stat(tmp_path / "shared.parquet").st_mode & 0o777 == 0o644
        with pytest.raises(nk.ValidationError) as e:
            store.import_(tmp_path / "shared.parquet", encoding="gb18030")
        assert e.value.field == "encoding"
        with pytest.raises(nk.ValidationError):
            store.import_(tmp_path / "shared.parquet", table="drafts")
        with pytest.raises(nk.ValidationError):
            store.import_(tmp_path / "shared.parquet", on_conflict="sometimes")
        assert not [p for p in os.listdir(tmp_path) if p.startswith(".noteskit-")]  # no temporary left behind


def test_a_parquet_import_can_be_cancelled_and_reports_progress(tmp_path):
    with nk.Store.memory() as store:
        store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(70_000)])
        store.export(tmp_path / "a.parquet")
    seen = []
    with nk.Store.memory() as store:
        with pytest.raises(nk.CancelledError):
            store.import_(tmp_path / "a.parquet", progress=lambda done, total: seen.append((done, total)) or done < 65_536)
        assert store.articles.count() == 0 and seen[0] == (0, 70_000)
        store.import_(tmp_path / "a.parquet", progress=lambda done, total: seen.append((done, total)))
        assert store.articles.count() == 70_000 and seen[-1] == (70_000, 70_000)


def test_a_parquet_progress_callback_that_calls_the_store_gets_an_error_not_a_deadlock(tmp_path):
    # The file is read on a thread of its own (which runs the callback) while the import holds the store.
    with nk.Store.memory() as store:
        store.articles.create_many([{"title": f"t{i}", "content": "c"} for i in range(100)])
        store.export(tmp_path / "a.parquet")
    with nk.Store.memory() as store:
        for calls in (lambda: store.articles.count(), lambda: store.conversations.create("x")):
            with pytest.raises(nk.InvalidArgumentError, match="progress callback must not call the store"):
                store.import_(tmp_path / "a.parquet", progress=lambda done, total, call=calls: call())
        assert store.articles.count() == 0 and store.conversations.count() == 0


def test_without_pyarrow_parquet_names_the_arrow_extra(tmp_path):
    script = f"""
import sys
sys.modules["pyarrow"] = None  # as if it were not installed
import noteskit as nk
with nk.Store.memory() as store:
    for call in (lambda: store.export({str(tmp_path / 'x.parquet')!r}), lambda: store.import_({str(tmp_path / 'x.parquet')!r})):
        try:
            call()
        except nk.NotesError as e:
            print(type(e).__name__, e)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == 2 and all("noteskit[arrow]" in line and line.startswith("NotesError") for line in out)
    assert not (tmp_path / "x.parquet").exists()


# ---- CSV that Excel opens ----------------------------------------------------------------------------

def test_excel_csv_has_a_byte_order_mark_and_crlf_and_imports_back(tmp_path):
    with nk.Store.memory() as store:
        filled(store)
        store.export(tmp_path / "notes.csv", excel=True)
        store.export(tmp_path / "plain.csv")
        store.export(tmp_path / "tables", format="csv", excel=True)
        data = (tmp_path / "notes.csv").read_bytes()
        assert data.startswith(b"\xef\xbb\xbfuid,title,content,") and data.count(b"\xef\xbb\xbf") == 1
        assert data[3:] == (tmp_path / "plain.csv").read_bytes()  # the same CSV after the mark
        assert b"\r\n" in data and data.replace(b"\r\n", b"").count(b"\n") == 0  # CRLF ends (the LF inside a field is the text's)
        assert all((tmp_path / "tables" / n).read_bytes().startswith(b"\xef\xbb\xbf")
                   for n in ("articles.csv", "conversations.csv", "messages.csv"))
        with nk.Store.memory() as copy:
            assert copy.import_(tmp_path / "notes.csv").created == 4
            assert rows(copy, "articles") == rows(store, "articles")
            report = copy.import_(tmp_path / "tables", format="csv")
            assert report.errors == () and rows(copy, "messages") == rows(store, "messages")
        with pytest.raises(nk.ValidationError) as e:
            store.export(tmp_path / "x.json", excel=True)
        assert e.value.field == "excel"
        with pytest.raises(nk.InvalidArgumentError):
            store.export(tmp_path / "x.csv", excel="yes")  # type: ignore[arg-type]


# ---- The REPL ------------------------------------------------------------------------------------------

def test_a_page_of_long_notes_stays_readable(store):
    store.articles.create_many([{"title": "t" * 900, "content": "长" * 100_000} for _ in range(20)])
    page = store.articles.list()
    text = repr(page)
    lines = text.splitlines()
    assert len(lines) == 22 and len(text) < 20 * 500  # one article a line, the texts cut
    assert "(100000 characters)" in lines[1] and "(900 characters)" in lines[1]
    short = store.articles.create(title="short", content="kept whole")
    assert repr(short) == (f"Article(id={short.id}, uid={short.uid!r}, title='short', content='kept whole', "
                           f"created_at={short.created_at!r}, updated_at={short.updated_at!r}, revision=1)")


def test_repr_never_cuts_a_character_apart(store):
    text = "e\u0301" * 200
    a = store.articles.create(title="t", content=text)
    shown = repr(a).split("content='", 1)[1].split("…", 1)[0]
    assert not shown.endswith("e") and shown.endswith("\u0301")


def test_long_hits_show_a_few_spans(store):
    store.conversations.create("c").send("x" * 1000)
    text = repr(store.messages.search("x"))
    assert "... 995 more" in text and len(text) < 1000


def test_messages_and_conversations_show_as_html_in_a_notebook(store):
    conv = store.conversations.create("Alice <3")
    empty = conv._repr_html_()
    assert "Alice &lt;3" in empty and "no messages yet" in empty
    m = conv.send("hello <b>")
    assert "hello &lt;b&gt;" in m._repr_html_() and "text-align:right" in m._repr_html_()
    html = conv._repr_html_()
    assert '<img src="data:image/png;base64,' in html


def test_export_and_import_options_are_typed_keywords():
    export = inspect.signature(nk.Store.export).parameters
    assert [p.kind for p in export.values()].count(inspect.Parameter.VAR_KEYWORD) == 0
    assert {"table", "conversation", "mode", "excel"} <= set(export)
    assert all(export[name].kind is inspect.Parameter.KEYWORD_ONLY for name in ("table", "conversation", "mode", "excel"))
    imported = inspect.signature(nk.Store.import_).parameters
    assert [p.kind for p in imported.values()].count(inspect.Parameter.VAR_KEYWORD) == 0 and "table" in imported
    with nk.Store.memory() as store:
        with pytest.raises(TypeError):
            store.export("x.json", tabel="messages")  # type: ignore[call-arg]


def test_mypy_sees_a_misspelt_export_option(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("import noteskit as nk\n"
                      "with nk.Store.memory() as s:\n"
                      "    s.export('x.csv', excel=True, table='messages')\n"
                      "    s.export('x.csv', exel=True)\n")
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)], capture_output=True, text=True)
    assert run.returncode == 1 and 'Unexpected keyword argument "exel"' in run.stdout and "user.py:3" not in run.stdout
