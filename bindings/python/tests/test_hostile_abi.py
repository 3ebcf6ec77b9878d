"""Hostile input straight at the C ABI: an error code and a message, never a crash."""
from __future__ import annotations

import threading
from ctypes import byref, c_int64, c_void_p

import pytest

from noteskit.selection import NO_TIME
import noteskit as nk
from conftest import batch_out, last_error, page_out
from noteskit import _ffi

NK_E_INVALID_ARGUMENT, NK_E_VALIDATION, NK_E_CLOSED = 1, 2, 11


@pytest.fixture
def handle():
    out = c_void_p()
    assert _ffi.nk_store_open_memory(byref(out)) == 0
    yield out.value
    _ffi.nk_store_close(out.value)


def test_null_arguments_are_invalid_arguments(handle):
    out = c_void_p()
    assert _ffi.nk_article_create(handle, None, b"c", byref(out)) == NK_E_INVALID_ARGUMENT
    assert last_error()["message"] == "title is NULL"
    assert _ffi.nk_article_create(handle, b"t", b"c", None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_get(None, 1, None, 0, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_open(None, 0, 0, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_open(b"/tmp/x.db", 0, 0, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_open(b"/tmp/x.db", 0x7F, 0, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_create_many(handle, None, 0, byref(out)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_subscribe(handle, _ffi.nk_change_callback(), None, byref(c_int64())) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_select_count(handle, NO_TIME, NO_TIME, None) == NK_E_INVALID_ARGUMENT
    assert out.value is None  # no out-parameter was written on failure
    assert _ffi.nk_store_close(None) == NK_E_INVALID_ARGUMENT
    _ffi.nk_free(None)


@pytest.mark.parametrize("bad", [b"\xff", b"abc\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"ok\xf8\x88\x80\x80\x80"])
def test_invalid_utf8_is_an_invalid_argument_and_writes_nothing(handle, bad):
    out = c_void_p()
    assert _ffi.nk_article_create(handle, bad, b"c", byref(out)) == NK_E_INVALID_ARGUMENT
    assert "not valid UTF-8" in last_error()["message"]
    assert _ffi.nk_article_list(handle, 20, bad, NO_TIME, NO_TIME, 0, *page_out()) == NK_E_INVALID_ARGUMENT
    count = c_int64()
    assert _ffi.nk_article_select_count(handle, NO_TIME, NO_TIME, byref(count)) == 0 and count.value == 0


def test_forged_and_wrong_kind_handles_are_refused(handle):
    out = c_void_p()
    for forged in (1, 0xDEADBEEF0, 2 ** 60 + 1, handle + 16 * 1000, handle - 1 + 2):
        status = _ffi.nk_article_get(forged, 1, None, 0, byref(out))
        assert status in (NK_E_INVALID_ARGUMENT, NK_E_CLOSED), forged
        assert "handle" in last_error()["message"]


def test_use_after_close_and_double_close_are_closed_errors():
    out = c_void_p()
    assert _ffi.nk_store_open_memory(byref(out)) == 0
    handle = out.value
    assert _ffi.nk_store_close(handle) == 0
    assert _ffi.nk_store_close(handle) == NK_E_CLOSED
    assert _ffi.nk_article_get(handle, 1, None, 0, byref(out)) == NK_E_CLOSED
    assert last_error()["kind"] == "closed"


def test_errors_are_per_thread(handle):
    out = c_void_p()
    assert _ffi.nk_article_get(handle, 404, None, 0, byref(out)) == 3
    seen = {}

    def other():
        _ffi.nk_article_create(handle, b"", b"c", byref(c_void_p()))
        seen["other"] = last_error()["kind"]

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["other"] == "validation"
    assert last_error()["kind"] == "not_found"


def test_closing_a_store_while_other_threads_use_it_never_crashes():
    for _ in range(20):
        out = c_void_p()
        assert _ffi.nk_store_open_memory(byref(out)) == 0
        handle = out.value
        statuses = []

        def hammer():
            result = c_void_p()
            for _ in range(200):
                status = _ffi.nk_article_create(handle, b"t", b"c", byref(result))
                statuses.append(status)
                if status == 0:
                    _ffi.nk_free(result.value)

        threads = [threading.Thread(target=hammer) for _ in range(3)]
        for t in threads:
            t.start()
        _ffi.nk_store_close(handle)
        for t in threads:
            t.join()
        assert set(statuses) <= {0, NK_E_CLOSED}


def test_huge_and_negative_numbers_are_handled(handle):
    out = c_void_p()
    assert _ffi.nk_article_get(handle, -1, None, 0, byref(out)) == 3
    assert _ffi.nk_article_get(handle, 2 ** 63 - 1, None, 0, byref(out)) == 3
    assert _ffi.nk_article_list(handle, -(2 ** 63), None, NO_TIME, NO_TIME, 0, *page_out()) == NK_E_VALIDATION
    assert _ffi.nk_store_changes(handle, -5, 2 ** 63 - 1, *batch_out()) == NK_E_VALIDATION


# ---- The same through the Python API ----------------------------------------------------------

def test_a_nul_inside_a_string_is_refused_naming_the_field(store):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create(title="a\x00b", content="c")
    assert e.value.field == "title" and store.articles.count() == 0


def test_a_nul_inside_a_bulk_record_is_refused(store):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create_many([{"title": "t", "content": "a\x00b"}])
    assert e.value.field == "content" and store.articles.count() == 0


def test_lone_surrogates_are_invalid_arguments(store):
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.create(title="\ud800", content="c")
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.create_many([{"title": "\udfff", "content": "c"}])


def test_a_10_mb_content_is_refused_and_writes_nothing(store):
    with pytest.raises(nk.ValidationError, match="too long") as e:
        store.articles.create(title="t", content="x" * (10 * 1024 * 1024))
    assert e.value.field == "content" and store.articles.count() == 0


def test_the_longest_content_allowed_is_saved_whole(store):
    text = "字" * 1_000_000
    a = store.articles.create(title="t", content=text)
    assert store.articles.get(a.id).content == text


def test_wrong_python_types_are_invalid_arguments(store):
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.create(title=b"bytes", content="c")  # type: ignore[arg-type]
    with pytest.raises(nk.InvalidArgumentError):
        store.articles.get("1")  # type: ignore[arg-type]
    with pytest.raises(nk.ValidationError, match="record 0: must be a mapping, got str"):
        store.articles.create_many(["not a mapping"])  # type: ignore[list-item]
    with pytest.raises(nk.ValidationError, match="record 0: title must be a string, got set") as e:
        store.articles.create_many([{"title": {1, 2}, "content": "c"}])  # a record's field: named with its record
    assert (e.value.field, e.value.line) == ("title", 0)
