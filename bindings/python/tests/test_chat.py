"""Chat acceptance: conversations, send and receive, history paged backward, bulk insert, change feed."""
from __future__ import annotations

import dataclasses
import threading
import uuid
from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk
from feed_reading import every_change


def contents(page) -> list:
    return [m.content for m in page]


def whole_history(conv, limit: int = 50) -> list:
    """Every message of a conversation, oldest first, by paging back from the newest."""
    pages = []
    before = None
    while True:
        page = conv.history(limit=limit, before=before)
        pages.append(page.items)
        if not page.has_more:
            break
        before = page.next_cursor
    return [m for items in reversed(pages) for m in items]


# ---- send and receive -------------------------------------------------------------------------

def test_a_sent_message_appears_last_in_the_history_as_sent_by_me(store):
    conv = store.conversations.create("Alice")
    conv.receive("hi")
    sent = conv.send("hello")
    assert sent.from_me is True and sent.content == "hello" and sent.conversation_id == conv.id
    history = conv.history()
    assert history[-1] == sent
    assert contents(history) == ["hi", "hello"]
    assert store.messages.get(sent.id) == sent


@pytest.mark.parametrize("blank", ["", " ", "\n\t ", "\u3000", "\u00a0\u2003"])
def test_an_empty_send_is_refused_and_the_history_is_unchanged(store, blank):
    conv = store.conversations.create("Alice")
    conv.send("first")
    before = conv.history()
    seq = store.last_change_seq()
    with pytest.raises(nk.ValidationError) as e:
        conv.send(blank)
    assert e.value.field == "content"
    with pytest.raises(nk.ValidationError):
        conv.receive(blank)
    assert conv.history() == before
    assert store.last_change_seq() == seq


def test_received_messages_are_not_from_me(store):
    conv = store.conversations.create("Bob")
    got = conv.receive("how are you?")
    assert got.from_me is False
    assert [m.from_me for m in conv.history()] == [False]


def test_text_is_stored_exactly_as_given(store):
    conv = store.conversations.create("Alice")
    texts = ["  leading and trailing  ", "line one\nline two\n", "\ttab", "今天天气真好 🌤️", "a\u0301 e\u0301", "%_*\\'\""]
    sent = [conv.send(t) for t in texts]
    assert [m.content for m in sent] == texts
    assert contents(conv.history()) == texts
    assert [store.messages.get(m.id).content for m in sent] == texts


def test_an_imported_message_takes_its_place_in_history_by_sent_at(store):
    conv = store.conversations.create("Alice")
    conv.send("now")
    old = conv.receive("from last year", sent_at=datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc))
    assert old.sent_at == datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    naive = conv.receive("naive is UTC", sent_at=datetime(2025, 1, 3))
    assert naive.sent_at == datetime(2025, 1, 3, tzinfo=timezone.utc)
    text = conv.receive("as text", sent_at="2025-01-04T08:00:00+08:00")
    assert text.sent_at == datetime(2025, 1, 4, tzinfo=timezone.utc)
    assert contents(conv.history()) == ["from last year", "naive is UTC", "as text", "now"]


def test_a_bad_sent_at_is_refused_and_writes_nothing(store):
    conv = store.conversations.create("Alice")
    for bad in ("yesterday", "2025-13-01T00:00:00Z", "2025-01-01"):
        with pytest.raises(nk.ValidationError) as e:
            conv.receive("x", sent_at=bad)
        assert e.value.field == "sent_at"
    with pytest.raises(nk.InvalidArgumentError):
        conv.receive("x", sent_at=12345)  # type: ignore[arg-type]
    assert len(conv.history()) == 0


# ---- conversations ----------------------------------------------------------------------------

def test_several_conversations_never_see_each_others_messages(store):
    alice = store.conversations.create("Alice")
    bob = store.conversations.create("Bob")
    for i in range(30):
        (alice if i % 3 else bob).send(f"m{i}")
    bob.receive("only bob")
    a, b = whole_history(alice, limit=7), whole_history(bob, limit=7)
    assert {m.conversation_id for m in a} == {alice.id}
    assert {m.conversation_id for m in b} == {bob.id}
    assert len(a) == 20 and len(b) == 11
    assert contents(b)[-1] == "only bob"


def test_deleting_a_conversation_removes_its_messages_and_leaves_the_others(store):
    alice = store.conversations.create("Alice")
    bob = store.conversations.create("Bob")
    gone = [alice.send(f"a{i}") for i in range(5)]
    kept = [bob.send(f"b{i}") for i in range(3)]
    seq = store.last_change_seq()
    alice.delete()
    with pytest.raises(nk.NotFoundError):
        store.conversations.get(alice.id)
    for m in gone:
        with pytest.raises(nk.NotFoundError):
            store.messages.get(m.id)
    assert whole_history(bob) == kept
    assert [c.id for c in store.conversations.list()] == [bob.id]
    # One "delete" per message (oldest first), then the conversation, in one commit.
    changes = store.changes(since=seq)
    assert [(c.entity, c.op, c.id) for c in changes] == (
        [("message", "delete", m.id) for m in gone] + [("conversation", "delete", alice.id)])
    with pytest.raises(nk.NotFoundError):
        store.conversations.delete(alice.id)


def test_a_conversation_is_created_read_renamed_and_listed(store):
    conv = store.conversations.create("Alice")
    assert conv.title == "Alice" and conv.created_at == conv.last_activity_at
    assert uuid.UUID(conv.uid).version == 4
    assert store.conversations.get(conv.id) == conv
    renamed = conv.rename("Alice Liddell")
    assert renamed.title == "Alice Liddell" and conv.title == "Alice"  # records are frozen
    assert renamed.last_activity_at == conv.last_activity_at
    assert store.conversations.get(conv.id) == renamed
    assert renamed.rename("Alice Liddell") == renamed
    with pytest.raises(AttributeError):
        conv.title = "x"  # type: ignore[misc]


def test_a_conversation_is_a_plain_record_for_dataclass_tools(store):
    conv = store.conversations.create("Alice")
    assert dataclasses.asdict(conv) == {"id": conv.id, "uid": conv.uid, "title": "Alice", "created_at": conv.created_at,
                                        "last_activity_at": conv.last_activity_at}
    assert "store" not in repr(conv) and hash(conv) == hash(store.conversations.get(conv.id))
    copy = dataclasses.replace(conv, title="copy")
    with pytest.raises(nk.InvalidArgumentError):
        copy.send("unbound")


@pytest.mark.parametrize("title", ["", "   ", "\n", "x" * 1001])
def test_a_blank_or_over_long_title_is_refused_and_writes_nothing(store, title):
    with pytest.raises(nk.ValidationError) as e:
        store.conversations.create(title)
    assert e.value.field == "title"
    conv = store.conversations.create("ok")
    with pytest.raises(nk.ValidationError):
        conv.rename(title)
    assert [c.title for c in store.conversations.list()] == ["ok"]


def test_the_list_shows_the_most_recent_activity_first(store):
    alice = store.conversations.create("Alice")
    bob = store.conversations.create("Bob")
    carol = store.conversations.create("Carol")
    assert [c.title for c in store.conversations.list()] == ["Carol", "Bob", "Alice"]
    alice.send("hello")
    assert [c.title for c in store.conversations.list()] == ["Alice", "Carol", "Bob"]
    bob.receive("old news", sent_at=datetime(2020, 1, 1))  # an older message does not move it up
    carol.rename("Caroline")  # nor does a rename
    assert [c.title for c in store.conversations.list()] == ["Alice", "Caroline", "Bob"]
    assert store.conversations.get(alice.id).last_activity_at == alice.history()[-1].sent_at


def test_the_conversation_list_pages_with_a_cursor(store):
    convs = [store.conversations.create(f"c{i}") for i in range(25)]
    page = store.conversations.list(limit=10)
    seen = list(page)
    while page.has_more:
        page = store.conversations.list(limit=10, after=page.next_cursor)
        seen += page.items
    assert [c.id for c in seen] == [c.id for c in reversed(convs)]
    assert [c.id for c in store.conversations] == [c.id for c in seen]


# ---- history ----------------------------------------------------------------------------------

def test_history_pages_backward_from_the_newest_oldest_first_within_a_page(store):
    conv = store.conversations.create("Alice")
    sent = [conv.send(f"m{i:03}") for i in range(120)]
    first = conv.history(limit=50)
    assert contents(first) == [f"m{i:03}" for i in range(70, 120)] and first.has_more
    second = conv.history(limit=50, before=first.next_cursor)
    assert contents(second) == [f"m{i:03}" for i in range(20, 70)] and second.has_more
    last = conv.history(limit=50, before=second.next_cursor)
    assert contents(last) == [f"m{i:03}" for i in range(20)]
    assert not last.has_more and last.next_cursor is None
    assert whole_history(conv, limit=13) == sent
    assert conv.history(limit=120).has_more is False


def test_an_empty_conversation_has_an_empty_history(store):
    page = store.conversations.create("Alice").history()
    assert page.items == [] and not page.has_more and page.next_cursor is None


def test_messages_sharing_one_instant_page_by_id(store):
    conv = store.conversations.create("Alice")
    at = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    made = store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": i % 2 == 0, "sent_at": at}
                                                for i in range(95)])
    assert whole_history(conv, limit=10) == made


def test_paging_back_while_another_thread_sends_yields_each_old_message_exactly_once(store):
    conv = store.conversations.create("Alice")
    old = store.messages.insert_many(conv.id, [{"content": f"old {i}", "from_me": i % 2 == 0} for i in range(1000)])
    stop = threading.Event()
    sent = []

    def keep_sending() -> None:
        while not stop.is_set():
            sent.append(conv.send(f"new {len(sent)}"))

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        while not sent:  # paging starts once the other thread is sending
            stop.wait(0.001)
        seen = []
        before = None
        while True:
            page = conv.history(limit=10, before=before)
            seen.extend(page.items)
            if not page.has_more:
                break
            before = page.next_cursor
    finally:
        stop.set()
        sender.join()
    seen_old = [m for m in seen if m.content.startswith("old")]
    assert sorted(m.id for m in seen_old) == [m.id for m in old]  # each old message exactly once
    assert len({m.id for m in seen}) == len(seen)  # nothing twice at all
    assert whole_history(conv, limit=200) == old + sent


def test_a_history_limit_out_of_range_is_refused(store):
    conv = store.conversations.create("Alice")
    for limit in (0, -1, 1001):
        with pytest.raises(nk.ValidationError) as e:
            conv.history(limit=limit)
        assert e.value.field == "limit"


# ---- bulk insert ------------------------------------------------------------------------------

def test_insert_many_adds_every_record_in_order_in_one_transaction(store):
    conv = store.conversations.create("Import")
    at = datetime(2023, 3, 4, 5, 6, 7, 890000, tzinfo=timezone.utc)
    given = str(uuid.uuid4())
    seq = store.last_change_seq()
    made = store.messages.insert_many(conv.id, [
        {"content": "one", "from_me": True},
        {"content": "two", "from_me": False, "sent_at": at, "uid": given.upper()},
        {"content": "three", "from_me": True, "sent_at": "2023-03-04T05:06:08Z"},
    ])
    assert [(m.content, m.from_me) for m in made] == [("one", True), ("two", False), ("three", True)]
    assert made[1].uid == given and made[1].sent_at == at
    assert made == [store.messages.get(m.id) for m in made]
    assert contents(conv.history()) == ["two", "three", "one"]
    assert [(c.entity, c.op, c.id) for c in store.changes(since=seq)] == [("message", "create", m.id) for m in made]
    assert store.messages.insert_many(conv.id, []) == []
    assert store.messages.insert_many(conv.id, iter([{"content": "gen", "from_me": True}]))[0].content == "gen"


def test_new_message_uids_are_time_ordered(store):
    conv = store.conversations.create("Alice")
    made = store.messages.insert_many(conv.id, [{"content": str(i), "from_me": True} for i in range(50)])
    made.append(conv.send("later"))
    uids = [uuid.UUID(m.uid) for m in made]
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in uids)
    assert [m.uid for m in made[:50]] == sorted(m.uid for m in made[:50])  # a batch counts up
    assert made[-1].uid[:13] >= made[0].uid[:13]  # the leading 48 bits are the time in ms
    assert len(set(uids)) == len(uids)


@pytest.mark.parametrize("bad, field", [
    ({"content": "  ", "from_me": True}, "content"),
    ({"content": "x"}, "from_me"),
    ({"content": "x", "from_me": 1}, "from_me"),
    ({"content": 5, "from_me": True}, "content"),
    ({"content": "x", "from_me": True, "uid": "not-a-uuid"}, "uid"),
    ({"content": "x", "from_me": True, "sent_at": "soon"}, "sent_at"),
    ({"content": "x", "from_me": True, "colour": "red"}, "colour"),
    ({"content": "x\x00y", "from_me": True}, "content"),
])
def test_one_bad_record_refuses_the_whole_batch_and_names_it(store, bad, field):
    conv = store.conversations.create("Import")
    conv.send("before")
    seq = store.last_change_seq()
    records = [{"content": "fine", "from_me": True}, {"content": "fine too", "from_me": False}, bad]
    with pytest.raises(nk.ValidationError) as e:
        store.messages.insert_many(conv.id, records)
    assert e.value.field == field and e.value.line == 2
    assert contents(conv.history()) == ["before"]
    assert store.last_change_seq() == seq


def test_a_duplicate_uid_refuses_the_whole_batch(store):
    conv = store.conversations.create("Import")
    first = conv.send("first")
    with pytest.raises(nk.ConflictError) as e:
        store.messages.insert_many(conv.id, [{"content": "a", "from_me": True},
                                             {"content": "b", "from_me": True, "uid": first.uid}])
    assert e.value.field == "uid" and e.value.line == 1
    assert contents(conv.history()) == ["first"]


def test_a_large_batch_is_written_whole_and_fed_in_order(store):
    conv = store.conversations.create("Import")
    seq = store.last_change_seq()
    notified: list = []
    with store.subscribe(notified.extend):
        made = store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": i % 3 == 0} for i in range(150)])
    assert [m.id for m in made] == list(range(made[0].id, made[0].id + 150))
    assert made == whole_history(conv, limit=40)
    changes = store.changes(since=seq)
    assert notified == changes
    assert [(c.entity, c.op, c.id, c.uid) for c in changes] == [("message", "create", m.id, m.uid) for m in made]
    assert [c.seq for c in changes] == list(range(seq + 1, seq + 151))


def test_a_duplicate_uid_deep_in_a_large_batch_is_named_and_nothing_is_written(store):
    conv = store.conversations.create("Import")
    first = conv.send("first")
    records = [{"content": f"m{i}", "from_me": True} for i in range(200)]
    records[100]["uid"] = first.uid
    with pytest.raises(nk.ConflictError) as e:
        store.messages.insert_many(conv.id, records)
    assert e.value.field == "uid" and e.value.line == 100
    twice = str(uuid.uuid4())
    records[100]["uid"], records[130]["uid"] = twice, twice
    with pytest.raises(nk.ConflictError) as e:
        store.messages.insert_many(conv.id, records)
    assert e.value.line == 130
    assert contents(whole_history(conv)) == ["first"]


def test_records_that_are_not_mappings_are_refused(store):
    conv = store.conversations.create("Import")
    with pytest.raises(nk.NotesError):
        store.messages.insert_many(conv.id, ["content"])  # type: ignore[list-item]
    with pytest.raises(nk.ValidationError, match="record 0: content must be a string, got bytes") as e:
        store.messages.insert_many(conv.id, [{"content": b"bytes", "from_me": True}])
    assert (e.value.field, e.value.line) == ("content", 0)
    assert len(conv.history()) == 0


# ---- messages ---------------------------------------------------------------------------------

def test_a_message_is_deleted_alone(store):
    conv = store.conversations.create("Alice")
    a, b, c = conv.send("a"), conv.send("b"), conv.send("c")
    seq = store.last_change_seq()
    store.messages.delete(b.id)
    assert conv.history().items == [a, c]
    with pytest.raises(nk.NotFoundError):
        store.messages.get(b.id)
    with pytest.raises(nk.NotFoundError):
        store.messages.delete(b.id)
    assert [(x.entity, x.op, x.id, x.uid) for x in store.changes(since=seq)] == [("message", "delete", b.id, b.uid)]
    assert store.conversations.get(conv.id).last_activity_at == c.sent_at  # activity does not move back


def test_message_ids_are_never_reused_after_a_delete(store):
    conv = store.conversations.create("Alice")
    last = conv.send("last")
    store.messages.delete(last.id)
    assert conv.send("next").id > last.id


def test_message_ids_are_never_reused_after_bulk_deletes_of_the_newest(store):
    alice, bob = store.conversations.create("Alice"), store.conversations.create("Bob")
    made = store.messages.insert_many(alice.id, [{"content": f"m{i}", "from_me": True} for i in range(100)])
    store.messages.delete_many([m.id for m in made[-10:]])
    again = store.messages.insert_many(bob.id, [{"content": f"n{i}", "from_me": False} for i in range(70)])
    assert again[0].id == made[-1].id + 1 and [m.id for m in again] == list(range(again[0].id, again[0].id + 70))
    store.messages.delete_range(bob.id, None, None)
    assert alice.send("after a range").id == again[-1].id + 1
    newest = bob.send("the newest")
    bob.delete()
    assert alice.send("after a conversation").id == newest.id + 1


def test_a_reimport_after_deleting_the_newest_messages_numbers_them_anew(tmp_path):
    with nk.Store.open(tmp_path / "s.db") as store:
        conv = store.conversations.create("Alice")
        made = store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": True} for i in range(300)])
        store.export(tmp_path / "backup.json")
        store.messages.delete_many([m.id for m in made[-150:]])
        # The first 150 are there (skipped: bulk inserts meet them), the last 150 come back.
        store.import_(tmp_path / "backup.json")
        back = store.messages.history(conv.id, limit=150).items
        assert [m.uid for m in back] == [m.uid for m in made[-150:]]
        assert [m.id for m in back] == list(range(made[-1].id + 1, made[-1].id + 151))


def test_a_store_from_before_plain_message_ids_keeps_its_deleted_ids_given_out(db_path):
    import sqlite3
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("Alice")
        sent = [conv.send(f"m{i}") for i in range(3)]
        conv.rename("Alice")  # closes the run of sends: feed rows, as an older NotesKit wrote them
    with sqlite3.connect(db_path) as db:  # as before migration 0008: AUTOINCREMENT's counter says 3 ids were given out
        db.execute("DELETE FROM messages WHERE id = ?", (sent[2].id,))
        db.execute("DELETE FROM meta WHERE key = 'message_id_floor'")
        db.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('messages', ?)", (sent[2].id,))
        db.execute("DELETE FROM migrations WHERE name = '0008_messages_numbered_by_floor'")
    with nk.Store.open(db_path) as store:
        assert [m.id for m in store.messages.history(conv.id).items] == [sent[0].id, sent[1].id]
        assert conv.id == store.conversations.get(conv.id).id
        assert store.messages.send(conv.id, "next").id == sent[2].id + 1
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM sqlite_sequence WHERE name = 'messages'").fetchone() == (0,)
        assert "AUTOINCREMENT" not in db.execute("SELECT sql FROM sqlite_schema WHERE name = 'messages'").fetchone()[0]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


# ---- change feed ------------------------------------------------------------------------------

def test_the_change_feed_covers_conversations_and_messages(store):
    seen = []
    with store.subscribe(seen.extend):
        conv = store.conversations.create("Alice")
        m = conv.send("hello")
        r = conv.receive("hi")
        conv.rename("Alice L.")
        store.messages.delete(m.id)
        conv.delete()
    expected = [("conversation", "create", conv.id), ("message", "create", m.id), ("message", "create", r.id),
                ("conversation", "update", conv.id), ("message", "delete", m.id), ("message", "delete", r.id),
                ("conversation", "delete", conv.id)]
    assert [(c.entity, c.op, c.id) for c in seen] == expected
    assert [(c.entity, c.op, c.id) for c in store.changes()] == expected
    assert all(c.revision is None for c in seen)


def test_sends_interleaved_with_other_writes_keep_the_feed_whole_and_in_order(store):
    # Sends (which a SQLite store keeps as a lazy run, not feed rows) between every other kind of
    # write: the feed read back equals what the subscriber was told, one change per seq, and every
    # `since` and `limit` hands out exactly the changes after it.
    seen = []
    with store.subscribe(seen.extend):
        a, b = store.conversations.create("Alice"), store.conversations.create("Bob")
        sent = [a.send("one"), b.send("two"), a.receive("three"), a.send("four")]
        art = store.articles.create(title="t", content="c")
        sent += [b.send("five"), b.send("six")]
        store.messages.delete(sent[1].id)  # a message of the open run
        sent += [a.send("seven")]
        a.receive("old", sent_at=datetime(2020, 1, 1, tzinfo=timezone.utc))  # not at its write's time
        sent += [a.send("eight")]
        store.messages.insert_many(b.id, [{"content": f"bulk {i}", "from_me": i % 2 == 0} for i in range(5)])
        b.rename("Bob B.")
        sent += [b.send("nine")]
        draft = store.articles.edit(art.id)
        draft.title = "t2"
        draft.save()
        sent += [a.send("ten"), a.send("eleven")]
        b.delete()  # its messages (some of the open run) with it
        sent += [a.send("twelve")]
    assert len(seen) == 33
    assert [c.seq for c in seen] == list(range(seen[0].seq, seen[0].seq + len(seen)))
    assert every_change(store) == seen
    for limit in (1, 2, 3, 7):
        assert every_change(store, limit=limit) == seen
    for k in range(len(seen)):
        assert store.changes(since=seen[k].seq, limit=3) == seen[k + 1:k + 4]
    assert store.last_change_seq() == seen[-1].seq
    creates = {c.id: c for c in seen if c.entity == "message" and c.op == "create"}
    for m in sent:
        assert creates[m.id].uid == m.uid and creates[m.id].at == m.sent_at
    ops = [(c.entity[0], c.op[0]) for c in seen]
    assert ops == ([("c", "c")] * 2 + [("m", "c")] * 4 + [("a", "c")] + [("m", "c")] * 2 + [("m", "d")] + [("m", "c")] * 8
                   + [("c", "u"), ("m", "c"), ("a", "u")] + [("m", "c")] * 2 + [("m", "d")] * 8 + [("c", "d"), ("m", "c")])


def test_chat_survives_reopening_the_file(db_path):
    with nk.Store.open(db_path) as store:
        conv = store.conversations.create("Alice")
        sent = [conv.send("one"), conv.receive("two")]
    with nk.Store.open(db_path) as store:
        conv = store.conversations.get(conv.id)
        assert conv.history().items == sent
        assert conv.send("three").id > sent[-1].id
