"""Bulk writes from columns: create_many / insert_many take pyarrow, polars, pandas and DuckDB data
(and lists of mappings, packed into Arrow buffers by the package), and refuse hostile Arrow input
with a NotesError naming the column (and the record), writing nothing, releasing every struct once."""
from __future__ import annotations

import ctypes
import math
import struct
from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk
from noteskit import _columns

from arrow_structs import Arrow, bitmap

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")
duckdb = pytest.importorskip("duckdb")

UTC = timezone.utc
T0 = datetime(2026, 11, 29, 15, 28, 6, 123000, tzinfo=UTC)


@pytest.fixture
def store():
    with nk.Store.memory() as s:
        yield s


@pytest.fixture
def conv(store):
    return store.conversations.create("Alice")


def stored_articles(store):
    return [(a.title, a.content) for a in store.articles.iter()][::-1]


# ---- what real producers emit -------------------------------------------------------------------

def test_a_pyarrow_table_becomes_articles_in_order(store):
    table = pa.table({"title": ["周末", "Monday"], "content": ["今天天气真好", "rain"]})
    made = store.articles.create_many(table)
    assert [(a.title, a.content, a.revision) for a in made] == [("周末", "今天天气真好", 1), ("Monday", "rain", 1)]
    assert stored_articles(store) == [("周末", "今天天气真好"), ("Monday", "rain")]
    assert made == [store.articles.get(a.id) for a in made]


def test_a_record_batch_goes_through_arrow_c_array(store):
    batch = pa.record_batch({"title": ["a", "b"], "content": ["x", "y"]})
    assert [a.title for a in store.articles.create_many(batch)] == ["a", "b"]


def test_a_polars_frame_with_string_views_becomes_messages(store, conv):
    frame = pl.DataFrame({"content": ["short", "a text longer than twelve bytes 今天", None], "from_me": [True, False, True]})
    frame = frame.filter(pl.col("content").is_not_null())
    made = store.messages.insert_many(conv.id, frame)
    assert [(m.content, m.from_me) for m in made] == [("short", True), ("a text longer than twelve bytes 今天", False)]
    assert [m.content for m in conv.history()] == ["short", "a text longer than twelve bytes 今天"]


def test_a_pandas_frame_with_categoricals_and_a_filtered_index(store, conv):
    frame = pd.DataFrame({"content": pd.Categorical(["hi", "yo", "hi", "skip"]), "from_me": np.array([True, False, True, True]),
                          "sent_at": pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:01", "2026-01-01 10:02", "2026-01-02 00:00"])})
    frame = frame[frame["content"] != "skip"]  # a non-default index is not a column
    made = store.messages.insert_many(conv.id, frame)
    assert [(m.content, m.from_me, m.sent_at) for m in made] == [
        ("hi", True, datetime(2026, 1, 1, 10, 0, tzinfo=UTC)), ("yo", False, datetime(2026, 1, 1, 10, 1, tzinfo=UTC)),
        ("hi", True, datetime(2026, 1, 1, 10, 2, tzinfo=UTC))]


def test_a_duckdb_result_feeds_create_many(store):
    relation = duckdb.sql("SELECT 'title ' || i AS title, repeat('x', i::INT) AS content FROM range(1, 4) t(i)")
    made = store.articles.create_many(relation.arrow())
    assert [(a.title, a.content) for a in made] == [("title 1", "x"), ("title 2", "xx"), ("title 3", "xxx")]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC", "Asia/Shanghai"])
def test_timestamps_of_every_unit_and_zone_are_instants(store, conv, unit, tz):
    when = pa.array([T0.replace(tzinfo=None) if tz is None else T0, None], pa.timestamp(unit, tz=tz))
    table = pa.table({"content": ["a", "b"], "from_me": [True, False], "sent_at": when})
    a, b = store.messages.insert_many(conv.id, table)
    expected = T0.replace(microsecond=0) if unit == "s" else T0
    assert a.sent_at == expected
    assert abs(b.sent_at - datetime.now(UTC)) < timedelta(minutes=5)  # a null time: the time of the write


def test_timestamps_before_1970_round_down(store):
    table = pa.table({"title": ["old"], "content": ["c"],
                      "created_at": pa.array([-1], pa.timestamp("us"))})  # 1969-12-31T23:59:59.999999
    (a,) = store.articles.create_many(table)
    assert a.created_at == datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def test_large_strings_int_times_and_nulls_in_optional_fields(store):
    table = pa.table({"title": pa.array(["a", "b"], pa.large_string()), "content": pa.array(["x", "y"], pa.large_string()),
                      "uid": pa.array([None, "0E4B1C0A-7F0E-4D7B-9A59-1F7C2F7D9D01"]),
                      "created_at": pa.array([1_700_000_000_000, None], pa.int64()),
                      "updated_at": pa.array([None, None], pa.int64())})
    a, b = store.articles.create_many(table)
    assert a.created_at == datetime.fromtimestamp(1_700_000_000, UTC) == a.updated_at
    assert b.uid == "0e4b1c0a-7f0e-4d7b-9a59-1f7c2f7d9d01"


def test_sliced_arrays_are_read_from_their_offset(store, conv):
    table = pa.table({"content": ["zero", "one", "two", "three"], "from_me": [True, False, True, False],
                      "sent_at": pa.array([T0 + timedelta(seconds=k) for k in range(4)], pa.timestamp("ms", tz="UTC"))})
    made = store.messages.insert_many(conv.id, table.slice(1, 2))
    assert [(m.content, m.from_me, m.sent_at) for m in made] == [("one", False, T0 + timedelta(seconds=1)),
                                                                  ("two", True, T0 + timedelta(seconds=2))]
    dictionary = pa.table({"title": pa.array(["p", "q", "p", "r"]).dictionary_encode(), "content": ["1", "2", "3", "4"]})
    assert [a.title for a in store.articles.create_many(dictionary.slice(2))] == ["p", "r"]


def test_from_me_as_integers_zero_and_one(store, conv):
    table = pa.table({"content": ["a", "b"], "from_me": pa.array([1, 0], pa.int32())})
    assert [m.from_me for m in store.messages.insert_many(conv.id, table)] == [True, False]
    with pytest.raises(nk.ValidationError, match="record 1: from_me must be true or false") as e:
        store.messages.insert_many(conv.id, pa.table({"content": ["a", "b"], "from_me": pa.array([1, 2], pa.int64())}))
    assert (e.value.field, e.value.line) == ("from_me", 1)


def test_a_stream_of_several_batches_numbers_records_across_them(store):
    batches = [pa.record_batch({"title": ["a", "b"], "content": ["1", "2"]}),
               pa.record_batch({"title": ["c", " "], "content": ["3", "4"]})]
    reader = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create_many(reader)
    assert (e.value.field, e.value.line) == ("title", 3)
    assert store.articles.count() == 0


# ---- lists of mappings --------------------------------------------------------------------------

@pytest.mark.parametrize("missing", [None, math.nan, float("nan"), "NaT", "NA", "absent"])
def test_a_missing_value_in_a_required_field_names_the_record_and_field(store, conv, missing):
    value = {"NaT": pd.NaT, "NA": pd.NA}.get(missing, missing) if isinstance(missing, str) else missing
    record = {"content": "b", "from_me": True}
    if missing == "absent":
        del record["content"]
    else:
        record["content"] = value
    with pytest.raises(nk.ValidationError, match="record 1: content is missing") as e:
        store.messages.insert_many(conv.id, [{"content": "a", "from_me": False}, record])
    assert (e.value.field, e.value.line) == ("content", 1)
    with pytest.raises(nk.ValidationError, match="record 0: from_me is missing") as e:
        store.messages.insert_many(conv.id, [{"content": "a", "from_me": value if missing != "absent" else None}])
    assert e.value.field == "from_me"
    assert len(conv.history()) == 0


def test_numpy_scalars_are_taken_as_their_values(store, conv):
    made = store.messages.insert_many(conv.id, [
        {"content": np.str_("np"), "from_me": np.bool_(True), "sent_at": np.datetime64("2026-11-29T15:28:06.123")},
        {"content": "py", "from_me": np.False_, "sent_at": pd.Timestamp("2026-11-29T15:28:07Z")}])
    assert [(m.content, m.from_me, m.sent_at) for m in made] == [("np", True, T0), ("py", False, datetime(2026, 11, 29, 15, 28, 7, tzinfo=UTC))]


def test_missing_optional_times_and_uids_are_filled_in(store, conv):
    made = store.messages.insert_many(conv.id, [{"content": "a", "from_me": True, "sent_at": pd.NaT, "uid": None},
                                                {"content": "b", "from_me": True, "sent_at": "2026-11-29T15:28:06.123Z"}])
    assert made[1].sent_at == T0 and made[0].uid != made[1].uid


def test_text_with_a_lone_surrogate_names_the_record(store):
    with pytest.raises(nk.InvalidArgumentError, match="record 1: title") as e:
        store.articles.create_many([{"title": "ok 今天", "content": "c"}, {"title": "\ud800", "content": "c"}])
    assert e.value.line == 1 and store.articles.count() == 0


def test_an_unknown_field_in_a_mapping_is_refused(store):
    with pytest.raises(nk.ValidationError, match="record 1: tags is not a field") as e:
        store.articles.create_many([{"title": "t", "content": "c"}, {"title": "t", "content": "c", "tags": "x"}])
    assert (e.value.field, e.value.line) == ("tags", 1)


def test_lists_longer_than_a_batch_are_sent_in_several(store, conv, monkeypatch):
    monkeypatch.setattr(_columns, "BATCH_RECORDS", 3)
    records = [{"content": f"m{k}", "from_me": k % 2 == 0, "sent_at": T0 + timedelta(seconds=k)} for k in range(8)]
    records[5]["sent_at"] = None
    made = store.messages.insert_many(conv.id, records)
    assert [m.content for m in made] == [f"m{k}" for k in range(8)]
    assert [m.sent_at == T0 + timedelta(seconds=k) for k, m in enumerate(made)] == [k != 5 for k in range(8)]
    records[7]["content"] = " "
    with pytest.raises(nk.ValidationError) as e:
        store.messages.insert_many(conv.id, records)
    assert e.value.line == 7
    assert not _columns._live  # every struct the package made was released


# ---- hostile input ------------------------------------------------------------------------------

class Producer:
    """Hands a hand-built stream over through the PyCapsule protocol, as pyarrow does."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def __arrow_c_stream__(self, requested_schema=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.stream), b"arrow_array_stream", None)


def messages_table(arrow, n, content=None, from_me=None, extra=()):
    content = content or (b"content", b"u", arrow.strings([b"m%d" % k for k in range(n)]))
    from_me = from_me or (b"from_me", b"b", [None, bitmap([True] * n)])
    return arrow.table([content, from_me, *extra], n)


def refused(store, conv, stream, error, field=None, line=None, match=None):
    with pytest.raises(error, match=match) as e:
        store.messages.insert_many(conv.id, Producer(stream))
    assert e.value.field == field
    assert e.value.line == line
    assert len(conv.history()) == 0


def released_once(arrow):
    assert arrow.releases["stream"] == 1
    assert all(count == 1 for count in arrow.releases.values()), arrow.releases


def test_a_stream_that_fails_half_way_writes_nothing(store, conv):
    arrow = Arrow()
    batches = [messages_table(arrow, 2)[1], messages_table(arrow, 2)[1]]
    stream = arrow.stream(messages_table(arrow, 2)[0], batches, fail_at=1, error=b"disk on fire")
    refused(store, conv, stream, nk.InvalidArgumentError, field="records", match="after 1 batches .2 records.: disk on fire")
    released_once(arrow)
    assert len(arrow.releases) == 10  # the stream, its schema and both batches (one never taken), with their columns


def test_a_null_or_released_stream_is_an_invalid_argument(store, conv):
    out = ctypes.c_void_p()
    assert nk._ffi.nk_message_insert_many(store.handle, conv.id, None, 0, ctypes.byref(out)) == 1
    arrow = Arrow()
    stream = arrow.stream(*[messages_table(arrow, 1)[0], [messages_table(arrow, 1)[1]]])
    store.messages.insert_many(conv.id, Producer(stream))
    assert arrow.releases["stream"] == 1
    with pytest.raises(nk.InvalidArgumentError, match="already released"):
        store.messages.insert_many(conv.id, Producer(stream))  # the same struct again
    assert arrow.releases["stream"] == 1 and len(conv.history()) == 1


def test_a_string_column_where_a_boolean_is_expected(store, conv):
    arrow = Arrow()
    schema, batch = messages_table(arrow, 2, from_me=(b"from_me", b"u", arrow.strings([b"true", b"false"])))
    refused(store, conv, arrow.stream(schema, [batch]), nk.ValidationError, field="from_me",
            match="column from_me must hold booleans .or integers 0 and 1., got strings")
    released_once(arrow)


def test_an_integer_column_where_text_is_expected(store, conv):
    arrow = Arrow()
    schema, batch = messages_table(arrow, 2, content=(b"content", b"l", [None, struct.pack("<2q", 1, 2)]))
    refused(store, conv, arrow.stream(schema, [batch]), nk.ValidationError, field="content", match="must hold strings, got integers")
    released_once(arrow)


def test_columns_of_different_lengths(store, conv):
    arrow = Arrow()
    content = arrow.schema(b"u", b"content"), arrow.array(1, arrow.strings([b"only one"]))
    from_me = arrow.schema(b"b", b"from_me"), arrow.array(3, [None, bitmap([True] * 3)])
    schema = arrow.schema(b"+s", None, [content[0], from_me[0]])
    batch = arrow.array(3, [None], children=[content[1], from_me[1]])
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content",
            match="it has 1 values, the batch has 3 records")
    released_once(arrow)


def test_a_null_in_a_required_column_names_the_record(store, conv):
    arrow = Arrow()
    content = (b"content", b"u", arrow.strings([b"a", None, b"c"]), 1)
    schema, batch = messages_table(arrow, 3, content=content)
    refused(store, conv, arrow.stream(schema, [batch]), nk.ValidationError, field="content", line=1,
            match="record 1: content is missing")
    released_once(arrow)


def test_an_unknown_column_is_refused(store, conv):
    arrow = Arrow()
    schema, batch = messages_table(arrow, 1, extra=[(b"mood", b"u", arrow.strings([b"happy"]))])
    refused(store, conv, arrow.stream(schema, [batch]), nk.ValidationError, field="mood", match='unknown column "mood"')
    released_once(arrow)
    with pytest.raises(nk.ValidationError, match='unknown column "tags"'):
        store.articles.create_many(pa.table({"title": ["t"], "content": ["c"], "tags": ["x"]}))


def test_a_dictionary_index_out_of_range(store, conv):
    arrow = Arrow()
    values_schema, values = arrow.schema(b"u", b""), arrow.array(2, arrow.strings([b"hi", b"yo"]))
    content_schema = arrow.schema(b"c", b"content", dictionary=values_schema)
    content = arrow.array(3, [None, bytes([0, 1, 7])], dictionary=values)
    from_me_schema, from_me = arrow.schema(b"b", b"from_me"), arrow.array(3, [None, bitmap([True] * 3)])
    schema = arrow.schema(b"+s", None, [content_schema, from_me_schema])
    batch = arrow.array(3, [None], children=[content, from_me])
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content",
            match="dictionary index 7 of value 2 is out of range .the dictionary has 2 values.")
    released_once(arrow)


@pytest.mark.parametrize("offsets, match", [
    ((0, 3, 1), "offsets decrease at value 2"),
    ((0, 3, 3 << 29), "runs past its buffer"),        # 1.5 GiB past a 3-byte buffer: not mapped memory
    ((-4, 3, 3), "offsets are negative"),
])
def test_offsets_past_the_data_buffer(store, conv, offsets, match):
    arrow = Arrow()
    content = (b"content", b"u", [None, struct.pack("<3i", *offsets), b"abc"])
    schema, batch = messages_table(arrow, 2, content=content)
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content", match=match)
    released_once(arrow)


def test_a_3_gib_large_string_column_is_refused_by_the_documented_limit(store, conv):
    arrow = Arrow()
    content = (b"content", b"U", [None, struct.pack("<3q", 0, 1, 3 << 30), b"a"])
    schema, batch = messages_table(arrow, 2, content=content)
    refused(store, conv, arrow.stream(schema, [batch]), nk.ValidationError, field="content",
            match=r"holds 3221225472 bytes of text in one batch; the limit is 2147483648 bytes \(2 GiB\)")
    released_once(arrow)


def test_a_string_view_pointing_past_its_buffer(store, conv):
    arrow = Arrow()
    view = struct.pack("<i4sii", 20, b"abcd", 0, 0) + struct.pack("<i12s", 2, b"hi")
    content = (b"content", b"vu", [None, view, b"x" * 10, struct.pack("<q", 10)])
    schema, batch = messages_table(arrow, 2, content=content)
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content",
            match="value 0 points past its data buffer")
    released_once(arrow)


def test_invalid_utf8_in_a_column_names_the_record(store, conv):
    arrow = Arrow()
    schema, batch = messages_table(arrow, 2, content=(b"content", b"u", arrow.strings([b"ok", b"\xff"])))
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content", line=1,
            match="record 1: content is not valid UTF-8")
    released_once(arrow)


def test_a_struct_that_is_not_a_table_is_refused(store, conv):
    arrow = Arrow()
    schema = arrow.schema(b"u", b"content")
    stream = arrow.stream(schema, [arrow.array(1, arrow.strings([b"x"]))])
    with pytest.raises(nk.InvalidArgumentError, match="must be a struct"):
        store.messages.insert_many(conv.id, Producer(stream))
    released_once(arrow)


def test_a_good_stream_is_released_once_and_its_batches_too(store, conv):
    arrow = Arrow()
    schema, first = messages_table(arrow, 2)
    stream = arrow.stream(schema, [first, messages_table(arrow, 3)[1]])
    made = store.messages.insert_many(conv.id, Producer(stream))
    assert [m.content for m in made] == ["m0", "m1", "m0", "m1", "m2"]
    released_once(arrow)
    assert len(arrow.releases) == 10  # the stream, its schema and both batches, with their columns


def test_a_failure_before_reading_still_releases_the_stream(store, conv):
    arrow = Arrow()
    stream = arrow.stream(*[messages_table(arrow, 1)[0], [messages_table(arrow, 1)[1]]])
    with pytest.raises(nk.NotFoundError):
        store.messages.insert_many(conv.id + 100, Producer(stream))
    released_once(arrow)
    arrow = Arrow()
    stream = arrow.stream(*[messages_table(arrow, 1)[0], [messages_table(arrow, 1)[1]]])
    out = ctypes.c_void_p()
    assert nk._ffi.nk_message_insert_many(store.handle, conv.id, ctypes.byref(stream), 0, None) == 1  # no out-parameter
    released_once(arrow)


def test_offsets_that_start_far_past_the_buffer_are_refused_without_scanning_from_its_start(store, conv):
    arrow = Arrow()
    far = 1 << 50  # a sliced large_string whose values would lie a petabyte past its buffer
    content = (b"content", b"U", [None, struct.pack("<3q", far, far + 1, far + 2), b"ab"])
    schema, batch = messages_table(arrow, 2, content=content)
    refused(store, conv, arrow.stream(schema, [batch]), nk.InvalidArgumentError, field="content", match="runs past")
    released_once(arrow)


def test_times_out_of_range_are_validation_errors(store, conv):
    with pytest.raises(nk.ValidationError) as e:
        store.articles.create_many(pa.table({"title": ["t"], "content": ["c"], "updated_at": pa.array([2 ** 62], pa.int64())}))
    assert (e.value.field, store.articles.count()) == ("updated_at", 0)
    with pytest.raises(nk.ValidationError) as e:
        store.messages.insert_many(conv.id, pa.table({"content": ["c"], "from_me": [True],
                                                      "sent_at": pa.array([2 ** 62], pa.timestamp("s"))}))
    assert e.value.field == "sent_at" and len(conv.history()) == 0


# ---- what comes back: a read-only list, built when first read -----------------------------------

def test_the_records_created_behave_as_a_list_built_on_first_read(store, conv):
    import copy
    table = pa.table({"title": ["周末", "Monday", "x"], "content": ["今天天气真好, a longer line: 周末 🎉 é ok", "rain", "y" * 17]})
    made = store.articles.create_many(table)
    assert len(made) == 3 and made._items is None  # counted without building a record
    stored = [store.articles.get(a.id) for a in made]
    assert made == stored and stored == made and not made != stored
    assert made[0] == stored[0] and made[-1] == stored[-1] and made[1:] == stored[1:] and list(reversed(made)) == stored[::-1]
    assert stored[1] in made and made.index(stored[2]) == 2 and made.count(stored[0]) == 1
    assert made + [] == stored and [] + made == stored and repr(made) == repr(stored)
    assert type(copy.copy(made)) is list and copy.copy(made) == stored  # (copies and pickles as a list)
    with pytest.raises(IndexError):
        made[3]
    with pytest.raises(TypeError):
        hash(made)
    records = [{"content": "hi", "from_me": False, "sender": "Bob"}, {"content": "yo", "from_me": True}]
    sent = store.messages.insert_many(conv.id, records)
    records[0]["content"] = "changed after the call"  # the texts were taken at the call
    assert [(m.content, m.sender, m.from_me) for m in sent] == [("hi", "Bob", False), ("yo", None, True)]
    sent.append(conv.send("later"))  # a list: it grows (and counts) as one
    assert len(sent) == 3 and sent[-1].content == "later"
    assert store.messages.insert_many(conv.id, []) == [] and len(store.articles.create_many(pa.table({"title": pa.array([], pa.string()), "content": pa.array([], pa.string())}))) == 0


def test_records_created_and_never_read_free_their_buffer(store):
    made = store.articles.create_many(pa.table({"title": ["a"], "content": ["b"]}))
    free = made._free
    assert free.alive
    del made
    assert not free.alive  # (the finalizer ran: the library's buffer is freed)


def test_texts_of_the_result_are_those_written_whenever_read(store):
    table = pa.table({"title": ["周末", "Monday"], "content": ["今天天气真好 🎉", "rain"]})
    made = store.articles.create_many(table)
    newest = next(iter(store.articles.iter()))
    store.articles.update(newest.id, title="changed since")  # (before the records are first read)
    del table  # (the result holds the texts: the input may go)
    assert [(a.title, a.content) for a in made] == [("周末", "今天天气真好 🎉"), ("Monday", "rain")]
