"""Records in as Arrow columns: what the bulk writes hand the library, and what it hands back.

The library reads records as an Arrow C stream of struct batches (``include/noteskit.h``, "Bulk
writes"). This module makes one from whatever the caller has:

- an object with ``__arrow_c_stream__`` (a pyarrow Table, a polars DataFrame, DuckDB results...):
  its stream is moved out of the capsule and handed over as it is;
- an object with ``__arrow_c_array__`` (a pyarrow RecordBatch): its schema and array go into a
  one-batch stream of ours;
- a pandas DataFrame: through ``pyarrow.Table.from_pandas`` (without the index);
- a list of mappings: packed here into Arrow buffers with ``array`` and ``bytes`` (pyarrow is not
  needed), checked as it is packed: a missing value (None, NaN, NaT, ``pd.NA``) in a required field
  or a value of the wrong type is a :class:`ValidationError` naming the record and the field.

Every struct this module makes is released exactly once, by whoever owns it last (the library, or
the stream's own release when the library never took it). ``_live`` holds what is not released yet.
"""
from __future__ import annotations

import ctypes
import gc
import operator
import threading
import weakref
from array import array
from ctypes import POINTER, c_int64, c_void_p
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from collections.abc import Mapping as _Mapping
from collections.abc import MutableSequence
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union, overload

from . import _ffi
from ._arrow import call_batch
from ._ffi import ArrowArray, ArrowArrayStream, ArrowSchema
from .errors import InvalidArgumentError, ValidationError
from ._convert import _ARTICLE_SETTERS, _MESSAGE_SETTERS, _records, format_time
from .models import Article, Message

TEXT, FLAG, TIME, INTEGER = "text", "flag", "time", "integer"


class Field(NamedTuple):
    name: str
    kind: str
    required: bool


ARTICLE_FIELDS = (Field("title", TEXT, True), Field("content", TEXT, True), Field("uid", TEXT, False),
                  Field("created_at", TIME, False), Field("updated_at", TIME, False))
UPDATE_FIELDS = (Field("id", INTEGER, True), Field("title", TEXT, False), Field("content", TEXT, False),
                 Field("expected_revision", INTEGER, False))
MESSAGE_FIELDS = (Field("content", TEXT, True), Field("from_me", FLAG, True), Field("uid", TEXT, False),
                  Field("sent_at", TIME, False), Field("sender", TEXT, False))

#: Records per batch when a list is packed (the library reads at most 2 GiB of text per column and batch).
BATCH_RECORDS = 65_536

_ABSENT = object()
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_MS = timedelta(milliseconds=1)
_BITS = bytes.maketrans(b"\x00\x01", b"01")

_SchemaRelease: Any = {f[0]: f[1] for f in ArrowSchema._fields_}["release"]
_ArrayRelease: Any = {f[0]: f[1] for f in ArrowArray._fields_}["release"]
_StreamFields: Dict[str, Any] = {f[0]: f[1] for f in ArrowArrayStream._fields_}

#: What this module made and nobody has released yet, by key (the structs' ``private_data``).
_live: Dict[int, Any] = {}
_next_key = [1]


def _keep(holder: Any) -> int:
    key = _next_key[0]
    _next_key[0] += 1
    _live[key] = holder
    return key


def _release_function(pointer: Any) -> None:
    """The release callback of a struct we made (an ArrowSchema or an ArrowArray): its children's
    release, then its own references dropped and its release set to NULL, as the spec asks."""
    s = pointer.contents
    for i in range(s.n_children):
        child = s.children[i].contents
        if child.release:
            child.release(s.children[i])
    _live.pop(s.private_data or 0, None)
    ctypes.c_void_p.from_address(ctypes.addressof(s) + type(s).release.offset).value = None


_release_schema = _SchemaRelease(_release_function)
_release_array = _ArrayRelease(_release_function)


def _move(source: int, target: ctypes.Structure, release_offset: int) -> None:
    """Moves a struct (the spec's move: a bitwise copy, then the source marked released)."""
    ctypes.memmove(ctypes.addressof(target), source, ctypes.sizeof(target))
    ctypes.c_void_p.from_address(source + release_offset).value = None


# ---- Streams ------------------------------------------------------------------------------------

class Stream:
    """An ``ArrowArrayStream`` of one schema and a list of batches this object owns until the
    library takes them. ``struct`` is what the library is given (``byref``)."""

    def __init__(self, schema: ArrowSchema, batches: List[ArrowArray]) -> None:
        self.schema: Optional[ArrowSchema] = schema
        self.batches = batches
        self.next = 0
        self.struct = ArrowArrayStream()
        # The callbacks are kept on the object: C calls them as long as the stream lives.
        self._callbacks = (_StreamFields["get_schema"](self._get_schema), _StreamFields["get_next"](self._get_next),
                           _StreamFields["get_last_error"](lambda stream: None), _StreamFields["release"](self._release))
        (self.struct.get_schema, self.struct.get_next, self.struct.get_last_error,
         self.struct.release) = self._callbacks

    def _get_schema(self, stream: Any, out: Any) -> int:
        if self.schema is None:
            return 22  # EINVAL: handed out already
        _move(ctypes.addressof(self.schema), out.contents, ArrowSchema.release.offset)
        self.schema = None
        return 0

    def _get_next(self, stream: Any, out: Any) -> int:
        if self.next < len(self.batches):
            _move(ctypes.addressof(self.batches[self.next]), out.contents, ArrowArray.release.offset)
            self.next += 1
        else:
            ctypes.memset(ctypes.addressof(out.contents), 0, ctypes.sizeof(ArrowArray))
        return 0

    def _release(self, stream: Any) -> None:
        if self.schema is not None and self.schema.release:
            self.schema.release(ctypes.byref(self.schema))
        self.schema = None
        for batch in self.batches[self.next:]:
            if batch.release:
                batch.release(ctypes.byref(batch))
        self.next = len(self.batches)
        ctypes.c_void_p.from_address(ctypes.addressof(stream.contents) + ArrowArrayStream.release.offset).value = None

    def close(self) -> None:
        """Releases what the library did not take (it always takes the stream; this is for failures
        before the call)."""
        if self.struct.release:
            self.struct.release(ctypes.byref(self.struct))


class _Foreign:
    """A stream moved out of a producer's capsule: the library releases it."""

    def __init__(self, pointer: int) -> None:
        self.struct = ArrowArrayStream()
        _move(pointer, self.struct, ArrowArrayStream.release.offset)

    def close(self) -> None:
        if self.struct.release:
            self.struct.release(ctypes.byref(self.struct))


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_arrow(data: Any) -> bool:
    """True for an object the bulk writes read as Arrow (rather than as an iterable of mappings)."""
    return hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__") or _is_pandas(data)


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.startswith("pandas.") and type(data).__name__ == "DataFrame"


def arrow_stream(data: Any) -> Any:
    """The stream the library reads from an Arrow-capable object."""
    if _is_pandas(data):
        try:
            import pyarrow  # type: ignore[import-untyped, unused-ignore]
        except ImportError:
            raise InvalidArgumentError("a pandas DataFrame is read through pyarrow: pip install 'noteskit[arrow]'") from None
        data = pyarrow.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):
        capsule = data.__arrow_c_stream__()
        return _Foreign(_capsule_pointer(capsule, b"arrow_array_stream"))
    schema_capsule, array_capsule = data.__arrow_c_array__()
    schema, batch = ArrowSchema(), ArrowArray()
    _move(_capsule_pointer(schema_capsule, b"arrow_schema"), schema, ArrowSchema.release.offset)
    _move(_capsule_pointer(array_capsule, b"arrow_array"), batch, ArrowArray.release.offset)
    return Stream(schema, [batch])


# ---- Packing a list of mappings -----------------------------------------------------------------

def _type_name(value: Any) -> str:
    return type(value).__name__


def _missing(value: Any) -> bool:
    """None, NaN, NaT (pandas' or numpy's) and ``pd.NA``: a missing value."""
    if value is None or value is _ABSENT:
        return True
    if isinstance(value, float):
        return value != value
    name = type(value).__name__
    if name in ("NAType", "NaTType"):
        return True
    if name == "datetime64":
        return str(value) == "NaT"
    return False


def _fail(index: int, field: str, message: str) -> ValidationError:
    return ValidationError(f"record {index}: {field} {message}", field=field, line=index)


class _Column(NamedTuple):
    format: bytes
    buffers: Tuple[Any, ...]  # validity (or None), then the others: bytes or array objects
    null_count: int


def _address(buffer: Any) -> Optional[int]:
    if buffer is None:
        return None
    if isinstance(buffer, array):
        return buffer.buffer_info()[0]
    return ctypes.cast(ctypes.c_char_p(buffer), c_void_p).value


def _bitmap(valid: bytes) -> bytes:
    """One byte 0/1 per value as an Arrow validity bitmap (least significant bit first)."""
    n = len(valid)
    return int(valid.translate(_BITS)[::-1] or b"0", 2).to_bytes((n + 7) // 8, "little")


def _text(field: Field, values: List[Any], first: int) -> _Column:
    strings: List[str] = values
    valid: Optional[bytearray] = None
    if set(map(type, values)) != {str}:
        strings, valid = [], bytearray(len(values))
        for i, v in enumerate(values):
            if isinstance(v, str):
                strings.append(v)
                valid[i] = 1
            elif _missing(v):
                if field.required:
                    raise _fail(first + i, field.name, "is missing" if v is _ABSENT else f"is missing ({v!r})")
                strings.append("")
            else:
                raise _fail(first + i, field.name, f"must be a string, got {_type_name(v)}")
    joined = "".join(strings)
    if joined.isascii():
        data = joined.encode("ascii")
        lengths: Any = map(len, strings)
    else:
        try:
            encoded = [s.encode("utf-8") for s in strings]
        except UnicodeEncodeError:
            bad = next(i for i, s in enumerate(strings) if not _encodable(s))
            raise InvalidArgumentError(f"record {first + bad}: {field.name} is not valid Unicode (it has a lone surrogate)",
                                       field=field.name, line=first + bad) from None
        data = b"".join(encoded)
        lengths = map(len, encoded)
    offsets = array("q", accumulate(lengths, initial=0))
    nulls = 0 if valid is None else len(values) - sum(valid)
    return _Column(b"U", (_bitmap(bytes(valid)) if valid is not None and nulls else None, offsets, data), nulls)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _flag(field: Field, values: List[Any], first: int) -> _Column:
    if set(map(type, values)) == {bool}:
        return _Column(b"C", (None, bytes(values)), 0)
    out = bytearray(len(values))
    for i, v in enumerate(values):
        if v is True or v is False or getattr(getattr(v, "dtype", None), "kind", "") == "b":  # numpy's bool
            out[i] = bool(v)
        elif _missing(v):
            raise _fail(first + i, field.name, "is missing" if v is _ABSENT else f"is missing ({v!r})")
        else:
            raise _fail(first + i, field.name, f"must be true or false, got {_type_name(v)}")
    return _Column(b"C", (None, bytes(out)), 0)


def _time(field: Field, values: List[Any], first: int, as_text: bool = False) -> _Column:
    valid = bytearray(len(values))
    if as_text:  # ISO-8601 text (the library parses it): every value as text
        texts: List[Any] = []
        for i, v in enumerate(values):
            if _missing(v):
                texts.append(None)
            elif isinstance(v, (str, datetime)):
                texts.append(format_time(v, field.name))
            else:
                texts.append(_milliseconds(field, v, first + i))
                texts[-1] = format_time(_EPOCH + texts[-1] * _MS, field.name)
        return _text(field, texts, first)
    ms = array("q", bytes(8 * len(values)))
    for i, v in enumerate(values):
        if not _missing(v):
            ms[i] = _milliseconds(field, v, first + i)
            valid[i] = 1
    nulls = len(values) - sum(valid)
    return _Column(b"tsm:", (_bitmap(bytes(valid)) if nulls else None, ms), nulls)


def _milliseconds(field: Field, value: Any, index: int) -> int:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return (value - _EPOCH_NAIVE) // _MS
        return (value - _EPOCH) // _MS
    if type(value).__name__ == "datetime64":
        return int(value.astype("datetime64[ms]").astype("int64"))
    raise _fail(index, field.name, f"must be a datetime or ISO-8601 text, got {_type_name(value)}")


def _integer(field: Field, values: List[Any], first: int) -> _Column:
    if set(map(type, values)) == {int}:
        try:
            return _Column(b"l", (None, array("q", values)), 0)
        except OverflowError:
            pass
    out, valid = array("q", bytes(8 * len(values))), bytearray(len(values))
    for i, v in enumerate(values):
        if _missing(v):
            if field.required:
                raise _fail(first + i, field.name, "is missing" if v is _ABSENT else f"is missing ({v!r})")
            continue
        if isinstance(v, bool):
            raise _fail(first + i, field.name, "must be an integer, got bool")
        try:
            n = operator.index(v)
        except TypeError:
            raise _fail(first + i, field.name, f"must be an integer, got {_type_name(v)}") from None
        if not -(2 ** 63) <= n < 2 ** 63:
            raise _fail(first + i, field.name, f"is out of range: {n}")
        out[i], valid[i] = n, 1
    nulls = len(values) - sum(valid)
    return _Column(b"l", (_bitmap(bytes(valid)) if nulls else None, out), nulls)


_PACKERS: Dict[str, Callable[[Field, List[Any], int], _Column]] = {TEXT: _text, FLAG: _flag, INTEGER: _integer}


def pack(records: Sequence[Any], fields: Sequence[Field]) -> Stream:
    """A list of mappings as a stream of struct batches (``BATCH_RECORDS`` records each). An
    optional field no record has is left out of the batches."""
    names = [f.name for f in fields]
    if set(map(type, records)) - {dict}:
        for i, r in enumerate(records):
            if not isinstance(r, _Mapping):
                raise ValidationError(f"record {i}: must be a mapping, got {_type_name(r)}", line=i)
    columns: List[Tuple[Field, List[Any]]] = []
    given, keys = 0, sum(map(len, records))
    required = [f for f in fields if f.required]
    for f in fields:
        if not f.required and keys == given and given == len(records) * len(required):
            continue  # the records have the required fields only: no record has this one
        try:
            values = [r[f.name] for r in records]
        except KeyError:
            values = [r.get(f.name, _ABSENT) for r in records]
        absent = values.count(_ABSENT)
        given += len(values) - absent
        if absent < len(values) or f.required:
            columns.append((f, values))
    if given != keys:  # some record has a key that is not a field
        for i, r in enumerate(records):
            for key in r:
                if key not in names:
                    raise _fail(i, str(key), f"is not a field (the fields are {', '.join(names)})")
    # A time field with any ISO-8601 text goes as text (the library parses it), else as timestamps.
    text_times = {f.name for f, values in columns if f.kind == TIME and any(isinstance(v, str) for v in values)}
    kept = [f for f, _ in columns]
    schema = _schema(kept, text_times)
    batches: List[ArrowArray] = []
    try:
        for first in range(0, len(records), BATCH_RECORDS):
            end = first + BATCH_RECORDS
            packed = [_time(f, values[first:end], first, as_text=f.name in text_times) if f.kind == TIME
                      else _PACKERS[f.kind](f, values[first:end], first) for f, values in columns]
            batches.append(_batch(min(end, len(records)) - first, packed))
    except BaseException:
        Stream(schema, batches).close()
        raise
    return Stream(schema, batches)


def _schema(fields: Sequence[Field], text_times: Any) -> ArrowSchema:
    formats = [b"U" if f.kind == TEXT or f.name in text_times else b"C" if f.kind == FLAG else b"l" if f.kind == INTEGER
               else b"tsm:" for f in fields]
    children = [ArrowSchema() for _ in fields]
    names = [f.name.encode() for f in fields]
    pointers = (POINTER(ArrowSchema) * len(fields))(*[ctypes.pointer(c) for c in children])
    parent = ArrowSchema()
    key = _keep((children, names, pointers, formats))
    for child, name, format, f in zip(children, names, formats, fields):
        child.format, child.name, child.flags = format, name, 0 if f.required else 2
        child.release, child.private_data = _release_schema, None
    parent.format, parent.n_children, parent.children = b"+s", len(fields), pointers
    parent.release, parent.private_data = _release_schema, key
    return parent


def _batch(length: int, columns: List[_Column]) -> ArrowArray:
    children = [ArrowArray() for _ in columns]
    buffers = []
    for child, column in zip(children, columns):
        pointers = (c_void_p * len(column.buffers))(*[_address(b) for b in column.buffers])
        buffers.append(pointers)
        child.length, child.null_count, child.offset = length, column.null_count, 0
        child.n_buffers, child.buffers, child.n_children = len(column.buffers), pointers, 0
        child.release, child.private_data = _release_array, None
    pointers_to = (POINTER(ArrowArray) * len(children))(*[ctypes.pointer(c) for c in children])
    parent = ArrowArray()
    top = (c_void_p * 1)(None)
    parent.length, parent.null_count, parent.offset, parent.n_buffers, parent.buffers = length, 0, 0, 1, top
    parent.n_children, parent.children = len(children), pointers_to
    parent.release = _release_array
    parent.private_data = _keep((children, columns, buffers, pointers_to, top))
    return parent


# ---- What the library hands back ----------------------------------------------------------------

class Created(NamedTuple):
    """What a bulk write assigned, column by column (the buffer ``include/noteskit.h`` documents)."""
    ids: List[int]
    times: List[List[int]]
    flags: bytes
    uids: List[str]
    texts: List[List[str]]


def take_created(pointer: Optional[int], times: int, flags: bool, texts: int) -> Created:
    """Reads and frees the buffer a bulk write handed out."""
    if not pointer:
        raise InvalidArgumentError("the library returned no result")
    try:
        n = c_int64.from_address(pointer).value
        at = pointer + 8
        ids = memoryview(ctypes.string_at(at, 8 * n)).cast("q").tolist()
        at += 8 * n
        columns = []
        for _ in range(times):
            columns.append(memoryview(ctypes.string_at(at, 8 * n)).cast("q").tolist())
            at += 8 * n
        flag_bytes = b""
        if flags:
            flag_bytes = ctypes.string_at(at, n)
            at += (n + 7) & ~7
        joined = ctypes.string_at(at, 36 * n).decode("ascii")
        uids = [joined[k:k + 36] for k in range(0, 36 * n, 36)]
        at += (36 * n + 7) & ~7
        text_columns = []
        for _ in range(texts):
            size = c_int64.from_address(at).value
            offsets = memoryview(ctypes.string_at(at + 8, 8 * (n + 1))).cast("q").tolist()
            at += 8 * (n + 2)
            whole = ctypes.string_at(at, size).decode("utf-8")  # once; then sliced by code points
            text_columns.append([whole[offsets[k]:offsets[k + 1]] for k in range(n)])
            at += (size + 7) & ~7
        return Created(ids, columns, flag_bytes, uids, text_columns)
    finally:
        _ffi.nk_free(pointer)


def write(call: Callable[[Any, int, Any], int], data: Any, fields: Sequence[Field]) -> Tuple[Optional[List[Any]], int]:
    """Runs a bulk write ``call(stream_pointer, flags, out)`` on ``data`` (an Arrow-capable object or
    an iterable of mappings). Returns the records as a list (None for Arrow input, whose texts then
    come back from the library) and the buffer's address."""
    records: Optional[List[Any]] = None
    if is_arrow(data):
        stream = arrow_stream(data)
        flags = _ffi.NK_CREATED_TEXT
    else:
        records = data if type(data) is list else list(data)
        stream = pack(records, fields)
        flags = 0
    out = c_void_p()
    try:
        status = call(ctypes.byref(stream.struct), flags, ctypes.byref(out))
    finally:
        stream.close()  # (the library has released it: this does nothing then)
    _ffi.check(status)
    return records, out.value or 0


def _datetimes(values: List[int]) -> List[datetime]:
    """UTC milliseconds as aware datetimes; a bulk write mostly shares a few times: each made once."""
    made: Dict[int, datetime] = {}
    return [made.get(v) or made.setdefault(v, _EPOCH + v * _MS) for v in values]


T = TypeVar("T")


class CreatedRecords(MutableSequence[T]):
    """What ``create_many`` / ``insert_many`` return: the records created, in record order — a
    list (a ``MutableSequence``, with ``append``, ``sort``...) that is built the first time it is read.

    ``len()`` is known at once. The records themselves (for Arrow input, their texts too) are made
    from the library's buffer the first time any of them, a slice, an iteration, a comparison or the
    ``repr`` is asked for — all of them at once, then kept — so a bulk write whose result is only
    counted, or dropped, never decodes it. It compares equal to a list of the same records
    (``made == [...]``), ``+`` makes a list, and it pickles as a list.
    """
    __slots__ = ("_length", "_build", "_items", "_free", "_lock", "__weakref__")

    def __init__(self, pointer: int, build: Callable[[int], List[T]]) -> None:
        if not pointer:
            raise InvalidArgumentError("the library returned no result")
        self._length = c_int64.from_address(pointer).value
        self._items: Optional[List[T]] = None
        self._build: Optional[Callable[[], List[T]]] = lambda: build(pointer)
        self._free = weakref.finalize(self, _ffi.nk_free, pointer)  # the buffer, if never read
        self._lock = threading.Lock()

    def _list(self) -> List[T]:
        items = self._items
        if items is None:
            with self._lock:
                if self._items is None:
                    build, self._build = self._build, None
                    self._free.detach()  # (the build reads the buffer and frees it)
                    assert build is not None
                    # The cyclic collector is paused meanwhile: a million new records (none of which
                    # can form a cycle) would otherwise set it off again and again, doubling the cost.
                    enabled = gc.isenabled()
                    gc.disable()
                    try:
                        self._items = build()
                    finally:
                        if enabled:
                            gc.enable()
                items = self._items
        return items

    def __len__(self) -> int:
        return self._length if self._items is None else len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> List[T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[T, List[T]]:
        return self._list()[index]

    @overload
    def __setitem__(self, index: int, value: T) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[T]) -> None: ...

    def __setitem__(self, index: Any, value: Any) -> None:
        self._list()[index] = value

    def __delitem__(self, index: Union[int, slice]) -> None:
        del self._list()[index]

    def insert(self, index: int, value: T) -> None:
        self._list().insert(index, value)

    def sort(self, *, key: Optional[Callable[[T], Any]] = None, reverse: bool = False) -> None:
        self._list().sort(key=key, reverse=reverse)

    def __iter__(self) -> Iterator[T]:
        return iter(self._list())

    def __reversed__(self) -> Iterator[T]:
        return reversed(self._list())

    def __contains__(self, value: object) -> bool:
        return value in self._list()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CreatedRecords):
            return self._list() == other._list()
        return self._list() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (as a list's)

    def __add__(self, other: Sequence[T]) -> List[T]:
        return self._list() + list(other)

    def __radd__(self, other: Sequence[T]) -> List[T]:
        return list(other) + self._list()

    def __repr__(self) -> str:
        return repr(self._list())

    def __reduce__(self) -> Tuple[Any, ...]:
        return (list, (self._list(),))


def created_articles(handle: Any, data: Any) -> CreatedRecords[Article]:
    """``Articles.create_many``: writes ``data``; the articles created are built when first read."""
    records, pointer = write(lambda stream, flags, out: _ffi.nk_article_create_many(handle, stream, flags, out),
                             data, ARTICLE_FIELDS)
    # The caller's texts are taken now (the mappings may change before the records are read).
    given = ([r["title"] for r in records], [r["content"] for r in records]) if records is not None else None

    def build(pointer: int) -> List[Article]:
        c = take_created(pointer, 2, False, 0 if given is not None else 2)
        titles, contents = given if given is not None else c.texts
        created = _datetimes(c.times[0])
        updated = created if c.times[1] == c.times[0] else _datetimes(c.times[1])
        return _records(Article, _ARTICLE_SETTERS, (c.ids, c.uids, titles, contents, created, updated, [1] * len(c.ids)))
    return CreatedRecords(pointer, build)


def created_messages(handle: Any, conversation_id: int, data: Any) -> CreatedRecords[Message]:
    """``Messages.insert_many``: writes ``data``; the messages created are built when first read."""
    records, pointer = write(lambda stream, flags, out: _ffi.nk_message_insert_many(handle, conversation_id, stream, flags, out),
                             data, MESSAGE_FIELDS)
    # The caller's texts are taken now (the mappings may change before the records are read).
    given = ([r["content"] for r in records], [r.get("sender") for r in records]) if records is not None else None

    def build(pointer: int) -> List[Message]:
        c = take_created(pointer, 1, True, 0 if given is not None else 2)
        # The library hands back each sender with the texts ("" for none: a sender is never blank).
        contents, senders = given if given is not None else (c.texts[0], [s or None for s in c.texts[1]])
        return _records(Message, _MESSAGE_SETTERS, (c.ids, c.uids, [conversation_id] * len(c.ids), contents,
                                                    list(map(bool, c.flags)), _datetimes(c.times[0]), senders))
    return CreatedRecords(pointer, build)


def update_articles(handle: Any, data: Any) -> Tuple[Dict[str, List[Any]], int]:
    """``Articles.update_many``: sends the rows (mappings packed here, or Arrow columns) and returns
    the batch of the articles as saved."""
    stream = arrow_stream(data) if is_arrow(data) else pack(data if type(data) is list else list(data), UPDATE_FIELDS)
    try:
        return call_batch(_ffi.nk_article_update_many, handle, ctypes.byref(stream.struct))
    finally:
        stream.close()  # (the library has released it: this does nothing then)
