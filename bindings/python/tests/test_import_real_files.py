"""Importing files the way other tools write them (issue 14, items 1–8): byte order marks, Excel and
GBK CSVs, dates without times, empty Obsidian notes, editor edits, and re-imports that change nothing."""
from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict

import pytest

import noteskit as nk

DATA = Path(__file__).parent / "data"
UID1 = "0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e"
BOM = b"\xef\xbb\xbf"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)  # type: ignore[misc]


def jsonl(path: Path, *records: Dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def crlf(*lines: str) -> str:
    return "".join(line + "\r\n" for line in lines)


# ---- 1. Re-imports of records without times ------------------------------------------------------

@pytest.mark.parametrize("policy", ["skip", "replace", "newer"])
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_reimporting_records_without_times_writes_nothing_whatever_on_conflict_says(tmp_path, store, policy, kind):
    if kind == "jsonl":
        path = jsonl(tmp_path / "notes.jsonl", {"type": "article", "title": "Groceries", "content": "milk, eggs"})
    else:
        path = tmp_path / "notes.csv"
        path.write_text(crlf("title,content", "Groceries,\"milk, eggs\""), encoding="utf-8")
    assert store.import_(path).created == 1
    before = next(iter(store.articles))
    seq = store.last_change_seq()
    time.sleep(0.01)  # a rewrite would date the article later
    report = store.import_(path, on_conflict=policy)
    assert (report.created, report.updated, report.skipped) == (0, 0, 1)
    assert report.skips[0].reason == "the store holds it already, unchanged"
    assert next(iter(store.articles)) == before
    assert store.last_change_seq() == seq


def test_a_changed_text_without_times_replaces_the_article_and_keeps_its_creation(tmp_path, store):
    path = jsonl(tmp_path / "a.jsonl", {"type": "article", "uid": UID1, "title": "t", "content": "one"})
    store.import_(path)
    first = store.articles.get(next(iter(store.articles)).id)
    jsonl(path, {"type": "article", "uid": UID1, "title": "t", "content": "two"})
    assert store.import_(path, on_conflict="newer").skipped == 1      # no update time: not newer
    assert store.import_(path, on_conflict="replace").updated == 1
    now = store.articles.get(first.id)
    assert (now.content, now.created_at, now.revision) == ("two", first.created_at, 2)
    assert now.updated_at >= first.updated_at


# ---- 2. A transcript back into the store it came from -----------------------------------------------

def test_a_transcript_imported_back_without_a_title_adds_nothing(tmp_path, store):
    alice = store.conversations.create("Alice")
    alice.receive("hi", sent_at=utc(2026, 11, 29, 10, 0, 0))
    alice.send("hello")
    seq = store.last_change_seq()
    store.export(tmp_path / "alice.txt", conversation=alice.id)
    report = store.import_(tmp_path / "alice.txt")
    assert (report.created, report.skipped) == (0, 2)
    assert [c.title for c in store.conversations] == ["Alice"]
    assert store.last_change_seq() == seq


# ---- 3. Byte order marks ------------------------------------------------------------------------------

def _files_of_every_format(tmp_path: Path) -> Dict[str, Path]:
    with nk.Store.memory() as source:
        source.articles.create(title="周末", content="今天天气真好")
        c = source.conversations.create("Alice")
        c.receive("hi", sent_at=utc(2024, 1, 2, 3, 4, 5))
        source.export(tmp_path / "b.json")
        source.export(tmp_path / "b.jsonl")
        source.export(tmp_path / "b.csv")
        source.export(tmp_path / "b.txt", conversation=c.id)
        source.export(tmp_path / "vault", format="markdown")
    return {"json": tmp_path / "b.json", "jsonl": tmp_path / "b.jsonl", "csv": tmp_path / "b.csv",
            "transcript": tmp_path / "b.txt", "markdown": next((tmp_path / "vault").iterdir()),
            "telegram": DATA / "telegram_personal_chat.json", "whatsapp": DATA / "WhatsApp Chat with Alice.txt"}


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "markdown", "transcript", "telegram", "whatsapp"])
def test_a_utf8_byte_order_mark_is_accepted_in_every_format(tmp_path, fmt):
    path = _files_of_every_format(tmp_path)[fmt]
    marked = tmp_path / ("marked-" + path.name)
    marked.write_bytes(BOM + path.read_bytes())
    with nk.Store.memory() as plain, nk.Store.memory() as store:
        expected = plain.import_(path, format=fmt)
        got = store.import_(marked, format=fmt)
        assert (got.created, got.skipped) == (expected.created, expected.skipped)
        assert [(a.uid, a.title, a.content) for a in store.articles] == [(a.uid, a.title, a.content) for a in plain.articles]
        assert [m.content for c in store.conversations for m in store.messages.history(c.id)] == \
            [m.content for c in plain.conversations for m in plain.messages.history(c.id)]


def test_markdown_with_a_byte_order_mark_keeps_its_front_matter(tmp_path, store):
    note = tmp_path / "note.md"
    note.write_bytes(BOM + f"---\ntitle: Shopping\nuid: {UID1}\n---\n\nmilk".encode())
    store.import_(note)
    a = next(iter(store.articles))
    assert (a.uid, a.title, a.content) == (UID1, "Shopping", "milk")


@pytest.mark.parametrize("mark, name", [(b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"),
                                        (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)")])
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".txt", ".md"])
def test_a_utf16_or_utf32_mark_is_a_format_error_naming_the_encoding(tmp_path, store, mark, name, suffix):
    path = tmp_path / ("file" + suffix)
    path.write_bytes(mark + "title,content\n".encode("utf-16-le"))
    with pytest.raises(nk.FormatError, match=name.replace("(", r"\(").replace(")", r"\)")) as e:
        store.import_(path)
    assert e.value.line == 1
    assert store.last_change_seq() == 0


# ---- 4. Edits made in a text editor ---------------------------------------------------------------------

def test_on_conflict_newer_takes_a_markdown_file_edited_in_an_editor(tmp_path, store):
    a = store.articles.create(title="Plan", content="walk")
    b = store.articles.create(title="Other", content="unchanged")
    store.export(tmp_path / "vault", format="markdown")
    plan = tmp_path / "vault" / "Plan.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("walk", "walk to the park"), encoding="utf-8")
    later = int(store.articles.get(a.id).updated_at.timestamp()) + 60
    os.utime(plan, (later, later))
    report = store.import_(tmp_path / "vault", format="markdown", on_conflict="newer")
    assert (report.updated, report.skipped) == (1, 1)
    edited = store.articles.get(a.id)
    assert (edited.content, edited.revision) == ("walk to the park", 2)
    assert edited.updated_at == datetime.fromtimestamp(later, timezone.utc)
    assert store.articles.get(b.id).revision == 1
    # Imported again: nothing is newer any more.
    assert store.import_(tmp_path / "vault", format="markdown", on_conflict="newer").updated == 0


def test_an_edited_file_older_than_the_stored_update_is_not_newer(tmp_path, store):
    a = store.articles.create(title="Plan", content="walk")
    store.export(tmp_path / "vault", format="markdown")
    plan = tmp_path / "vault" / "Plan.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("walk", "run"), encoding="utf-8")
    os.utime(plan, (1_000_000, 1_000_000))
    assert store.import_(tmp_path / "vault", format="markdown", on_conflict="newer").skipped == 1
    assert store.articles.get(a.id).content == "walk"


# ---- 5. Times that are never out of order --------------------------------------------------------------

def test_front_matter_with_updated_but_no_created_is_not_created_after_its_update(tmp_path, store):
    note = tmp_path / "n.md"
    note.write_text("---\ntitle: t\nupdated: 2020-01-01T00:00:00Z\n---\n\nbody", encoding="utf-8")
    store.import_(note)
    a = next(iter(store.articles))
    assert a.created_at <= a.updated_at == utc(2020, 1, 1)


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv"])
def test_a_conversation_without_created_at_is_dated_by_its_first_message(tmp_path, store, kind):
    conv = {"uid": UID1, "title": "Alice"}
    messages = [{"conversation_uid": UID1, "content": c, "from_me": False, "sent_at": t}
                for c, t in (("second", "2024-01-02T00:00:00Z"), ("first", "2024-01-01T00:00:00Z"))]
    if kind == "jsonl":
        path = jsonl(tmp_path / "c.jsonl", {"type": "conversation", **conv}, *({"type": "message", **m} for m in messages))
    elif kind == "json":
        path = tmp_path / "c.json"
        path.write_text(json.dumps({"format": "noteskit", "version": 1, "conversations": [conv], "messages": messages}))
    else:
        path = tmp_path / "c.csv"
        path.write_text(crlf("conversation_title,from_me,sent_at,content",
                             *(f"Alice,false,{m['sent_at']},{m['content']}" for m in messages)), encoding="utf-8")
    store.import_(path)
    c = next(iter(store.conversations))
    assert (c.created_at, c.last_activity_at) == (utc(2024, 1, 1), utc(2024, 1, 2))


def test_a_csv_folder_keeps_conversations_creation_times(tmp_path, store):
    c = store.conversations.create("Alice")
    c.receive("later", sent_at=datetime(2030, 1, 1, tzinfo=timezone.utc))
    store.export(tmp_path / "tables", format="csv")
    assert (tmp_path / "tables" / "conversations.csv").exists()
    with nk.Store.memory() as copy:
        copy.import_(tmp_path / "tables", format="csv")
        got = next(iter(copy.conversations))
        assert (got.uid, got.created_at, got.last_activity_at) == (c.uid, c.created_at, utc(2030, 1, 1))


# ---- 6. Dates without times, zones, Unix times ---------------------------------------------------------

@pytest.mark.parametrize("tz, created", [(None, utc(2024, 1, 15)), ("Asia/Shanghai", utc(2024, 1, 14, 16)),
                                         ("-05:00", utc(2024, 1, 15, 5)), ("UTC+8", utc(2024, 1, 14, 16))])
def test_a_date_without_a_time_is_midnight_in_the_zone_given(tmp_path, store, tz, created):
    note = tmp_path / "n.md"
    note.write_text("---\ntitle: t\ncreated: 2024-01-15\n---\n\nbody", encoding="utf-8")
    store.import_(note, tz=tz)
    assert next(iter(store.articles)).created_at == created


@pytest.mark.parametrize("text, expected", [("2024-01-15 10:00", utc(2024, 1, 15, 9)), ("2024-07-01T10:00:00", utc(2024, 7, 1, 8)),
                                            ("2024-03-31 02:30", utc(2024, 3, 31, 1, 30)),  # in the spring gap
                                            ("2024-01-15T10:00:00Z", utc(2024, 1, 15, 10)),
                                            ("2100-07-01 10:00", utc(2100, 7, 1, 8))])  # past the zone's transitions: its rule
def test_naive_times_are_read_in_the_zone_given_with_its_summer_time(tmp_path, store, text, expected):
    path = tmp_path / "a.csv"
    path.write_text(crlf("title,content,created_at", f"t,c,{text}"), encoding="utf-8")
    store.import_(path, tz="Europe/Berlin")
    assert next(iter(store.articles)).created_at == expected


def test_unix_seconds_and_milliseconds_are_times(tmp_path, store):
    path = jsonl(tmp_path / "a.jsonl", {"type": "article", "title": "s", "content": "c", "created_at": 1705312800},
                 {"type": "article", "title": "ms", "content": "c", "created_at": "1705312800123"})
    store.import_(path)
    assert {a.title: a.created_at for a in store.articles} == {
        "s": utc(2024, 1, 15, 10), "ms": datetime(2024, 1, 15, 10, 0, 0, 123000, tzinfo=timezone.utc)}


def test_an_unknown_time_zone_is_a_validation_error_that_writes_nothing(tmp_path, store):
    path = jsonl(tmp_path / "a.jsonl", {"type": "article", "title": "t", "content": "c"})
    for bad in ("Mars/Olympus", "../../etc/passwd", "+25:00", ""):
        with pytest.raises(nk.ValidationError) as e:
            store.import_(path, tz=bad)
        assert e.value.field == "tz"
    assert store.last_change_seq() == 0


# ---- 7. CSVs from Excel, in legacy encodings, with other headers ----------------------------------------

def test_a_semicolon_csv_from_a_european_excel_is_read(tmp_path, store):
    path = tmp_path / "excel.csv"
    path.write_bytes(BOM + crlf("title;content", "Bericht;\"Zahlen; Fakten\"", "Müll;a,b").encode())
    store.import_(path)
    assert sorted((a.title, a.content) for a in store.articles) == [("Bericht", "Zahlen; Fakten"), ("Müll", "a,b")]


def test_excels_sep_line_and_a_given_delimiter_are_honoured(tmp_path, store):
    (tmp_path / "sep.csv").write_text(crlf("sep=|", "title|content", "a|b,c"), encoding="utf-8")
    (tmp_path / "tabs.csv").write_text(crlf("title\tcontent", "x\ty;z"), encoding="utf-8")
    store.import_(tmp_path / "sep.csv")
    store.import_(tmp_path / "tabs.csv", delimiter="\t")
    assert sorted((a.title, a.content) for a in store.articles) == [("a", "b,c"), ("x", "y;z")]


@pytest.mark.parametrize("encoding, text", [("gb18030", "今天天气真好"), ("cp1252", "café crème"), ("utf-16", "naïve 周末")])
def test_legacy_encodings_are_read_with_encoding(tmp_path, store, encoding, text):
    path = tmp_path / "legacy.csv"
    delimiter = "\t" if encoding == "utf-16" else ","  # Excel's "Unicode text" is tab-separated UTF-16
    path.write_bytes(crlf(f"title{delimiter}content", f"t{delimiter}{text}").encode(encoding))
    store.import_(path, encoding=encoding)
    assert [(a.title, a.content) for a in store.articles] == [("t", text)]


def test_utf16_named_exactly_with_its_mark_in_the_file_is_read(tmp_path, store):
    path = tmp_path / "unicode.csv"
    path.write_bytes(b"\xff\xfe" + crlf("title\tcontent", "t\t周末").encode("utf-16-le"))
    store.import_(path, encoding="UTF-16LE")
    assert [(a.title, a.content) for a in store.articles] == [("t", "周末")]


@pytest.mark.parametrize("encoding, text, likely", [("gb18030", "今天天气真好", "gb18030"), ("cp1252", "café crème", "cp1252")])
def test_a_legacy_file_without_encoding_names_the_line_column_and_likely_encoding(tmp_path, store, encoding, text, likely):
    path = tmp_path / "legacy.csv"
    path.write_bytes(crlf("title,content", "ok,fine", f"t,{text}").encode(encoding))
    with pytest.raises(nk.FormatError) as e:
        store.import_(path)
    assert (e.value.line, e.value.field) == (3, "content")
    assert f'encoding="{likely}"' in str(e.value) and 'column "content"' in str(e.value)
    assert store.articles.count() == 0


def test_columns_map_headers_and_unknown_columns_can_be_ignored(tmp_path, store):
    path = tmp_path / "export.csv"
    path.write_text(crlf("Title,Body,Tags,Created", "Trip,Pack the tent,travel,2024-01-15"), encoding="utf-8")
    with pytest.raises(nk.FormatError, match='unknown column "Title"'):
        store.import_(path)
    with pytest.raises(nk.FormatError, match='unknown column "Tags"'):
        store.import_(path, columns={"Title": "title", "Body": "content", "Created": "created_at"})
    store.import_(path, columns={"Title": "title", "Body": "content", "Created": "created_at"}, unknown_columns="ignore")
    a = next(iter(store.articles))
    assert (a.title, a.content, a.created_at) == ("Trip", "Pack the tent", utc(2024, 1, 15))


def test_csv_options_are_checked(tmp_path, store):
    path = tmp_path / "a.csv"
    path.write_text(crlf("title,content", "t,c"), encoding="utf-8")
    for options, field in (({"encoding": "no-such-encoding"}, "encoding"), ({"delimiter": ";;"}, "delimiter"),
                           ({"columns": {"Title": "heading"}}, "columns"), ({"unknown_columns": "maybe"}, "unknown_columns")):
        with pytest.raises(nk.ValidationError) as e:
            store.import_(path, **options)
        assert e.value.field == field
    jsonl_file = jsonl(tmp_path / "a.jsonl", {"type": "article", "title": "t", "content": "c"})
    with pytest.raises(nk.ValidationError, match="encoding applies to csv"):
        store.import_(jsonl_file, encoding="gb18030")
    assert store.last_change_seq() == 0


# ---- 8. Empty notes, and the list of what was skipped ----------------------------------------------------

def test_an_empty_obsidian_note_is_skipped_and_listed_not_an_error(tmp_path, store):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Untitled.md").write_bytes(b"")
    (vault / "Untitled 1.md").write_text("---\ntags: []\n---\n\n  \n", encoding="utf-8")
    (vault / "Ideas.md").write_text("# Ideas\n\nfly", encoding="utf-8")
    report = store.import_(vault, format="markdown")
    assert (report.created, report.skipped, report.errors) == (1, 2, ())
    assert sorted((Path(s.file).name, s.line, s.reason) for s in report.skips) == [
        ("Untitled 1.md", 1, "the note is empty"), ("Untitled.md", 1, "the note is empty")]
    assert [a.title for a in store.articles] == ["Ideas"]


def test_every_skipped_record_is_listed_with_its_file_line_and_reason(tmp_path, store):
    path = jsonl(tmp_path / "a.jsonl", {"type": "noteskit", "version": 1},
                 {"type": "article", "uid": UID1, "title": "t", "content": "c", "updated_at": "2024-01-01T00:00:00Z"})
    store.import_(path)
    report = store.import_(path)
    assert [(s.file, s.line, s.reason) for s in report.skips] == [(str(path), 2, "the store holds it already, unchanged")]
    jsonl(path, {"type": "article", "uid": UID1, "title": "t", "content": "changed", "updated_at": "2023-01-01T00:00:00Z"})
    assert store.import_(path).skips[0].reason == 'the store has a record with its uid (on_conflict="skip" keeps it)'
    assert store.import_(path, on_conflict="newer").skips[0].reason == 'the stored record is as new or newer (on_conflict="newer")'


# ---- Sender through the store: a store from before it opens ---------------------------------------------

def test_a_store_from_before_senders_opens_and_gets_them(tmp_path):
    db = tmp_path / "old.db"
    with nk.Store.open(db) as s:
        s.conversations.create("Alice").send("hi")
    with sqlite3.connect(db) as raw:
        raw.execute("ALTER TABLE messages DROP COLUMN sender")
        raw.execute("DELETE FROM migrations WHERE name = '0006_message_sender'")
    with nk.Store.open(db) as s:
        c = next(iter(s.conversations))
        assert [(m.content, m.sender) for m in s.messages.history(c.id)] == [("hi", None)]
        m = s.messages.insert_many(c.id, [{"content": "yo", "from_me": False, "sender": "Carol"}])[0]
        assert s.messages.get(m.id).sender == "Carol"


# ---- A re-import writes nothing, in every format, with and without times ---------------------------------

def _without_times(tmp_path: Path, fmt: str) -> Path:
    """A hand-made file of `fmt` whose records carry no times (or only local ones)."""
    if fmt == "json":
        path = tmp_path / "n.json"
        path.write_text(json.dumps({"format": "noteskit", "version": 1, "articles": [{"title": "t", "content": "c"}],
                                    "drafts": [{"title": "d", "content": "draft"}], "conversations": [{"title": "Alice"}]}))
        return path
    if fmt == "jsonl":
        return jsonl(tmp_path / "n.jsonl", {"type": "article", "title": "t", "content": "c"},
                     {"type": "draft", "title": "d", "content": "draft"},
                     {"type": "conversation", "uid": UID1, "title": "Alice"},
                     {"type": "message", "conversation_uid": UID1, "content": "hi", "from_me": False})
    if fmt == "csv":
        folder = tmp_path / "tables"
        folder.mkdir()
        (folder / "articles.csv").write_text(crlf("title,content", "t,c"), encoding="utf-8")
        (folder / "messages.csv").write_text(crlf("conversation_title,from_me,content", "Alice,false,hi", "Alice,true,hello"),
                                             encoding="utf-8")
        return folder
    if fmt == "csv-file":
        path = tmp_path / "n.csv"
        path.write_text(crlf("title,content", "t,c"), encoding="utf-8")
        return path
    if fmt == "markdown":
        folder = tmp_path / "vault"
        folder.mkdir()
        (folder / "Plain note.md").write_text("no front matter at all", encoding="utf-8")
        (folder / "Dated.md").write_text("---\ntitle: Dated\ncreated: 2024-01-15\n---\n\nbody", encoding="utf-8")
        return folder
    if fmt == "transcript":
        path = tmp_path / "n.txt"
        path.write_text("[2024-01-15 10:00:00] Them: hi\n[2024-01-15 10:00:00] Them: hi\n", encoding="utf-8")
        return path
    if fmt == "telegram":
        data = json.loads((DATA / "telegram_personal_chat.json").read_text(encoding="utf-8"))
        for m in data["messages"]:
            del m["date_unixtime"]
        path = tmp_path / "result.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path
    return DATA / "_chat.txt"


def _with_times(tmp_path: Path, store: nk.Store, fmt: str) -> Path:
    """`store` given records with every time, exported as `fmt` (a chat app's export: its fixture)."""
    a = store.articles.create(title="周末", content="今天天气真好")
    store.articles.update(a.id, content="下雨了")
    store.articles.edit(a.id).content = "draft"
    conv = store.conversations.create("Book club")
    store.messages.insert_many(conv.id, [{"content": "hi", "from_me": False, "sender": "Carol", "sent_at": utc(2024, 1, 1)},
                                         {"content": "hi", "from_me": False, "sender": "Carol", "sent_at": utc(2024, 1, 1)},
                                         {"content": "yo", "from_me": True}])
    paths = {"json": "b.json", "jsonl": "b.jsonl", "csv": "tables", "csv-file": "b.csv", "markdown": "vault", "transcript": "b.txt"}
    if fmt in paths:
        path = tmp_path / paths[fmt]
        store.export(path, format={"tables": "csv", "vault": "markdown"}.get(paths[fmt]),
                     **({"conversation": conv.id} if fmt == "transcript" else {}))
        return path
    path = DATA / ("telegram_full_export.json" if fmt == "telegram" else "WhatsApp Chat with Alice.txt")
    store.import_(path, tz="Asia/Tokyo")
    return path


def _state(store: nk.Store) -> Any:
    return (list(store.articles), list(store.conversations),
            [(d.uid, d.article_id, d.title, d.content, d.created_at, d.updated_at) for d in store.articles.drafts()],
            [m for c in store.conversations for m in store.messages.history(c.id, limit=1000)])


@pytest.mark.parametrize("times", ["with times", "without times"])
@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "csv-file", "markdown", "transcript", "telegram", "whatsapp"])
def test_reimporting_any_format_into_the_store_it_came_from_writes_nothing(tmp_path, store, fmt, times):
    format_name = {"csv-file": "csv"}.get(fmt, fmt)
    if times == "with times":
        path = _with_times(tmp_path, store, fmt)
    else:
        path = _without_times(tmp_path, fmt)
        options: Dict[str, Any] = {"title": "Book club"} if fmt == "whatsapp" else {}
        assert store.import_(path, format=format_name, tz="Asia/Tokyo", **options).created > 0
    seq = store.last_change_seq()
    before = _state(store)
    for policy in ("skip", "replace", "newer"):
        options = {"title": "Book club"} if fmt == "whatsapp" and times == "without times" else {}
        report = store.import_(path, format=format_name, on_conflict=policy, tz="Asia/Tokyo", **options)
        assert (report.created, report.updated, report.errors) == (0, 0, ()), (policy, report, report.skips)
        assert report.skipped == len(report.skips) > 0
    assert store.last_change_seq() == seq
    assert _state(store) == before
