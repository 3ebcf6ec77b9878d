"""Issue 12, item 8: every NotesError carries a stable machine-readable code from the library, and
message_in(language) gives the notes app's own wording where it had one."""
from __future__ import annotations

import ctypes
import json
import re
import time
from ctypes import byref, c_void_p

import pytest

import noteskit as nk
from noteskit import _ffi


def error_of(call):
    with pytest.raises(nk.NotesError) as e:
        call()
    return e.value


def test_saving_without_a_title_or_content_speaks_the_apps_words(store):
    e = error_of(lambda: store.articles.create(title="", content="x"))
    assert (type(e), e.field, e.code) == (nk.ValidationError, "title", "title_empty")
    assert e.message_in("zh-Hans") == "标题不可为空" and e.message_in("zh-CN") == "标题不可为空"
    assert e.message_in("en") == e.message == str(e) and "empty" in e.message
    assert e.message_in("zh-Hant") == e.message  # the app had no traditional-Chinese wording
    d = store.articles.new_draft(title="t")
    e = error_of(d.save)
    assert (e.code, e.message_in("zh-Hans")) == ("content_empty", "内容不可为空")


def test_the_codes_of_common_mistakes(store):
    a = store.articles.create(title="t", content="c")
    store.articles.update(a.id, content="c2")
    conv = store.conversations.create("c")
    cases = {
        "message_empty": lambda: conv.send("   "),
        "conversation_title_empty": lambda: store.conversations.create(""),
        "title_too_long": lambda: store.articles.create(title="x" * 1001, content="c"),
        "content_contains_nul": lambda: store.articles.create(title="t", content="a\x00b"),
        "revision_conflict": lambda: store.articles.update(a.id, content="x", expected_revision=1),
        "revision_unknown": lambda: store.articles.update(a.id, content="x", expected_revision=9),
        "article_not_found": lambda: store.articles.get(999),
        "conversation_not_found": lambda: store.conversations.get(999),
        "query_too_long": lambda: store.articles.search("q" * 10_001),
        "cursor_malformed": lambda: store.articles.list(after="nonsense"),
        "limit_invalid": lambda: store.articles.list(limit=0),
    }
    for code, call in cases.items():
        e = error_of(call)
        assert e.code == code, (code, e.code, e.message)
        assert e.message_in("zh-Hans") == e.message  # English where the app had no words
    assert error_of(lambda: store.articles.update(a.id, content="x", expected_revision=9)).field == "expected_revision"


def test_the_code_and_the_wording_come_from_the_library_in_its_last_error_json():
    with nk.Store.memory() as s:
        out = c_void_p()
        assert _ffi.nk_article_create(s.handle, b"", b"x", byref(out)) == 2
        pointer = _ffi.nk_last_error()
        try:
            info = json.loads(ctypes.string_at(pointer))
        finally:
            _ffi.nk_free(pointer)
        assert info["error_code"] == "title_empty" and info["messages"] == {"zh-Hans": "标题不可为空"}
        assert info["kind"] == "validation" and info["code"] == 2  # the status code, as before


def test_codes_are_stable_identifiers():
    with nk.Store.memory() as store:
        for call in (lambda: store.articles.get(-1), lambda: store.articles.search("x", after="a.b.c.d"),
                     lambda: store.messages.search("x", conversation=5), lambda: nk.measure_text("x", 0)):
            assert re.fullmatch(r"[a-z][a-z_]*", error_of(call).code)


def test_the_draft_title_is_todays_date_without_the_apps_trailing_space(store):
    # The app prefilled "yyyy-MM-dd " (a trailing space to type after); we keep the date only.
    assert store.articles.new_draft().title == time.strftime("%Y-%m-%d")
