"""Hostile input to chat, through the public API and straight at the C ABI: the right NotesError
subclass (or status), and nothing changed."""
from __future__ import annotations

from ctypes import byref, c_void_p

import pytest

from noteskit.selection import NO_TIME
import noteskit as nk
from conftest import last_error, page_out
from noteskit import _ffi

from arrow_structs import Arrow

NK_E_INVALID_ARGUMENT, NK_E_VALIDATION, NK_E_NOT_FOUND = 1, 2, 3
TEN_MB = "x" * 10_000_000


def records(content: bytes):
    """A one-message Arrow stream (content, from_me) built by hand, holding `content` as it is."""
    arrow = Arrow()
    schema, batch = arrow.table([(b"content", b"u", arrow.strings([content])), (b"from_me", b"b", [None, b"\x01"])], 1)
    stream = arrow.stream(schema, [batch])
    _kept.append(arrow)
    return stream


_kept: list = []


@pytest.fixture
def chat(store):
    """A store with one conversation holding one message; `unchanged()` checks nothing moved."""
    conv = store.conversations.create("Alice")
    conv.send("hello")
    seq = store.last_change_seq()
    history = conv.history()
    titles = [c.title for c in store.conversations.list()]

    def unchanged() -> None:
        assert store.last_change_seq() == seq
        assert conv.history() == history
        assert [c.title for c in store.conversations.list()] == titles

    return store, conv, unchanged


# ---- through the Python API -------------------------------------------------------------------

@pytest.mark.parametrize("text", ["a\x00b", "\x00"])
def test_a_nul_character_is_refused_and_writes_nothing(chat, text):
    store, conv, unchanged = chat
    for call in (lambda: conv.send(text), lambda: conv.receive(text),
                 lambda: store.messages.insert_many(conv.id, [{"content": text, "from_me": True}])):
        with pytest.raises(nk.ValidationError) as e:
            call()
        assert e.value.field == "content"
    with pytest.raises(nk.ValidationError):
        store.conversations.create(text)
    with pytest.raises(nk.ValidationError):
        conv.rename(text)
    unchanged()


def test_a_10_mb_text_is_refused_and_writes_nothing(chat):
    store, conv, unchanged = chat
    for call in (lambda: conv.send(TEN_MB), lambda: conv.receive(TEN_MB),
                 lambda: store.messages.insert_many(conv.id, [{"content": "fine", "from_me": True},
                                                              {"content": TEN_MB, "from_me": False}])):
        with pytest.raises(nk.ValidationError) as e:
            call()
        assert e.value.field == "content" and "too long" in e.value.message
    unchanged()


def test_the_longest_text_allowed_is_stored_whole(store):
    conv = store.conversations.create("Alice")
    text = "好" * 1_000_000
    assert conv.send(text).content == text
    with pytest.raises(nk.ValidationError):
        conv.send(text + "!")


def test_an_unknown_conversation_is_not_found_and_nothing_is_written(chat):
    store, conv, unchanged = chat
    for missing in (conv.id + 1000, 0, -1, 2 ** 63 - 1):
        for call in (lambda: store.messages.send(missing, "hi"), lambda: store.messages.receive(missing, "hi"),
                     lambda: store.messages.history(missing), lambda: store.conversations.get(missing),
                     lambda: store.conversations.rename(missing, "x"), lambda: store.conversations.delete(missing),
                     lambda: store.messages.insert_many(missing, [{"content": "hi", "from_me": True}]),
                     lambda: store.messages.insert_many(missing, [])):
            with pytest.raises(nk.NotFoundError):
                call()
    for missing in (0, 10 ** 6):
        with pytest.raises(nk.NotFoundError):
            store.messages.get(missing)
        with pytest.raises(nk.NotFoundError):
            store.messages.delete(missing)
    unchanged()


def test_a_deleted_conversation_object_can_no_longer_send(chat):
    store, conv, _ = chat
    conv.delete()
    for call in (lambda: conv.send("anyone there?"), conv.history):
        with pytest.raises(nk.NotFoundError):
            call()
    assert store.conversations.list().items == []


def test_a_forged_or_foreign_cursor_is_refused(chat):
    store, conv, unchanged = chat
    other = store.conversations.create("Bob")
    for _ in range(3):
        conv.send("more")
        other.send("more")
    unchanged_after = conv.history()
    good = conv.history(limit=2).next_cursor
    foreign = other.history(limit=2).next_cursor
    listed = store.conversations.list(limit=1).next_cursor
    assert good and foreign and listed
    kind, key, id_, tag = good.split(".")
    forged = [
        "", "x", "history:1.2.3", f"{kind}.{key}.{int(id_) + 1}.{tag}", f"{kind}.{int(key) - 1}.{id_}.{tag}",
        f"{kind}.{key}.{id_}.{'0' * 16}", good + ".", good[:-1], "history:99." + good.split(".", 1)[1], "🙂" * 50,
        "a" * 100_000,
    ]
    for cursor in forged + [foreign, listed]:
        with pytest.raises(nk.ValidationError) as e:
            conv.history(limit=2, before=cursor)
        assert e.value.field == "cursor", cursor
    with pytest.raises(nk.ValidationError):
        store.conversations.list(after=good)
    assert conv.history() == unchanged_after


@pytest.mark.parametrize("value", [123, None, b"bytes", ["list"]])
def test_text_of_the_wrong_type_is_an_invalid_argument(chat, value):
    store, conv, unchanged = chat
    with pytest.raises(nk.InvalidArgumentError):
        conv.send(value)  # type: ignore[arg-type]
    with pytest.raises(nk.InvalidArgumentError):
        store.conversations.create(value)  # type: ignore[arg-type]
    unchanged()


def test_ids_of_the_wrong_type_or_range_are_refused(chat):
    store, conv, unchanged = chat
    for bad in ("1", 1.0, True, None):
        with pytest.raises(nk.InvalidArgumentError):
            store.messages.send(bad, "hi")  # type: ignore[arg-type]
    with pytest.raises(nk.ValidationError):
        store.messages.send(2 ** 64, "hi")
    with pytest.raises(nk.InvalidArgumentError):
        conv.history(limit="50")  # type: ignore[arg-type]
    unchanged()


def test_a_lone_surrogate_is_an_invalid_argument(chat):
    store, conv, unchanged = chat
    with pytest.raises(nk.InvalidArgumentError):
        conv.send("bad \ud800 text")
    with pytest.raises(nk.InvalidArgumentError):
        store.messages.insert_many(conv.id, [{"content": "bad \udfff", "from_me": True}])
    unchanged()


def test_a_closed_store_refuses_chat_calls(chat):
    store, conv, _ = chat
    store.close()
    for call in (lambda: conv.send("hi"), store.conversations.list):
        with pytest.raises(nk.ClosedError):
            call()


# ---- straight at the C ABI --------------------------------------------------------------------

@pytest.mark.parametrize("bad", [b"\xff", b"abc\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"ok\xf8\x88\x80\x80\x80"])
def test_invalid_utf8_through_the_abi_is_an_invalid_argument_and_writes_nothing(chat, bad):
    store, conv, unchanged = chat
    h = store.handle
    out = c_void_p()
    calls = [
        lambda: _ffi.nk_message_send(h, conv.id, bad, byref(out)),
        lambda: _ffi.nk_message_receive(h, conv.id, bad, None, byref(out)),
        lambda: _ffi.nk_message_receive(h, conv.id, b"fine", bad, byref(out)),
        lambda: _ffi.nk_conversation_create(h, bad, byref(out)),
        lambda: _ffi.nk_conversation_rename(h, conv.id, bad, byref(out)),
        lambda: _ffi.nk_conversation_history(h, conv.id, 50, bad, NO_TIME, NO_TIME, *page_out()),
        lambda: _ffi.nk_conversation_list(h, 20, bad, *page_out()),
        lambda: _ffi.nk_message_insert_many(h, conv.id, byref(records(bad)), 0, byref(out)),
    ]
    for call in calls:
        assert call() == NK_E_INVALID_ARGUMENT
        assert last_error()["kind"] == "invalid_argument"
    assert out.value is None
    unchanged()


def test_null_arguments_through_the_abi_are_invalid_arguments_and_write_nothing(chat):
    store, conv, unchanged = chat
    h = store.handle
    out = c_void_p()
    assert _ffi.nk_message_send(h, conv.id, None, byref(out)) == NK_E_INVALID_ARGUMENT
    assert last_error()["field"] == "content"
    assert _ffi.nk_message_send(h, conv.id, b"hi", None) == NK_E_INVALID_ARGUMENT  # no out: no work done
    assert _ffi.nk_message_receive(h, conv.id, b"hi", None, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_insert_many(h, conv.id, byref(records(b"x")), 0, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_insert_many(h, conv.id, None, 0, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_create(h, None, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_create(h, b"t", None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_rename(h, conv.id, None, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_history(h, conv.id, 50, None, NO_TIME, NO_TIME, None, None, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_history(h, conv.id, 50, None, NO_TIME, NO_TIME, *page_out()[:2], None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_send(None, conv.id, b"hi", byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_get(h, 1, None) == NK_E_INVALID_ARGUMENT
    assert out.value is None
    unchanged()


def test_a_history_limit_out_of_range_through_the_abi_is_a_validation_error(chat):
    store, conv, unchanged = chat
    out = c_void_p()
    for limit in (0, -5, 1001, 2 ** 62):
        assert _ffi.nk_conversation_history(store.handle, conv.id, limit, None, NO_TIME, NO_TIME, *page_out()) == NK_E_VALIDATION
        assert last_error()["field"] == "limit"
    unchanged()
