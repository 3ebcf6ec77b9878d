"""Group chats with senders, and chats exported by Telegram Desktop and WhatsApp (issue 14, items
9–11), from files built by hand after those apps' documented formats (tests/data/)."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import noteskit as nk

DATA = Path(__file__).parent / "data"
TELEGRAM_CHAT = DATA / "telegram_personal_chat.json"
TELEGRAM_ALL = DATA / "telegram_full_export.json"
ANDROID = DATA / "WhatsApp Chat with Alice.txt"
IOS = DATA / "_chat.txt"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)  # type: ignore[misc]


def chat(store: nk.Store, title: str) -> List[Tuple[Any, ...]]:
    conv = next(c for c in store.conversations if c.title == title)
    return [(m.sender, m.from_me, m.content, m.sent_at) for m in store.messages.history(conv.id, limit=1000)]


# ---- 9. Message.sender ----------------------------------------------------------------------------------

def test_a_group_chat_keeps_who_wrote_each_message(store):
    conv = store.conversations.create("Book club")
    made = store.messages.insert_many(conv.id, [{"content": "Chapter 3?", "from_me": False, "sender": "Carol"},
                                                {"content": "Yes!", "from_me": False, "sender": "Alice"},
                                                {"content": "Friday", "from_me": True}])
    assert [m.sender for m in made] == ["Carol", "Alice", None]
    assert [(m.sender, m.content) for m in conv.history()] == [("Carol", "Chapter 3?"), ("Alice", "Yes!"), (None, "Friday")]
    assert store.messages.get(made[0].id).sender == "Carol"
    assert conv.send("two-person chats have no sender").sender is None


def test_senders_travel_in_arrow_columns_both_ways(store):
    pa = pytest.importorskip("pyarrow")
    conv = store.conversations.create("Book club")
    made = store.messages.insert_many(conv.id, pa.table({"content": ["hi", "yo", "hey"], "from_me": [False, True, False],
                                                         "sender": ["Carol", None, "陈小明"]}))
    assert [m.sender for m in made] == ["Carol", None, "陈小明"]
    assert [m.sender for m in conv.history()] == ["Carol", None, "陈小明"]
    with pytest.raises(nk.ValidationError) as e:
        store.messages.insert_many(conv.id, pa.table({"content": ["x"], "from_me": [False], "sender": ["  "]}))
    assert e.value.field == "sender"


def test_every_read_of_a_message_carries_its_sender(store):
    pa = pytest.importorskip("pyarrow")
    conv = store.conversations.create("Book club")
    made = store.messages.insert_many(conv.id, [{"content": "chapter 3", "from_me": False, "sender": "Carol"},
                                                {"content": "chapter 4", "from_me": True}])
    assert [store.messages.get(m.id).sender for m in made] == ["Carol", None]              # packed rows
    assert [m.sender for m in conv.history()] == ["Carol", None]                            # history batches
    assert [h.message.sender for h in store.messages.search("chapter")] == [None, "Carol"]  # search hits, newest first
    table = pa.table(store.messages.select(conversation=conv.id))
    assert table.column("sender").to_pylist() == ["Carol", None]


def test_a_notebook_shows_who_wrote_each_message_of_a_group_chat(store):
    conv = store.conversations.create("Book club")
    store.messages.insert_many(conv.id, [{"content": "hi", "from_me": False, "sender": "Carol <3"},
                                         {"content": "yo", "from_me": True}])
    html = conv.history()._repr_html_()
    assert "Carol &lt;3" in html and ">me<" in html


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "x" * 1001, 7])
def test_a_bad_sender_is_refused_and_names_the_field(store, bad):
    conv = store.conversations.create("c")
    with pytest.raises((nk.ValidationError, nk.InvalidArgumentError)) as e:
        store.messages.insert_many(conv.id, [{"content": "hi", "from_me": False, "sender": bad}])
    assert e.value.field == "sender"
    assert conv.history().items == []


@pytest.mark.parametrize("name", ["backup.json", "backup.jsonl", "tables"])
def test_senders_survive_every_export_format(tmp_path, store, name):
    conv = store.conversations.create("Book club")
    store.messages.insert_many(conv.id, [{"content": "hi", "from_me": False, "sender": "Carol", "sent_at": utc(2024, 1, 1)},
                                         {"content": "yo", "from_me": True, "sent_at": utc(2024, 1, 2)}])
    store.export(tmp_path / name, format="csv" if name == "tables" else None)
    with nk.Store.memory() as copy:
        copy.import_(tmp_path / name, format="csv" if name == "tables" else None)
        assert chat(copy, "Book club") == chat(store, "Book club")


def test_a_transcript_names_the_senders_of_a_group_chat(tmp_path, store):
    conv = store.conversations.create("Book club")
    store.messages.insert_many(conv.id, [
        {"content": "Chapter 3?", "from_me": False, "sender": "Carol", "sent_at": utc(2026, 11, 29, 10)},
        {"content": "Yes!", "from_me": True, "sender": "Bob", "sent_at": utc(2026, 11, 29, 10, 1)},
        {"content": "and you?", "from_me": False, "sent_at": utc(2026, 11, 29, 10, 2)},
        {"content": "odd name", "from_me": False, "sender": "Me", "sent_at": utc(2026, 11, 29, 10, 3)},
        {"content": "odder", "from_me": False, "sender": "A: B", "sent_at": utc(2026, 11, 29, 10, 4)}])
    store.export(tmp_path / "club.txt", conversation=conv.id)
    assert (tmp_path / "club.txt").read_text(encoding="utf-8") == (
        "[2026-11-29 10:00:00] Carol: Chapter 3?\n"
        "[2026-11-29 10:01:00] Me: Yes!\n"
        "[2026-11-29 10:02:00] Them: and you?\n"
        "[2026-11-29 10:03:00] Them: odd name\n"      # a sender that would read back as another one
        "[2026-11-29 10:04:00] Them: odder\n")
    assert store.import_(tmp_path / "club.txt").created == 0   # the store it came from
    with nk.Store.memory() as copy:
        copy.import_(tmp_path / "club.txt")
        assert [(m.sender, m.from_me) for m in next(iter(copy.conversations)).history()] == [
            ("Carol", False), (None, True), (None, False), (None, False), (None, False)]


# ---- 10. Telegram Desktop ------------------------------------------------------------------------------

def test_a_telegram_chat_export_is_detected_and_imported(store):
    report = store.import_(TELEGRAM_CHAT)       # .json, told from NotesKit JSON by its content
    assert (report.created, report.skipped) == (1 + 3, 2)
    assert sorted(s.reason for s in report.skips) == [
        "a photo, file or sticker without text: the export does not include it",
        "a service message (joins, pins, calls, ...), not something someone wrote"]
    assert [s.line for s in report.skips] == [62, 75]   # where each message's object starts
    assert chat(store, "Alice Liddell") == [
        ("Alice Liddell", False, "周末有空吗？", utc(2024, 1, 15, 10)),
        # an edited reply, its entities joined; without me= a one-to-one chat's other person is the chat's id
        ("Bob Stone", True, "Saturday works, see https://example.org/park — 10am", utc(2024, 1, 15, 10, 1, 30)),
        ("Alice Liddell", False, "the park\nlast year", utc(2024, 1, 15, 10, 7))]   # a photo's caption
    conv = next(iter(store.conversations))
    assert conv.created_at == utc(2024, 1, 15, 10)


def test_a_full_telegram_export_makes_a_conversation_per_chat_and_knows_who_exported_it(store):
    report = store.import_(TELEGRAM_ALL, format="telegram")
    assert (report.created, report.skipped) == (2 + 5, 1)
    assert chat(store, "Book club") == [
        ("Carol King", False, "Chapter 3 by Friday?", utc(2024, 2, 1, 18, 1)),
        ("Alice Liddell", False, "Yes!", utc(2024, 2, 1, 18, 2)),
        ("Bob Stone", True, "Friday it is", utc(2024, 2, 1, 18, 3)),
        ("Deleted Account", False, "old message of a deleted account", utc(2024, 2, 1, 18, 4))]
    assert chat(store, "Saved Messages") == [("Bob Stone", True, "buy milk", utc(2024, 2, 2, 8))]


def test_me_names_the_exporting_account_by_name_or_id(tmp_path, store):
    group = json.loads(TELEGRAM_ALL.read_text(encoding="utf-8"))["chats"]["list"][0]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(group), encoding="utf-8")
    with pytest.raises(nk.FormatError, match="me="):
        store.import_(path)
    assert store.last_change_seq() == 0
    store.import_(path, me="Carol King")
    assert [m[0] for m in chat(store, "Book club") if m[1]] == ["Carol King"]
    with nk.Store.memory() as other:
        other.import_(path, me="user4815162342")
        assert [m[0] for m in chat(other, "Book club") if m[1]] == ["Alice Liddell"]


def test_a_newer_telegram_export_adds_only_what_is_new(tmp_path, store):
    data = json.loads(TELEGRAM_CHAT.read_text(encoding="utf-8"))
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    store.import_(path)
    seq = store.last_change_seq()
    data["messages"][1]["text"] = "edited again later"     # an edit: the message stays as first imported
    data["messages"].append({"id": 106, "type": "message", "date": "2024-01-16T09:00:00", "from": "Alice Liddell",
                             "from_id": "user4815162342", "text": "new"})
    path.write_text(json.dumps(data), encoding="utf-8")
    report = store.import_(path, tz="Europe/London")    # no date_unixtime: the local date, in tz
    assert (report.created, report.skipped) == (1, 5)
    assert chat(store, "Alice Liddell")[-1] == ("Alice Liddell", False, "new", utc(2024, 1, 16, 9))
    assert store.last_change_seq() > seq


@pytest.mark.parametrize("text, message", [
    ('{"name": "x", "type": "personal_chat", "id": 1, "messages": [', "truncated"),
    ('{"about": "x"}', "neither"),
    ('{"name": "x", "type": "personal_chat", "id": 1, "messages": [{"id": 1, "type": "message", "from": "a", "from_id": "user2", "text": "hi"}]}', "date is missing"),
    ('{"name": "x", "type": "personal_chat", "id": 1, "messages": [{"id": 1, "type": "message", "date_unixtime": "soon", "text": "hi"}]}', "date_unixtime"),
    ('{"name": "x", "type": "personal_chat", "id": 1, "messages": [[1, 2]]}', "JSON object")])
def test_a_broken_telegram_export_is_a_format_error_that_writes_nothing(tmp_path, store, text, message):
    path = tmp_path / "result.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(nk.FormatError, match=message) as e:
        store.import_(path, format="telegram")
    assert e.value.file == str(path) and e.value.line == 1
    assert store.last_change_seq() == 0


# ---- 11. WhatsApp ----------------------------------------------------------------------------------------

def test_an_android_whatsapp_export_is_detected_and_imported(store):
    report = store.import_(ANDROID)     # .txt, told from a transcript by its lines
    assert (report.created, report.skipped) == (1 + 4, 3)
    assert [(s.line, s.reason.split(" ")[1]) for s in report.skips] == [(1, "system"), (7, "photo,"), (10, "system")]
    # 1/13/24 tells the month comes first; the file name tells Alice is the other one: Bob is me
    assert chat(store, "Alice") == [
        ("Alice", False, "Happy new year in two hours!", utc(2023, 12, 31, 22)),
        ("Bob", True, "Same to you 🎉\nsee you at the party\n\nbring snacks", utc(2023, 12, 31, 22, 1)),
        ("Alice", False, "新年快乐", utc(2024, 1, 1, 0, 0)),
        ("Bob", True, "Lunch: at noon?", utc(2024, 1, 13, 9, 15))]


def test_an_ios_whatsapp_group_export_is_imported_in_the_zone_given(tmp_path, store):
    report = store.import_(IOS, format="whatsapp", me="Carol", title="Book club", tz="Europe/Berlin")
    assert (report.created, report.skipped) == (1 + 4, 3)
    assert chat(store, "Book club") == [
        ("Alice", False, "Happy new year in two hours!", utc(2023, 12, 31, 21, 0, 5)),
        ("Bob", False, "Same to you\nsee you at the party", utc(2023, 12, 31, 21, 1, 10)),
        ("Carol", True, "新年快乐", utc(2023, 12, 31, 23)),
        ("Bob", False, "Lunch: at noon?", utc(2024, 1, 13, 8, 15))]


def test_dates_that_could_be_either_order_need_date_order(tmp_path, store):
    path = tmp_path / "chat.txt"
    path.write_text("01/02/24, 10:00 - Alice: hi\n03/04/24, 10:00 - Bob: hello\n", encoding="utf-8")
    with pytest.raises(nk.FormatError, match='date_order="dmy" or date_order="mdy"') as e:
        store.import_(path)
    assert e.value.line == 1 and store.last_change_seq() == 0
    store.import_(path, date_order="dmy")
    assert [m[3] for m in chat(store, "chat")] == [utc(2024, 2, 1, 10), utc(2024, 4, 3, 10)]
    with nk.Store.memory() as other:
        other.import_(path, date_order="mdy")
        assert [m[3] for m in chat(other, "chat")] == [utc(2024, 1, 2, 10), utc(2024, 3, 4, 10)]


def test_a_whatsapp_export_imported_twice_adds_nothing_the_second_time(tmp_path, store):
    store.import_(ANDROID)
    seq = store.last_change_seq()
    copy = tmp_path / "renamed.txt"   # found by its first message, not by its name
    shutil.copy(ANDROID, copy)
    report = store.import_(copy)
    assert (report.created, report.updated) == (0, 0)
    assert store.last_change_seq() == seq


@pytest.mark.parametrize("text, line, message", [
    ("hello\n12/31/23, 10:00 PM - Alice: hi\n", 1, "expected a WhatsApp message line"),
    ("12/31/23, 10:00 PM - Alice: hi\n02/30/24, 10:00 PM - Alice: no such day\n", 2, "not valid"),
    ("12/31/23, 13:00 PM - Alice: hi\n", 1, "not valid")])
def test_a_broken_whatsapp_line_is_a_format_error_naming_it(tmp_path, store, text, line, message):
    path = tmp_path / "chat.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(nk.FormatError, match=message) as e:
        store.import_(path, format="whatsapp")
    assert e.value.line == line and store.last_change_seq() == 0
    assert store.import_(path, format="whatsapp", on_error="skip").errors[0].line == line


def test_chat_options_apply_only_where_they_mean_something(tmp_path, store):
    path = tmp_path / "a.jsonl"
    path.write_text('{"type": "article", "title": "t", "content": "c"}\n', encoding="utf-8")
    for options in ({"me": "Bob"}, {"date_order": "dmy"}, {"title": "x"}):
        with pytest.raises(nk.ValidationError, match="applies to"):
            store.import_(path, **options)
    with pytest.raises(nk.ValidationError, match="date_order must be"):
        store.import_(ANDROID, date_order="ymd")
    with pytest.raises(nk.ValidationError, match="read, not written"):
        store.export(tmp_path / "out.json", format="telegram")
