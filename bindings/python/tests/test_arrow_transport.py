"""Records leave the library as Arrow batches and packed rows: what crosses is exact, and every
struct handed out is released exactly once, however its consumer behaves."""
from __future__ import annotations

import ctypes
import gc
from ctypes import byref
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest

from noteskit.selection import NO_TIME
import noteskit as nk
from noteskit import _arrow, _ffi

UTC = timezone.utc
NK_E_INVALID_ARGUMENT, NK_E_VALIDATION = 1, 2
EINVAL, EIO = 22, 5


@pytest.fixture(autouse=True)
def every_arrow_struct_is_released():
    gc.collect()
    before = _arrow.outstanding()
    yield
    gc.collect()
    assert _arrow.outstanding() == before


@pytest.fixture
def many(tmp_path):
    """A file store with 70 000 messages: two batches on one thread, two halves on two."""
    with nk.Store.open(tmp_path / "many.db") as store:
        conv = store.conversations.create("many")
        store.messages.insert_many(conv.id, [{"content": f"m{i}", "from_me": True} for i in range(70_000)])
        yield store


def test_the_extreme_times_cross_exactly_as_rows_and_as_batches(store):
    first, last = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
    odd = datetime(2300, 7, 4, 12, 0, 0, 1000, tzinfo=UTC)  # past the float fast path
    made = store.articles.create_many([{"title": "a", "content": "c", "created_at": t, "updated_at": t}
                                       for t in (first, last, odd)])
    assert [store.articles.get(a.id).created_at for a in made] == [first, last, odd]
    assert sorted(a.created_at for a in store.articles.list()) == [first, odd, last]
    assert pa.table(store.articles.select(order="asc")).column("created_at").to_pylist() == [first, odd, last]


def test_text_crosses_byte_exact_whatever_it_holds(store):
    texts = [" x ", "ascii", "今天天气真好", "emoji 🎉 and \u0301 combining", "nul-free but \t\n\r control", "x" * 100_000]
    conv = store.conversations.create("t")
    ids = [m.id for m in store.messages.insert_many(conv.id, [{"content": t, "from_me": True} for t in texts])]
    assert [store.messages.get(i).content for i in ids] == texts
    assert [m.content for m in conv.history(limit=10)] == texts
    assert pa.table(store.messages.select()).column("content").to_pylist() == texts


def test_search_spans_cross_as_code_point_offsets(store):
    store.articles.create(title="天气 weather", content="今天天气真好，天气")
    hit = store.articles.search("天气")[0]
    assert hit.spans == {"title": [(0, 2)], "content": [(2, 4), (7, 9)]}
    assert store.articles.search("天气", field="content")[0].spans == {"content": [(2, 4), (7, 9)]}
    assert store.articles.search("WEATHER", field="title")[0].spans == {"title": [(3, 10)]}
    assert store.articles.search("nothing").items == []


def test_a_capsule_nobody_reads_releases_its_stream(store):
    store.articles.create(title="t", content="c")
    before = _arrow.outstanding()
    capsule = store.articles.select().__arrow_c_stream__()
    assert _arrow.outstanding() == before + 1
    del capsule
    gc.collect()
    assert _arrow.outstanding() == before


def test_a_stream_released_after_one_batch_frees_the_rest(many):
    before = _arrow.outstanding()
    reader = pa.RecordBatchReader.from_stream(many.messages.select())
    assert reader.read_next_batch().num_rows == 35_000  # the first half; the second was read on its own thread
    del reader
    gc.collect()
    assert _arrow.outstanding() == before


def test_an_iteration_left_early_releases_its_stream(many):
    before = _arrow.outstanding()
    records = iter(many.messages.select())
    assert next(records).content == "m0"
    records.close()  # type: ignore[attr-defined]
    assert _arrow.outstanding() == before


def test_the_decoder_releases_each_struct_once(store, monkeypatch):
    store.articles.create_many([{"title": "t", "content": "c"}] * 3)
    released = []
    real = _arrow.release

    def counting(address, offset):
        released.append(address)
        real(address, offset)

    monkeypatch.setattr(_arrow, "release", counting)
    store.articles.list(limit=2)
    list(store.articles.select())
    assert len(released) == len(set(released)) or all(released.count(a) <= 2 for a in released)
    assert len(released) == 2 + 3  # page: array + schema; stream: schema, one batch, the stream


def test_null_out_structs_are_invalid_arguments(store):
    h = store.handle
    stream = _ffi.ArrowArrayStream()
    assert _ffi.nk_article_select(h, -(2 ** 63), -(2 ** 63), 0, 1, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_select(h, 0, -(2 ** 63), -(2 ** 63), -1, 0, 1, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_conversation_select(h, 1, None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_draft_list(h, None, byref(_ffi.ArrowSchema())) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_store_changes(h, 0, 10, byref(_ffi.ArrowArray()), None) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_select(h, -(2 ** 63), -(2 ** 63), 2, 1, byref(stream)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_article_select(h, -(2 ** 63), -(2 ** 63), 0, 0, byref(stream)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_select(h, 0, -(2 ** 63), -(2 ** 63), 2, 0, 1, byref(stream)) == NK_E_INVALID_ARGUMENT
    assert _ffi.nk_message_select(h, 0, 2 ** 62, -(2 ** 63), -1, 0, 1, byref(stream)) == NK_E_VALIDATION
    assert not stream.release  # untouched on failure


def test_a_released_stream_refuses_every_callback(store):
    stream = _ffi.ArrowArrayStream()
    assert _ffi.nk_conversation_select(store.handle, 1, byref(stream)) == 0
    get_next, get_schema = stream.get_next, stream.get_schema
    stream.release(byref(stream))
    assert not stream.release
    array, schema = _ffi.ArrowArray(), _ffi.ArrowSchema()
    assert get_next(byref(stream), byref(array)) == EINVAL and not array.release
    assert get_schema(byref(stream), byref(schema)) == EINVAL and not schema.release


def test_a_stream_refuses_null_out_structs_with_a_message(store):
    stream = _ffi.ArrowArrayStream()
    assert _ffi.nk_conversation_select(store.handle, 1, byref(stream)) == 0
    try:
        assert stream.get_next(byref(stream), None) == EINVAL
        assert b"NULL" in ctypes.string_at(stream.get_last_error(byref(stream)))
        assert stream.get_schema(byref(stream), None) == EINVAL
    finally:
        stream.release(byref(stream))


def test_reading_an_already_released_batch_is_an_error_not_a_crash(store):
    store.articles.create(title="t", content="c")
    array, schema, cursor = _ffi.ArrowArray(), _ffi.ArrowSchema(), ctypes.c_void_p()
    assert _ffi.nk_article_list(store.handle, 20, None, NO_TIME, NO_TIME, 0, byref(array), byref(schema), byref(cursor)) == 0
    field = _arrow.read_schema(ctypes.addressof(schema))
    _arrow.release_array(array)
    _arrow.release_array(array)  # a second release does nothing
    with pytest.raises(nk.InternalError, match="released"):
        _arrow.read_batch(ctypes.addressof(array), field)
    _arrow.release_schema(schema)
    with pytest.raises(nk.InternalError, match="released"):
        _arrow.read_schema(ctypes.addressof(schema))


def test_single_records_and_pages_build_the_same_records(store):
    conv = store.conversations.create("c")
    sent = conv.send("hello")
    assert store.messages.get(sent.id) == sent == conv.history()[0] == next(iter(store.messages.select()))
    a = store.articles.create(title="t", content="c")
    assert store.articles.get(a.id) == a == store.articles.list()[0] == store.articles.search("c")[0].article
    d = store.articles.edit(a.id)
    assert (d.article_id, d.base_revision, d.title) == (a.id, 1, "t")
    new = store.articles.new_draft(title="n")
    assert (new.article_id, new.base_revision) == (None, None)
    d.content = "typed"  # drafts() lists drafts with unsaved changes
    assert [x.id for x in store.articles.drafts()] == [d.id, new.id]
    changes = store.changes(since=0)
    assert [(c.entity, c.op, c.revision) for c in changes] == [("conversation", "create", None),
                                                               ("message", "create", None), ("article", "create", 1)]
    assert changes[0].at <= datetime.now(UTC) + timedelta(seconds=1)


def _page(store, conv_id):
    array, schema, cursor = _ffi.ArrowArray(), _ffi.ArrowSchema(), ctypes.c_void_p()
    assert _ffi.nk_conversation_history(store.handle, conv_id, 50, None, NO_TIME, NO_TIME, byref(array), byref(schema),
                                        byref(cursor)) == 0
    if cursor.value:
        _ffi.nk_free(cursor.value)
    return array, schema


def test_a_page_is_read_alike_by_pyarrow_and_by_its_schemas_plan(store):
    conv = store.conversations.create("c")
    store.messages.insert_many(conv.id, [{"content": t, "from_me": i % 2 == 0, "sender": s}
                                         for i, (t, s) in enumerate([("今天天气真好", "Bob"), ("x", None), ("🎉 e\u0301", "Ann")])])
    ours = [(m.id, m.uid, m.content, m.from_me, m.sender) for m in conv.history()]
    array, schema = _page(store, conv.id)
    batch = pa.RecordBatch._import_from_c(ctypes.addressof(array), ctypes.addressof(schema))  # (pyarrow releases both)
    assert not array.release and not schema.release
    theirs = list(zip(*(batch.column(name).to_pylist() for name in ("id", "uid", "content", "from_me", "sender"))))
    assert theirs == ours and batch.schema.field("sender").nullable


def test_a_schemas_fields_are_static_and_a_moved_field_is_live_again_for_the_next_page(store):
    conv = store.conversations.create("c")
    conv.send("hello")
    first_array, first = _page(store, conv.id)
    second_array, second = _page(store, conv.id)
    try:
        # One static list of fields: a schema is known by its address.
        assert ctypes.cast(first.children, ctypes.c_void_p).value == ctypes.cast(second.children, ctypes.c_void_p).value
        # A consumer moves field 3 out (a bitwise copy; the original marked released), then releases the parent.
        moved = _ffi.ArrowSchema()
        field = ctypes.addressof(first.children[3].contents)
        ctypes.memmove(ctypes.addressof(moved), field, ctypes.sizeof(moved))
        ctypes.memset(field + _ffi.ArrowSchema.release.offset, 0, 8)
        _arrow.release_schema(first)
        assert ctypes.string_at(moved.name) == b"content" and moved.release
        _arrow.release_schema(moved)
        assert not moved.release
    finally:
        _arrow.release_array(first_array)
        _arrow.release_schema(second)
        _arrow.release_array(second_array)
    array, schema = _page(store, conv.id)
    try:
        assert schema.children[3].contents.release  # live again
        assert [m.content for m in conv.history()] == ["hello"]
    finally:
        _arrow.release_array(array)
        _arrow.release_schema(schema)
