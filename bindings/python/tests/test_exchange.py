"""Import and export (issue 6), through the public Python API: every format, atomic, idempotent,
streaming, with progress; every malformed input is a FormatError that writes nothing."""
from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noteskit as nk

UID1 = "0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e"
UID2 = "1c7a7d2f-4d2b-4a6f-8e3b-8a2d3c4b5e6f"
T0 = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc)


def article_rows(store: nk.Store) -> List[Tuple[Any, ...]]:
    return sorted((a.uid, a.title, a.content, a.created_at, a.updated_at, a.revision) for a in store.articles)


def draft_rows(store: nk.Store) -> List[Tuple[Any, ...]]:
    uid_of = {a.id: a.uid for a in store.articles}
    return sorted((d.uid, uid_of.get(d.article_id) if d.article_id else None, d.base_revision if d.article_id else None,
                   d.title, d.content, d.created_at, d.updated_at) for d in store.articles.drafts())


def nothing_written(store: nk.Store, seq: int = 0) -> bool:
    return store.articles.count() == 0 and store.articles.drafts() == [] and store.last_change_seq() == seq


def write(path: Path, data: Any) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8", newline="")
    return path


def jsonl(path: Path, *records: Dict[str, Any]) -> Path:
    return write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def article(uid: str = UID1, **fields: Any) -> Dict[str, Any]:
    record = {"type": "article", "uid": uid, "title": "t", "content": "c", "created_at": "2024-05-06T07:08:09.123Z",
              "updated_at": "2024-05-06T07:08:09.123Z", "revision": 1}
    record.update(fields)
    return record


# ---- Round trips --------------------------------------------------------------------------------

# Text of any Unicode the store takes (no NUL, no lone surrogates), with at least one visible character.
_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_text = st.builds(lambda a, b: a + "x" + b, st.text(_chars, max_size=15), st.text(_chars, max_size=40))
_times = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=timezone.utc))
_article = st.fixed_dictionaries({"title": _text, "content": _text, "created_at": _times, "updated_at": _times})


def conversation_rows(store: nk.Store) -> List[Tuple[Any, ...]]:
    return sorted((c.uid, c.title, c.created_at, c.last_activity_at) for c in store.conversations)


def message_rows(store: nk.Store) -> List[Tuple[Any, ...]]:
    return sorted((c.uid, m.uid, m.content, m.from_me, m.sent_at) for c in store.conversations
                  for m in store.messages.history(c.id, limit=1000))


def random_store(records: List[Dict[str, Any]], edits: List[int], drafts: List[Tuple[int, str]],
                 chats: List[Tuple[str, List[Dict[str, Any]]]] = ()) -> nk.Store:
    store = nk.Store.memory()
    for title, messages in chats:
        conversation = store.conversations.create(title)
        store.messages.insert_many(conversation.id, messages)
    made = store.articles.create_many(records) if records else []
    for i in edits:
        if made:
            a = made[i % len(made)]
            store.articles.update(a.id, content=store.articles.get(a.id).content + " edited")
    for i, text in drafts:
        if made and i % 2:
            d = store.articles.edit(made[i % len(made)].id)
        else:
            d = store.articles.new_draft(title=text)
        d.content = text
    return store


_message = st.fixed_dictionaries({"content": _text, "from_me": st.booleans(), "sent_at": _times})
_chats = st.lists(st.tuples(_text, st.lists(_message, max_size=5)), max_size=3)
_store_args = dict(records=st.lists(_article, max_size=6), edits=st.lists(st.integers(0, 10), max_size=4),
                   drafts=st.lists(st.tuples(st.integers(0, 10), _text), max_size=3), chats=_chats)
_settings = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", ["backup.json", "backup.jsonl"])
@_settings
@given(**_store_args)
def test_a_random_store_round_trips_through_json_and_json_lines_with_every_field(tmp_path, name, records, edits, drafts,
                                                                                chats):
    path = tmp_path / name
    with random_store(records, edits, drafts, chats) as source:
        report = source.export(path)
        assert (report.articles, report.drafts) == (source.articles.count(), len(source.articles.drafts()))
        assert (report.conversations, report.messages) == (len(chats), sum(len(m) for _, m in chats))
        with nk.Store.memory() as target:
            assert target.import_(path).created == report.articles + report.drafts + report.conversations + report.messages
            assert article_rows(target) == article_rows(source)
            assert draft_rows(target) == draft_rows(source)
            assert conversation_rows(target) == conversation_rows(source)
            assert message_rows(target) == message_rows(source)


@pytest.mark.parametrize("format", ["csv", "markdown"])
@_settings
@given(records=st.lists(_article, max_size=6), edits=st.lists(st.integers(0, 10), max_size=3))
def test_a_random_store_round_trips_through_csv_and_markdown_with_title_content_and_times(tmp_path, format, records, edits):
    path = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
    with random_store(records, edits, []) as source:
        source.export(path, format=format)
        with nk.Store.memory() as target:
            target.import_(path, format=format)
            assert article_rows(target) == article_rows(source)


@_settings
@given(chats=_chats)
def test_messages_round_trip_through_csv_with_their_conversations(tmp_path, chats):
    path = tmp_path / f"m-{len(list(tmp_path.iterdir()))}.csv"
    with random_store([], [], [], chats) as source:
        source.export(path, table="messages")
        with nk.Store.memory() as target:
            target.import_(path)
            assert message_rows(target) == message_rows(source)
            assert {(c.uid, c.title) for c in target.conversations} == {
                (c.uid, c.title) for c in source.conversations if store_has_messages(source, c.id)}


def store_has_messages(store: nk.Store, conversation_id: int) -> bool:
    return len(store.messages.history(conversation_id, limit=1)) > 0


# Transcript text: no carriage returns (a file's line ends are LF or CRLF throughout).
_transcript_text = st.builds(lambda a, b: a + "x" + b, st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=30),
                             st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=30))
_transcript_message = st.fixed_dictionaries({"content": _transcript_text, "from_me": st.booleans(), "sent_at": _times})


@_settings
@given(messages=st.lists(_transcript_message, max_size=8))
def test_a_random_conversation_round_trips_through_a_transcript(tmp_path, messages):
    path = tmp_path / f"chat-{len(list(tmp_path.iterdir()))}.txt"
    with random_store([], [], [], [("Alice", messages)]) as source:
        assert source.export(path).messages == len(messages)
        with nk.Store.memory() as target:
            assert target.import_(path, title="Alice").created == (len(messages) + 1 if messages else 0)
            def rows(store):
                return sorted((m.content, m.from_me, m.sent_at.replace(microsecond=0)) for c in store.conversations
                              for m in store.messages.history(c.id, limit=1000))
            assert rows(target) == rows(source)
            assert target.import_(path, title="Alice").skipped == len(messages)  # twice = once
            assert rows(target) == rows(source)


def test_combining_marks_at_line_starts_survive_a_transcript(tmp_path, store):
    conversation = store.conversations.create("c")
    texts = ["\u0301x", "a\n\\\u0301b", "a\n\u0301[2024-01-01 00:00:00] Me: b", "a\r\nb\n\u0308"]
    store.messages.insert_many(conversation.id, [{"content": t, "from_me": i % 2 == 0, "sent_at": T0 + timedelta(seconds=i)}
                                                 for i, t in enumerate(texts)])
    store.export(tmp_path / "c.txt")
    with nk.Store.memory() as target:
        target.import_(tmp_path / "c.txt")
        (c,) = target.conversations
        assert [m.content for m in target.messages.history(c.id)] == texts


def test_a_transcript_has_the_shape_chat_apps_write(tmp_path, store):
    conversation = store.conversations.create("Alice")
    conversation.receive("hi\nhow are you?", sent_at=datetime(2024, 3, 4, 5, 6, 7, 890000, tzinfo=timezone.utc))
    conversation.send("[2024-01-01 00:00:00] Me: a line that looks like a header")
    store.export(tmp_path / "alice.txt")
    lines = (tmp_path / "alice.txt").read_text().splitlines()
    assert lines[:2] == ["[2024-03-04 05:06:07] Them: hi", "how are you?"]
    assert lines[2].endswith("] Me: [2024-01-01 00:00:00] Me: a line that looks like a header") and len(lines) == 3


def test_importing_a_transcript_into_the_store_it_came_from_adds_nothing(tmp_path, store):
    conversation = store.conversations.create("Alice")
    store.messages.insert_many(conversation.id, [{"content": "same", "from_me": True, "sent_at": T0}] * 2 +
                               [{"content": "other", "from_me": False, "sent_at": T0}])
    store.export(tmp_path / "Alice.txt")
    report = store.import_(tmp_path / "Alice.txt")
    assert (report.created, report.skipped) == (0, 3) and len(store.messages.history(conversation.id)) == 3
    write(tmp_path / "more.txt", "[2024-05-06 07:08:09] Me: same\n[2024-05-06 07:08:09] Me: same\n"
                                 "[2024-05-06 07:08:09] Me: same\n")
    assert store.import_(tmp_path / "more.txt", conversation=conversation.id).created == 1  # the third "same" is new


def test_a_transcript_from_elsewhere_is_read_leniently_and_strictly_where_it_matters(tmp_path, store):
    path = write(tmp_path / "Bob.txt", "\r\n[2024-05-06 07:08:09] Them: hello\r\n  indented\r\n\r\n"
                                        "[2024-05-06 07:09:00] Me: \\not an escape\r\n")
    assert store.import_(path).created == 3
    (conversation,) = store.conversations
    assert conversation.title == "Bob"
    assert [m.content for m in store.messages.history(conversation.id)] == ["hello\n  indented\n", "\\not an escape"]
    bad = write(tmp_path / "bad.txt", "A header the importer does not know\n[2024-05-06 07:08:09] Me: hi\n")
    with pytest.raises(nk.FormatError, match="expected a message line") as e:
        store.import_(bad)
    assert e.value.line == 1
    with pytest.raises(nk.NotFoundError):
        store.import_(path, conversation=999)
    with pytest.raises(nk.FormatError, match="not valid UTF-8") as e:
        store.import_(write(tmp_path / "u.txt", b"[2024-05-06 07:08:09] Me: caf\xe9\n"))
    assert e.value.line == 1


def test_a_transcript_export_needs_a_conversation_when_there_are_several(tmp_path, store):
    with pytest.raises(nk.ValidationError, match="no conversation"):
        store.export(tmp_path / "x.txt")
    a = store.conversations.create("A")
    store.conversations.create("B")
    with pytest.raises(nk.ValidationError, match="pass conversation=") as e:
        store.export(tmp_path / "x.txt")
    assert e.value.field == "conversation"
    assert store.export(tmp_path / "x.txt", conversation=a).conversations == 1  # a Conversation or its id
    with pytest.raises(nk.NotFoundError):
        store.export(tmp_path / "y.txt", conversation=12345)


def test_a_message_must_follow_its_conversation(tmp_path, store):
    path = jsonl(tmp_path / "m.jsonl", {"type": "message", "uid": UID1, "conversation_uid": UID2, "content": "hi",
                                        "from_me": True, "sent_at": "2024-05-06T07:08:09.123Z"})
    with pytest.raises(nk.FormatError, match="neither in the store nor earlier in the file") as e:
        store.import_(path)
    assert (e.value.line, e.value.field) == (1, "conversation_uid")
    with pytest.raises(nk.FormatError, match="from_me must be true or false"):
        store.import_(jsonl(tmp_path / "b.jsonl", {"type": "conversation", "uid": UID2, "title": "c"},
                            {"type": "message", "conversation_uid": UID2, "content": "hi", "from_me": "yes"}))
    assert store.last_change_seq() == 0


def test_on_conflict_replace_renames_a_conversation_but_never_rewrites_a_message(tmp_path, store):
    conversation = {"type": "conversation", "uid": UID2, "title": "c", "created_at": "2020-01-01T00:00:00Z"}
    message = {"type": "message", "uid": UID1, "conversation_uid": UID2, "content": "first", "from_me": True,
               "sent_at": "2021-01-01T00:00:00Z"}
    store.import_(jsonl(tmp_path / "a.jsonl", conversation, message))
    edited = jsonl(tmp_path / "b.jsonl", dict(conversation, title="renamed"), dict(message, content="second", from_me=False))
    assert store.import_(edited, on_conflict="newer").skipped == 2  # neither has an update time
    report = store.import_(edited, on_conflict="replace")
    assert (report.updated, report.skipped) == (1, 1)
    (c,) = store.conversations
    (m,) = store.messages.history(c.id)
    assert (c.title, m.content, m.from_me, m.uid) == ("renamed", "first", True, UID1)  # messages are immutable
    assert [ch.op for ch in store.changes()][-1:] == ["update"]


def test_a_replaced_article_never_goes_back_to_an_older_revision(tmp_path, store):
    a = store.articles.create(title="t", content="v1")
    for i in range(2, 5):
        store.articles.update(a.id, content=f"v{i}")  # revision 4
    old = jsonl(tmp_path / "old.jsonl", article(uid=a.uid, content="restored", revision=2))
    assert store.import_(old, on_conflict="replace").updated == 1
    b = store.articles.get(a.id)
    assert (b.content, b.revision) == ("restored", 5)  # the next revision, not 2
    assert store.import_(old, on_conflict="replace").skipped == 1  # and importing it again changes nothing
    assert store.articles.get(a.id).revision == 5
    newer = jsonl(tmp_path / "new.jsonl", article(uid=a.uid, content="far ahead", revision=40))
    store.import_(newer, on_conflict="replace")
    assert store.articles.get(a.id).revision == 40  # a higher revision in the file is kept


def test_a_replacing_import_is_seen_by_cached_row_heights(tmp_path, store):
    a = store.articles.create(title="t", content="short")
    store.articles.update(a.id, content="still short")
    with store.layout(width=375) as lay:
        before = lay.article_height(a.id)
        store.import_(jsonl(tmp_path / "long.jsonl", article(uid=a.uid, content="很长的内容。" * 200, revision=1)),
                      on_conflict="replace")
        assert lay.article_height(a.id) > before


def test_a_messages_csv_with_titles_only_makes_each_conversation_once(tmp_path, store):
    path = write(tmp_path / "chat.csv", "conversation_title,from_me,sent_at,content\r\nAlice,true,2024-01-01T00:00:00Z,hi\r\n"
                                        "Alice,false,2024-01-01T00:01:00Z,hello\r\nBob,1,,yo\r\n")
    assert store.import_(path).created == 5
    assert sorted(c.title for c in store.conversations) == ["Alice", "Bob"]
    assert store.import_(path).skipped == 3 and len(list(store.conversations)) == 2


def test_a_big_chat_import_moves_the_conversation_to_its_newest_message(tmp_path, store):
    lines = [{"type": "conversation", "uid": UID2, "title": "c", "created_at": "2020-01-01T00:00:00Z"}]
    lines += [{"type": "message", "conversation_uid": UID2, "content": f"m{i}", "from_me": i % 2 == 0,
               "sent_at": f"2021-01-01T00:00:{i % 60:02d}Z"} for i in range(1500)]
    store.import_(jsonl(tmp_path / "c.jsonl", *lines))
    (conversation,) = store.conversations
    assert conversation.last_activity_at == datetime(2021, 1, 1, 0, 0, 59, tzinfo=timezone.utc)
    assert len(store.messages.history(conversation.id, limit=1000)) == 1000


def test_a_single_csv_file_holds_the_articles(tmp_path, store):
    store.articles.create(title='a, "quoted" title', content="line 1\r\nline 2\n")
    store.export(tmp_path / "notes.csv")
    text = (tmp_path / "notes.csv").read_bytes().decode()
    assert text.startswith("uid,title,content,created_at,updated_at,revision\r\n")
    assert '"a, ""quoted"" title","line 1\r\nline 2\n"' in text
    with nk.Store.memory() as target:
        target.import_(tmp_path / "notes.csv")
        assert article_rows(target) == article_rows(store)


# ---- Idempotence and conflicts ------------------------------------------------------------------

@pytest.mark.parametrize("name, format", [("b.json", None), ("b.jsonl", None), ("b.csv", None), ("md", "markdown"),
                                          ("csvdir", "csv")])
def test_importing_the_same_file_twice_changes_nothing_the_second_time(tmp_path, name, format):
    with nk.Store.memory() as source:
        source.articles.create_many([{"title": f"t{i}", "content": f"c{i}"} for i in range(5)])
        source.export(tmp_path / name, format=format)
    with nk.Store.memory() as target:
        first = target.import_(tmp_path / name, format=format)
        seq, rows = target.last_change_seq(), article_rows(target)
        second = target.import_(tmp_path / name, format=format)
        assert (first.created, second.created, second.updated, second.skipped) == (5, 0, 0, 5)
        assert target.last_change_seq() == seq and article_rows(target) == rows


def test_records_without_a_uid_get_a_stable_one_so_a_second_import_finds_them(tmp_path, store):
    path = write(tmp_path / "hand.csv", "title,content\r\nA,one\r\nA,one\r\nB,two\r\n")
    assert store.import_(path).created == 3  # two identical rows are two articles
    assert store.import_(path).skipped == 3 and store.articles.count() == 3


def test_on_conflict_decides_what_a_stored_uid_gets(tmp_path, store):
    store.import_(jsonl(tmp_path / "old.jsonl", article(title="old", updated_at="2024-01-01T00:00:00Z")))
    newer = jsonl(tmp_path / "new.jsonl", article(title="new", updated_at="2025-01-01T00:00:00Z", revision=7))
    older = jsonl(tmp_path / "older.jsonl", article(title="older", updated_at="2023-01-01T00:00:00Z"))
    assert store.import_(newer).skipped == 1 and store.articles.get(1).title == "old"          # skip (default)
    assert store.import_(older, on_conflict="newer").skipped == 1 and store.articles.get(1).title == "old"
    report = store.import_(newer, on_conflict="newer")
    assert report.updated == 1
    a = store.articles.get(1)
    assert (a.title, a.revision, a.updated_at) == ("new", 7, datetime(2025, 1, 1, tzinfo=timezone.utc))
    assert store.import_(older, on_conflict="replace").updated == 1 and store.articles.get(1).title == "older"
    assert [c.op for c in store.changes()] == ["create", "update", "update"]


@pytest.mark.parametrize("bad", [{"on_conflict": "merge"}, {"on_error": "ignore"}, {"title": "x"}, {"conversation": 1}])
def test_unknown_policies_and_options_are_refused(tmp_path, store, bad):
    path = jsonl(tmp_path / "a.jsonl", article())
    with pytest.raises(nk.ValidationError):
        store.import_(path, **bad)
    with pytest.raises(TypeError, match="colour"):  # options are keyword arguments: a misspelt one is Python's TypeError
        store.import_(path, colour="red")  # type: ignore[call-arg]
    assert nothing_written(store)


def test_export_options_that_do_not_apply_to_the_format_are_refused(tmp_path, store):
    with pytest.raises(nk.ValidationError, match="table applies to a single .csv file"):
        store.export(tmp_path / "a.json", table="messages")
    with pytest.raises(nk.ValidationError, match="conversation applies to transcripts"):
        store.export(tmp_path / "a.jsonl", conversation=1)
    with pytest.raises(nk.ValidationError, match="table must be"):
        store.export(tmp_path / "a.csv", table="drafts")
    assert os.listdir(tmp_path) == []


def test_timestamps_revisions_and_uids_are_kept_as_in_the_file(tmp_path, store):
    store.import_(jsonl(tmp_path / "a.jsonl", article(uid=UID1.upper(), revision=12, created_at="2001-02-03T04:05:06.789+02:00")))
    a = store.articles.get(1)
    assert a.uid == UID1 and a.revision == 12
    assert a.created_at == datetime(2001, 2, 3, 2, 5, 6, 789000, tzinfo=timezone.utc)
    assert a.updated_at == T0


def test_a_draft_keeps_the_article_it_edits_by_uid(tmp_path, store):
    path = jsonl(tmp_path / "a.jsonl", article(revision=3),
                 {"type": "draft", "uid": UID2, "article_uid": UID1, "base_revision": 3, "title": "t", "content": "mine",
                  "created_at": "2024-05-06T07:08:09.123Z", "updated_at": "2024-05-06T07:08:09.123Z"})
    store.import_(path)
    (d,) = store.articles.drafts()
    assert (d.article_id, d.base_revision, d.content) == (1, 3, "mine")
    store.articles.update(1, content="changed meanwhile")
    with pytest.raises(nk.ConflictError):
        d.save()


# ---- Malformed input ----------------------------------------------------------------------------

GOOD = json.dumps(article(uid=UID2))
DOC = json.dumps({k: v for k, v in article(uid=UID2).items() if k != "type"})  # a NotesKit JSON record


@pytest.mark.parametrize("name, data, line, field, message", [
    ("syntax.jsonl", GOOD + '\n{"type": "article", "title": }\n', 2, None, "invalid JSON"),
    ("type.jsonl", GOOD + "\n" + json.dumps(article(title=5)) + "\n", 2, "title", "title must be a string"),
    ("missing.jsonl", GOOD + '\n{"type": "article", "title": "t"}\n', 2, "content", "content is missing"),
    ("blank.jsonl", GOOD + "\n" + json.dumps(article(title="  ")) + "\n", 2, "title", "must not be empty"),
    ("uid.jsonl", json.dumps(article(uid="nope")) + "\n", 1, "uid", "must be a UUID"),
    ("time.jsonl", json.dumps(article(created_at="yesterday")) + "\n", 1, "created_at", "ISO-8601"),
    ("rev.jsonl", json.dumps(article(revision=0)) + "\n", 1, "revision", "≥ 1"),
    ("unknown.jsonl", json.dumps(article(colour="red")) + "\n", 1, "colour", "unknown field"),
    ("kind.jsonl", '{"type": "tweet"}\n', 1, "type", "unknown type"),
    ("dup.jsonl", GOOD + "\n" + GOOD + "\n", 2, "uid", "two articles with uid"),
    ("utf8.jsonl", GOOD.encode() + b'\n{"type": "article", "title": "\xff", "content": "c"}\n', 2, None, "UTF-8"),
    ("truncated.jsonl", GOOD + "\n" + GOOD[:-30], 2, None, "invalid JSON"),
    ("version.jsonl", '{"type": "noteskit", "version": 2}\n' + GOOD + "\n", 1, "version", "unknown NotesKit JSON Lines version 2"),
    ("version.json", '{"format": "noteskit", "version": 2, "articles": []}', 1, None, "unknown NotesKit JSON version 2"),
    ("other.json", '{"format": "evernote", "version": 1}', 1, None, "not a NotesKit JSON document"),
    ("array.json", "[]", 1, None, "not a NotesKit JSON document"),
    ("empty.json", "", 1, None, "the file is empty"),
    ("syntax.json", '{"format": "noteskit", "version": 1,\n"articles": [\n' + DOC + ",\n{\"title\" \"x\"}\n]}", 4, None, "invalid JSON"),
    ("truncated.json", '{"format": "noteskit", "version": 1,\n"articles": [\n' + DOC + ",\n" + DOC[:40], 4, None, "truncated"),
    ("cut.json", '{"format": "noteskit", "version": 1,\n"articles": [\n' + DOC + ",\n", 4, None, "truncated"),
    ("order.json", '{"articles": [], "format": "noteskit", "version": 1}', 1, None, "must come before"),
    ("dup.json", '{"format": "noteskit", "version": 1,\n"articles": [\n' + DOC + ",\n" + DOC + "]}", 4, "uid", "two articles"),
    ("quote.csv", "title,content\r\nok,fine\r\nbad,\"unterminated\r\nmore\r\n", 3, None, "ends inside a quoted field"),
    ("stray.csv", "title,content\r\nbad,un\"quoted\r\n", 2, None, "a quote inside unquoted field"),
    ("fields.csv", "title,content\r\nonly one field\r\n", 2, None, "the row has 1 fields, the header 2"),
    ("column.csv", "title,content,colour\r\n", 1, "colour", "unknown column"),
    ("nocontent.csv", "title\r\nt\r\n", 1, "content", "no \"content\" column"),
    ("utf8.csv", b"title,content\r\nok,\xc3\x28\r\n", 2, "content", "not valid UTF-8"),
    ("time.csv", "title,content,created_at\r\nt,c,2024-13-01T00:00:00Z\r\n", 2, "created_at", "ISO-8601"),
])
def test_each_malformed_file_is_a_format_error_naming_file_line_and_field_and_writes_nothing(
        tmp_path, store, name, data, line, field, message):
    path = write(tmp_path / name, data)
    with pytest.raises(nk.FormatError) as e:
        store.import_(path)
    assert message in str(e.value)
    assert (e.value.file, e.value.line, e.value.field) == (str(path), line, field)
    assert str(path) in str(e.value) and f"line {line}" in str(e.value)
    assert nothing_written(store)


@pytest.mark.parametrize("text, line, field, message", [
    ("---\ntitle: x\n", 1, None, "never closed"),
    ("---\ntitle: x\njust words\n---\n\nbody", 3, None, "not \"key: value\""),
    ("---\ntitle: \"unclosed\n---\n\nbody", 2, "title", "not closed"),
    ("---\ntitle: x\ncreated: last tuesday\n---\n\nbody", 3, "created", "ISO-8601"),
    ("---\ntitle: x\ntitle: y\n---\n\nbody", 3, "title", "given twice"),
    ("---\ntitle: x\nuid: 42\n---\n\nbody", 3, "uid", "must be a UUID"),
    ("---\ntitle: \"  \"\n---\n\nbody", 2, "title", "must not be empty"),
    ("---\ntitle: |\n  block\n---\n\nbody", 2, "title", "block scalars"),
])
def test_malformed_front_matter_is_a_format_error_with_its_line(tmp_path, store, text, line, field, message):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder / "a good one.md", "---\ntitle: fine\n---\n\nbody")
    path = write(folder / "b bad.md", text)
    with pytest.raises(nk.FormatError) as e:
        store.import_(folder, format="markdown")
    assert message in str(e.value)
    assert (e.value.file, e.value.line, e.value.field) == (str(path), line, field)
    assert nothing_written(store)


def test_a_markdown_file_that_is_not_utf8_is_a_format_error(tmp_path, store):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder / "x.md", b"---\ntitle: x\n---\n\nfine\nbad \xff here\n")
    with pytest.raises(nk.FormatError, match="not valid UTF-8") as e:
        store.import_(folder, format="markdown")
    assert e.value.line == 6 and nothing_written(store)


def test_with_on_error_skip_the_good_records_are_imported_and_every_error_is_reported(tmp_path, store):
    path = write(tmp_path / "mixed.jsonl", "\n".join([
        json.dumps(article(uid=UID1)), "not json", json.dumps(article(uid=UID2, title="")), json.dumps(article(uid=UID1)),
        json.dumps(article(uid=None, title="no uid")), "",
    ]))
    report = store.import_(path, on_error="skip")
    assert (report.created, report.updated, report.skipped) == (2, 0, 0)
    assert [(e.line, e.field) for e in report.errors] == [(2, None), (3, "title"), (4, "uid")]
    assert all(isinstance(e, nk.FormatError) and e.file == str(path) for e in report.errors)
    assert sorted(a.title for a in store.articles) == ["no uid", "t"]


def test_article_lines_in_any_shape_json_allows_read_as_the_same_record(tmp_path, store):
    # Article lines are read without building a JSON value when they can be; every shape JSON
    # allows reads the same as the plain one, and a repeated or escaped key goes the general way.
    plain = article(content='line one\nline "two" \\ 三')
    shapes = [
        json.dumps(plain),
        json.dumps(dict(reversed(list(plain.items()))), indent=None, separators=(" , ", " : ")),
        json.dumps(plain, ensure_ascii=True),
        json.dumps(dict(plain, created_at=1714979289123, updated_at=1714979289123)),
        " " + json.dumps(dict(plain, uid=None, revision=None)).replace('"type"', '"\\u0074ype"') + " \t",
    ]
    for k, shape in enumerate(shapes):
        target = nk.Store.memory()
        report = target.import_(write(tmp_path / f"s{k}.jsonl", shape + "\n"))
        assert report.created == 1, shape
        got = next(iter(target.articles))
        assert (got.title, got.content, got.created_at, got.updated_at, got.revision) == ("t", plain["content"], T0, T0, 1), shape
        assert (got.uid == UID1) == (k < 4), shape
    twice = json.dumps(plain)[:-1] + ', "title": "again"}'
    with pytest.raises(nk.FormatError, match="given twice") as e:
        store.import_(write(tmp_path / "twice.jsonl", twice + "\n"))
    assert (e.value.line, e.value.field) == (1, "title") and nothing_written(store)


def test_errors_deep_in_a_big_file_name_their_lines_in_order(tmp_path, store):
    # JSON Lines are parsed a chunk of 1 024 lines ahead of the writes: errors on either side of a
    # chunk's end and in a later chunk keep their lines and their order.
    lines = [json.dumps({"type": "article", "title": f"t{i}", "content": "c"}) for i in range(3000)]
    lines[1023] = "not json"
    lines[1024] = json.dumps({"type": "article", "title": "t", "content": 5})
    lines[7] = lines[2500] = json.dumps(article(uid=UID1))
    path = write(tmp_path / "deep.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(nk.FormatError) as e:
        store.import_(path)
    assert (e.value.line, e.value.field) == (1024, None) and nothing_written(store)
    report = store.import_(path, on_error="skip")
    assert [(e.line, e.field) for e in report.errors] == [(1024, None), (1025, "content"), (2501, "uid")]
    assert report.created == 3000 - len(report.errors)


def test_a_file_of_nothing_but_errors_stops_the_import_even_with_on_error_skip(tmp_path, store):
    path = write(tmp_path / "noise.jsonl", json.dumps(article()) + "\n" + "garbage\n" * 100_001)
    with pytest.raises(nk.FormatError, match="more than 100000 malformed records"):
        store.import_(path, on_error="skip")
    assert nothing_written(store)


def test_a_truncated_document_fails_even_with_on_error_skip(tmp_path, store):
    path = write(tmp_path / "cut.json", '{"format": "noteskit", "version": 1, "articles": [' + DOC)
    with pytest.raises(nk.FormatError, match="truncated"):
        store.import_(path, on_error="skip")
    assert nothing_written(store)


def test_a_missing_file_and_an_unknown_format_are_clear_errors(tmp_path, store):
    with pytest.raises(nk.NotFoundError, match="No such file"):
        store.import_(tmp_path / "absent.json")
    write(tmp_path / "notes.docx", "x")
    with pytest.raises(nk.ValidationError, match="cannot tell the format") as e:
        store.import_(tmp_path / "notes.docx")
    assert e.value.field == "format"
    with pytest.raises(nk.ValidationError, match="format must be one of"):
        store.import_(tmp_path / "notes.docx", format="docx")
    with pytest.raises(nk.ValidationError, match="is a folder"):
        store.import_(tmp_path)
    with pytest.raises(nk.ValidationError, match="reads one file"):
        store.import_(tmp_path, format="jsonl")


# ---- Progress and cancel ------------------------------------------------------------------------

def big_jsonl(path: Path, n: int) -> Path:
    return write(path, "".join(json.dumps({"type": "article", "title": f"t{i}", "content": "c" * 50}) + "\n" for i in range(n)))


def test_progress_is_called_regularly_up_to_the_total(tmp_path, store):
    path = big_jsonl(tmp_path / "big.jsonl", 3000)
    calls: List[Tuple[int, int]] = []
    store.import_(path, progress=lambda done, total: calls.append((done, total)))
    size = path.stat().st_size
    assert calls[0] == (0, size) and calls[-1] == (size, size) and len(calls) >= 5
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_returning_false_from_progress_cancels_and_writes_nothing(tmp_path, store):
    path = big_jsonl(tmp_path / "big.jsonl", 3000)
    calls = []

    def progress(done: int, total: int) -> bool:
        calls.append(done)
        return len(calls) < 3

    with pytest.raises(nk.CancelledError):
        store.import_(path, progress=progress)
    assert len(calls) == 3 and nothing_written(store)


def test_an_exception_in_progress_cancels_and_is_raised(tmp_path, store):
    def progress(done: int, total: int) -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        store.import_(big_jsonl(tmp_path / "big.jsonl", 10), progress=progress)
    assert nothing_written(store)


def test_a_progress_callback_that_calls_the_store_gets_an_error_not_a_deadlock(tmp_path, store):
    with pytest.raises(nk.InvalidArgumentError, match="progress callback must not call the store"):
        store.import_(big_jsonl(tmp_path / "big.jsonl", 10), progress=lambda d, t: store.articles.count())
    assert nothing_written(store)


def test_a_big_import_reaches_subscribers_in_pages(tmp_path, store):
    seen: List[int] = []
    with store.subscribe(lambda changes: seen.append(len(changes))):
        store.import_(big_jsonl(tmp_path / "big.jsonl", 2500))
    assert sum(seen) == 2500 and max(seen) <= 1000


def test_a_big_bulk_send_reaches_subscribers_in_pages_too(store):
    conversation = store.conversations.create("c")
    seen: List[int] = []
    with store.subscribe(lambda changes: seen.append(len(changes))):
        store.messages.insert_many(conversation.id, [{"content": f"m{i}", "from_me": True} for i in range(2500)])
    assert sum(seen) == 2500 and max(seen) <= 1000
    assert [c.seq for c in store.changes(since=0, limit=2)] == [1, 2]


# ---- Markdown -----------------------------------------------------------------------------------

HOSTILE_TITLES = ["../../escape", "/etc/passwd", "a/b\\c", "..", ".", "...", " .hidden", "CON", "nul.txt", "Com1",
                  "lpt9.md", "x" * 400, "新年" * 150, "tab\there\nnewline", "a:b*c?d\"e<f>g|h", "same", "SAME", "Same",
                  "\u202eevil", "~", "-rf", ".\u0301hidden", "\u0301.x", "CON.\u0308txt", "\"\u0301quoted\"", " \u0301 "]


def test_no_title_can_write_outside_the_markdown_folder(tmp_path, store):
    store.articles.create_many([{"title": t, "content": f"body {i}"} for i, t in enumerate(HOSTILE_TITLES)])
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "export"
    report = store.export(target, format="markdown")
    assert report.files == len(HOSTILE_TITLES)
    assert sorted(p.name for p in outside.iterdir()) == ["export"]  # nothing beside it, no temp left
    names = os.listdir(target)
    assert len(names) == len(HOSTILE_TITLES) == len({n.lower() for n in names})
    for name in names:
        path = target / name
        assert path.is_file() and not path.is_symlink() and path.resolve().parent == target.resolve()
        assert name.endswith(".md") and not name.startswith(".") and "/" not in name and "\\" not in name
        assert len(name.encode()) <= 255 and name.split(".")[0].upper() not in {"CON", "NUL", "COM1", "LPT9"}
    with nk.Store.memory() as back:
        back.import_(target, format="markdown")
        assert sorted(a.title for a in back.articles) == sorted(HOSTILE_TITLES)


def test_exporting_into_a_folder_that_is_not_empty_is_refused_and_writes_nothing(tmp_path, store):
    store.articles.create(title="t", content="c")
    folder = tmp_path / "busy"
    folder.mkdir()
    write(folder / "mine.txt", "keep me")
    with pytest.raises(nk.ValidationError, match="not empty"):
        store.export(folder, format="markdown")
    assert os.listdir(folder) == ["mine.txt"] and sorted(os.listdir(tmp_path)) == ["busy"]
    (tmp_path / "empty").mkdir()
    assert store.export(tmp_path / "empty", format="markdown").files == 1


def test_an_export_replaces_a_file_whole_and_leaves_no_temporary_file(tmp_path, store):
    write(tmp_path / "b.json", "old")
    store.articles.create(title="t", content="c")
    store.export(tmp_path / "b.json")
    assert json.loads((tmp_path / "b.json").read_text())["format"] == "noteskit"
    assert os.listdir(tmp_path) == ["b.json"]
    with pytest.raises(nk.NotFoundError):
        store.export(tmp_path / "no" / "such" / "folder.json")


def test_markdown_front_matter_uses_joplins_keys_and_reads_joplin_files(tmp_path, store):
    a = store.articles.create(title='He said "hi": ok', content="# Heading\n\nbody")
    store.export(tmp_path / "out", format="markdown")
    text = (tmp_path / "out" / "He said _hi__ ok.md").read_text()
    assert text == (f'---\ntitle: "He said \\"hi\\": ok"\nuid: {a.uid}\nupdated: {a.updated_at.isoformat(timespec="milliseconds")[:-6]}Z\n'
                    f'created: {a.created_at.isoformat(timespec="milliseconds")[:-6]}Z\nrevision: 1\n---\n\n# Heading\n\nbody')
    joplin = tmp_path / "joplin"
    joplin.mkdir()
    write(joplin / "Trip.md", "---\ntitle: Trip to Kyoto\nupdated: 2021-04-05 10:11:12Z\ncreated: 2021-04-01 09:00:00Z\n"
                              "author: me\ntags:\n  - travel\n  - japan\nlatitude: 35.0116\n---\n\nTemples.\n")
    write(joplin / "plain.md", "No front matter here.\n")
    sub = joplin / "sub"
    sub.mkdir()
    write(sub / "nested.markdown", "---\ntitle: 'It''s nested'\n---\nno blank line\n")
    write(joplin / "ignored.txt", "not markdown")
    with nk.Store.memory() as target:
        assert target.import_(joplin, format="markdown").created == 3
        got = {x.title: x for x in target.articles}
        assert set(got) == {"Trip to Kyoto", "plain", "It's nested"}
        trip = got["Trip to Kyoto"]
        assert trip.content == "Temples.\n" and trip.created_at == datetime(2021, 4, 1, 9, tzinfo=timezone.utc)
        assert trip.updated_at == datetime(2021, 4, 5, 10, 11, 12, tzinfo=timezone.utc)
        assert got["plain"].content == "No front matter here.\n" and got["It's nested"].content == "no blank line\n"
        assert target.import_(joplin, format="markdown").skipped == 3  # uids derived from the paths


def test_a_markdown_import_does_not_follow_links_out_of_the_folder(tmp_path, store):
    secret = tmp_path / "secret"
    secret.mkdir()
    write(secret / "private.md", "---\ntitle: private\n---\n\nsecret")
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder / "mine.md", "mine")
    os.symlink(secret, folder / "link-to-folder")
    os.symlink(secret / "private.md", folder / "link.md")
    report = store.import_(folder, format="markdown")
    assert report.created == 1 and report.skipped_links == ("link-to-folder", "link.md")
    assert [a.title for a in store.articles] == ["mine"]


def test_a_single_markdown_file_imports_as_one_article(tmp_path, store):
    path = write(tmp_path / "one.md", "---\ntitle: One\n---\n\nbody")
    assert store.import_(path).created == 1 and store.articles.get(1).title == "One"
