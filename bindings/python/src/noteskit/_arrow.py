"""The consumer side of the Arrow C Data / C Stream Interface, in plain ctypes (pyarrow not needed).

The library hands lists of records out as record batches (``ArrowArray`` + ``ArrowSchema``) and
``select`` results as streams (``ArrowArrayStream``). This module reads the structs' memory
directly (``struct.unpack`` of their bytes, ``memoryview`` casts of the buffers), turns a batch's
columns into Python lists, calls every release callback exactly once, and wraps streams in the
PyCapsules of the Arrow PyCapsule Interface (``__arrow_c_stream__``).
"""
from __future__ import annotations

import ctypes
import struct
import threading
from codecs import utf_8_decode as _utf_8_decode
from ctypes import CFUNCTYPE, addressof, c_char_p, c_void_p, py_object, string_at
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

from . import _ffi
from .errors import InternalError, NotesError

ArrowArray = _ffi.ArrowArray
ArrowSchema = _ffi.ArrowSchema
ArrowArrayStream = _ffi.ArrowArrayStream

# The process's memory as one byte view: a struct or buffer the library handed out is read in
# place (``struct.unpack_from``, slices, ``memoryview.cast``), no ctypes call per read.
MEMORY = memoryview((ctypes.c_char * (1 << 47)).from_address(0)).cast("B")

# length, null_count, offset, n_buffers, n_children, buffers, children, dictionary, release, private_data
_ARRAY = struct.Struct("<5q5Q")
# format, name, metadata, flags, n_children, children, dictionary, release, private_data
_SCHEMA = struct.Struct("<3Q2q4Q")
_ARRAY_SIZE = ctypes.sizeof(ArrowArray)
_SCHEMA_SIZE = ctypes.sizeof(ArrowSchema)
_RELEASE_AT_ARRAY = ArrowArray.release.offset
_RELEASE_AT_SCHEMA = ArrowSchema.release.offset
_RELEASE_AT_STREAM = ArrowArrayStream.release.offset
assert _ARRAY.size == _ARRAY_SIZE and _SCHEMA.size == _SCHEMA_SIZE

_release_type = CFUNCTYPE(None, c_void_p)
_releasers: Dict[int, Any] = {}
_unpack_array = _ARRAY.unpack_from
_unpack_pointer = struct.Struct("<Q").unpack_from


def release(address: int, release_offset: int) -> None:
    """Calls the release callback of the struct at ``address`` unless it is already released (NULL)."""
    (function,) = _unpack_pointer(MEMORY, address + release_offset)
    if not function:
        return
    call = _releasers.get(function)
    if call is None:
        call = _releasers[function] = _release_type(function)
    call(address)


def release_array(array: "ArrowArray") -> None:
    release(addressof(array), _RELEASE_AT_ARRAY)


def release_schema(schema: "ArrowSchema") -> None:
    release(addressof(schema), _RELEASE_AT_SCHEMA)


class Field(NamedTuple):
    """One field of a schema: its name, Arrow format string, nullability and children."""
    name: str
    format: str
    nullable: bool
    children: Tuple["Field", ...]


_POINTERS = [struct.Struct(f"<{n}Q").unpack_from for n in range(33)]


def _pointers(address: int, n: int) -> Tuple[int, ...]:
    if n < 33:
        return _POINTERS[n](MEMORY, address)
    return tuple(MEMORY[address:address + 8 * n].cast("Q").tolist())


def _bits(address: int, n: int) -> str:
    """The first ``n`` bits of a bitmap as a string of '0' and '1', lowest bit first."""
    nbytes = (n + 7) // 8
    value = int.from_bytes(MEMORY[address:address + nbytes], "little")
    return format(value, f"0{nbytes * 8}b")[::-1][:n]


_ONE = "1".__eq__
_UNPACKERS: Dict[Tuple[str, int], Any] = {}


def _numbers(code: str, width: int, start: int, n: int) -> List[int]:
    """``n`` little-endian integers (``struct`` code ``code``, ``width`` bytes each) from ``start``."""
    unpack = _UNPACKERS.get((code, n))
    if unpack is None:
        if n > 1024:  # (large columns: one cast of the memory, no Struct kept for their length)
            values: List[int] = MEMORY[start:start + width * n].cast("q" if code == "q" else "i").tolist()
            return values
        unpack = _UNPACKERS[(code, n)] = struct.Struct(f"<{n}{code}").unpack_from
    return [*unpack(MEMORY, start)]  # (not list(): a list from list() is counted by the GC and not uncounted)


def _strings(data: bytes, o: List[int]) -> List[str]:
    """The texts of a string column: ``data`` holds the bytes from ``o[0]`` on, ``o`` the offsets."""
    base = o[0]
    if base:
        o = [x - base for x in o]
    if data.isascii():  # decoded at once and sliced: byte and character offsets agree
        text = data.decode("ascii")
        return [text[a:b] for a, b in zip(o, o[1:])]
    # (bytes a damaged file holds that are not UTF-8 read as U+FFFD, as the library's own reads do)
    return [data[a:b].decode("utf-8", "replace") for a, b in zip(o, o[1:])]


# ---- Decoding a batch by its schema's plan ----------------------------------------------------
# The library's schemas are made once and kept for the life of the process, and a batch's buffer
# lists follow each other from its struct's own (include/noteskit.h, "Records"): a schema is known
# by the address of its children list, decoded once into a plan (a reader per column, chosen by
# its format), and a batch's buffers are all read by one unpack. A reader takes the rows, the
# buffer addresses and where its column's start (its validity bitmap, then its other buffers).

Reader = Callable[[int, Tuple[int, ...], int], List[Any]]


def _int64s(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    return _numbers("q", 8, b[s + 1], n)


def _int32s(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    return _numbers("i", 4, b[s + 1], n)


def _bools(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    return [*map(_ONE, _bits(b[s + 1], n))]


def _texts(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    o = _numbers("i", 4, b[s + 1], n + 1)
    data = b[s + 2]
    return _strings(MEMORY[data + o[0]:data + o[-1]].tobytes(), o)


def _large_texts(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    o = _numbers("q", 8, b[s + 1], n + 1)
    data = b[s + 2]
    return _strings(MEMORY[data + o[0]:data + o[-1]].tobytes(), o)


def _texts_by_code_points(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    """A call's string column: its ``n + 1`` byte offsets go on with ``n + 1`` code-point offsets,
    read by one unpack; the text is decoded at once and sliced by the code points (row by row,
    with U+FFFD, when its bytes are not UTF-8: a damaged file)."""
    o = _numbers("i", 4, b[s + 1], 2 * n + 2)
    data = b[s + 2]
    start, end = data + o[0], data + o[n]
    c = o[n + 1:]
    try:
        text = _utf_8_decode(MEMORY[start:end])[0]
    except UnicodeDecodeError:
        return _strings(MEMORY[start:end].tobytes(), o[:n + 1])
    if len(text) != c[-1] - c[0]:
        return _strings(MEMORY[start:end].tobytes(), o[:n + 1])
    return [text[x:y] for x, y in zip(c, c[1:])]


def _spans(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
    """list<int32>, the library's match spans (flat start, end pairs): lists of (start, end) tuples,
    paired once for the column. The item child's buffers follow the list's."""
    o = _numbers("i", 4, b[s + 1], n + 1)
    base = o[0]
    flat = iter(_numbers("i", 4, b[s + 3] + 4 * base, o[-1] - base) if o[-1] > base else ())
    if base:
        o = [x - base for x in o]
    pairs = list(zip(flat, flat))
    return [pairs[x >> 1:y >> 1] for x, y in zip(o, o[1:])]


def _nullable(read: Reader) -> Reader:
    """``read`` for a nullable column: rows whose validity bit is 0 are None."""
    def nullable(n: int, b: Tuple[int, ...], s: int) -> List[Any]:
        if not b[s]:
            return read(n, b, s)
        bits = _bits(b[s], n)
        if "1" not in bits:  # every row null (a page of messages without senders)
            return [None] * n
        return [v if bit == "1" else None for v, bit in zip(read(n, b, s), bits)]
    return nullable


# format: (buffers, the reader of a stream's batch, the reader of a call's batch)
_READERS: Dict[str, Tuple[int, Reader, Reader]] = {
    "l": (2, _int64s, _int64s), "tsm:UTC": (2, _int64s, _int64s), "i": (2, _int32s, _int32s), "b": (2, _bools, _bools),
    "u": (3, _texts, _texts_by_code_points), "U": (3, _large_texts, _large_texts), "+l": (4, _spans, _spans),
}


class Schema:
    """A schema the library handed out, decoded once: its fields, and how a batch of it is read."""
    __slots__ = ("names", "width", "buffers", "readers", "call_readers")

    def __init__(self, field: Field) -> None:
        self.names = tuple(f.name for f in field.children)
        self.width = len(field.children)
        starts: List[int] = []
        readers: List[Reader] = []
        call_readers: List[Reader] = []
        at = 1  # (the struct's own validity comes first)
        for f in field.children:
            fmt = f.format if not f.format.startswith("ts") else "tsm:UTC"
            if fmt not in _READERS or (fmt == "+l" and [c.format for c in f.children] != ["i"]):
                raise InternalError(f"unexpected Arrow format {f.format!r} in column {f.name!r}")
            count, read, call_read = _READERS[fmt]
            if f.nullable:
                read, call_read = _nullable(read), _nullable(call_read)
            starts.append(at)
            readers.append(read)
            call_readers.append(call_read)
            at += count
        self.buffers = struct.Struct(f"<{at}Q").unpack_from
        self.readers = tuple(zip(readers, starts))
        self.call_readers = tuple(zip(call_readers, starts))


def _decode_schema(address: int) -> Field:
    fmt, name, flags, n_children, children = _head(MEMORY, address)
    kids = tuple(_decode_schema(child) for child in _pointers(children, n_children))
    return Field(string_at(name).decode() if name else "", string_at(fmt).decode(), bool(flags & 2), kids)


_head = struct.Struct("<2Q8x2qQ").unpack_from   # format, name, flags, n_children, children
_root = struct.Struct("<32xqQ8xQ").unpack_from  # n_children, children, release
_schemas: Dict[int, Schema] = {}


def read_schema(address: int) -> Schema:
    """The schema at ``address`` (not released), found by the address of its children list."""
    n_children, children, release_fn = _root(MEMORY, address)
    if not release_fn:
        raise InternalError("the Arrow schema was already released")
    schema = _schemas.get(children) if n_children else None
    if schema is None:
        schema = Schema(_decode_schema(address))
        if n_children:
            _schemas[children] = schema
    return schema


def read_batch(array: int, schema: Schema, code_points: bool = False) -> Dict[str, List[Any]]:
    """The columns of the record batch (a struct array) at ``array``, by name, as Python lists
    (times as int milliseconds; list<int32>, the match spans' flat start, end pairs, as lists of
    ``(start, end)`` tuples). The array is not released. ``code_points``: the batch was handed out
    by a call (not a stream), so its ``string`` columns' offsets go on with code-point offsets
    (``include/noteskit.h``, "Records"): each column's text is decoded at once and sliced by them."""
    length, _nulls, _offset, _nb, n_children, buffers, _c, _d, release_fn, _p = _unpack_array(MEMORY, array)
    if not release_fn:
        raise InternalError("the Arrow array was already released")
    if n_children != schema.width:
        raise InternalError(f"a batch of {n_children} columns does not match its schema of {schema.width}")
    if not length:
        return {name: [] for name in schema.names}
    b = schema.buffers(MEMORY, buffers)
    return dict(zip(schema.names, [read(length, b, s) for read, s in (schema.call_readers if code_points else schema.readers)]))


#: The bytes of the buffer a packed row is written into when it fits (``nk_article_get``).
ROW_BUFFER_SIZE = 16384


class _Out(threading.local):
    """Out-parameters reused by the calls of one thread: an ArrowArray, an ArrowSchema and a
    pointer (a page's cursor, a packed row), with their addresses and ``byref``s made once, and
    a buffer for packed rows (``row_at``, ``ROW_BUFFER_SIZE`` bytes)."""

    def __init__(self) -> None:
        self.array, self.schema, self.cursor = ArrowArray(), ArrowSchema(), c_void_p()
        self.array_at, self.schema_at = addressof(self.array), addressof(self.schema)
        self.refs = (ctypes.byref(self.array), ctypes.byref(self.schema))
        self.cursor_ref = ctypes.byref(self.cursor)
        self.page_refs = self.refs + (self.cursor_ref,)
        self.row = ctypes.create_string_buffer(ROW_BUFFER_SIZE)
        self.row_at = addressof(self.row)
        #: What ``nk_article_get`` takes and answers in, read with one look-up of this thread's
        #: attributes: the row buffer's address, the out-pointer, its ``byref`` and the buffer's.
        self.get_row = (self.row_at, self.cursor, self.cursor_ref, ctypes.byref(self.row))


_out = _Out()
#: A second set, for a call that hands out two batches at once (``store.search``: its message hits).
_out_second = _Out()


def _take(out: _Out) -> Tuple[Dict[str, List[Any]], int]:
    """The batch in ``out`` as columns and its length; both structs released."""
    try:
        return read_batch(out.array_at, read_schema(out.schema_at), True), _unpack_array(MEMORY, out.array_at)[0]
    finally:
        release(out.array_at, _RELEASE_AT_ARRAY)
        release(out.schema_at, _RELEASE_AT_SCHEMA)


def call_batch(function: Any, *args: Any) -> Tuple[Dict[str, List[Any]], int]:
    """Calls an export whose last parameters are ``ArrowArray *out_array, ArrowSchema *out_schema``;
    returns the batch's columns and its length, both structs released."""
    out = _out
    if function(*args, *out.refs):
        raise _ffi.last_error()
    return _take(out)


def call_page(function: Any, *args: Any) -> Tuple[Dict[str, List[Any]], int, Optional[str]]:
    """Like :func:`call_batch` for a page: the export's last parameter is ``char **out_cursor``
    (owned, NULL on the last page); returns the columns, the length and the next cursor."""
    out = _out
    out.cursor.value = None
    if function(*args, *out.page_refs):
        raise _ffi.last_error()
    pointer = out.cursor.value
    try:
        columns, length = _take(out)
    finally:
        if pointer:
            next_cursor: Optional[str] = string_at(pointer).decode()
            _ffi.nk_free(pointer)
        else:
            next_cursor = None
    return columns, length, next_cursor


# ---- Streams ----------------------------------------------------------------------------------

def stream_error(stream: "ArrowArrayStream", code: int) -> NotesError:
    message = stream.get_last_error(ctypes.byref(stream)) if stream.get_last_error else None
    text = string_at(message).decode("utf-8", "replace") if message else f"error {code}"
    return NotesError(f"reading the Arrow stream failed: {text}")


def iter_batches(open_stream: Callable[[ArrowArrayStream], None]) -> Iterator[Dict[str, List[Any]]]:
    """Opens a stream with ``open_stream(stream)`` and yields its batches' columns, one batch at a
    time; the stream (and every batch) is released however the iteration ends."""
    stream = ArrowArrayStream()
    open_stream(stream)
    try:
        schema = ArrowSchema()
        code = stream.get_schema(ctypes.byref(stream), ctypes.byref(schema))
        if code:
            raise stream_error(stream, code)
        try:
            field = read_schema(addressof(schema))
        finally:
            release_schema(schema)
        while True:
            array = ArrowArray()
            code = stream.get_next(ctypes.byref(stream), ctypes.byref(array))
            if code:
                raise stream_error(stream, code)
            if not array.release:
                return
            try:
                columns = read_batch(addressof(array), field)
            finally:
                release_array(array)
            yield columns
    finally:
        release(addressof(stream), _RELEASE_AT_STREAM)


# ---- PyCapsules -------------------------------------------------------------------------------

_STREAM_CAPSULE = b"arrow_array_stream"
# Function objects of our own (ctypes.pythonapi.X is one shared object whose argtypes another
# module may set differently).
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_char_p, c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_name = ctypes.PYFUNCTYPE(c_void_p, c_void_p)(("PyCapsule_GetName", ctypes.pythonapi))
_malloc = ctypes.PYFUNCTYPE(c_void_p, ctypes.c_size_t)(("PyMem_RawMalloc", ctypes.pythonapi))
_free = ctypes.PYFUNCTYPE(None, c_void_p)(("PyMem_RawFree", ctypes.pythonapi))


def _destroy_capsule(capsule: int) -> None:
    """Releases a stream the consumer did not take out of its capsule, then frees the struct.

    Some consumers rename a capsule whose stream they moved out: it is read under its name now."""
    pointer = _capsule_pointer(capsule, _capsule_name(capsule))
    if pointer:
        release(pointer, _RELEASE_AT_STREAM)
        _free(pointer)


_capsule_destructor = CFUNCTYPE(None, c_void_p)(_destroy_capsule)


def stream_capsule(open_stream: Callable[[ArrowArrayStream], None]) -> Any:
    """A fresh ``arrow_array_stream`` PyCapsule, filled by ``open_stream(stream)``."""
    pointer = _malloc(ctypes.sizeof(ArrowArrayStream))
    if not pointer:
        raise MemoryError("cannot allocate an ArrowArrayStream")
    stream = ArrowArrayStream.from_address(pointer)
    ctypes.memset(pointer, 0, ctypes.sizeof(ArrowArrayStream))
    try:
        open_stream(stream)
    except BaseException:
        _free(pointer)
        raise
    return _capsule_new(pointer, _STREAM_CAPSULE, ctypes.cast(_capsule_destructor, c_void_p).value)


def outstanding() -> int:
    """How many Arrow structs the library handed out that were not released yet (for tests)."""
    return _ffi.call_int(_ffi.nk_arrow_outstanding)


__all__ = ["Field", "call_batch", "call_page", "iter_batches", "outstanding", "read_batch", "read_schema", "release",
           "stream_capsule"]
