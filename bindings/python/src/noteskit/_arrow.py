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


# The library's format strings and field names are made once and never freed (see
# ArrowExport.swift), so a field is known by the addresses of its format and name (and its flags
# and children's): a schema is decoded once per such key, then found in ``_schemas``.
_head = struct.Struct("<2Q8x2qQ").unpack_from   # format, name, flags, n_children, children
_schemas: Dict[Tuple[Any, ...], Field] = {}


def _schema_key(address: int) -> Tuple[Any, ...]:
    fmt, name, flags, n_children, children = _head(MEMORY, address)
    if n_children == 0:
        return (fmt, name, flags)
    return (fmt, name, flags, tuple([_schema_key(child) for child in _pointers(children, n_children)]))


def _decode_schema(address: int) -> Field:
    fmt, name, flags, n_children, children = _head(MEMORY, address)
    kids = tuple(_decode_schema(child) for child in _pointers(children, n_children))
    return Field(string_at(name).decode() if name else "", string_at(fmt).decode(), bool(flags & 2), kids)


def read_schema(address: int) -> Field:
    """The schema at ``address`` (not released)."""
    (release_fn,) = _unpack_pointer(MEMORY, address + _RELEASE_AT_SCHEMA)
    if not release_fn:
        raise InternalError("the Arrow schema was already released")
    # A batch's fields are leaves mostly: its key is read flat (one unpack per field, no call per
    # field); the children of a field with children (the spans' lists) are keyed after them, as
    # _schema_key keys them.
    fmt, name, flags, n_children, children = _head(MEMORY, address)
    heads = [_head(MEMORY, child) for child in _pointers(children, n_children)]
    if [h for h in heads if h[3]]:  # (a children's array is allocated per schema: keyed by what it holds)
        key = (fmt, name, flags, *[h[:4] if h[3] else h for h in heads],
               *[_schema_key(child) for h in heads if h[3] for child in _pointers(h[4], h[3])])
    else:
        key = (fmt, name, flags, *heads)
    field = _schemas.get(key)
    if field is None:
        field = _schemas[key] = _decode_schema(address)
    return field


def _bits(address: int, offset: int, n: int) -> str:
    """Bits ``offset ..< offset + n`` of a bitmap as a string of '0' and '1', lowest bit first."""
    nbytes = (offset + n + 7) // 8
    value = int.from_bytes(MEMORY[address:address + nbytes], "little")
    return format(value, f"0{nbytes * 8}b")[::-1][offset:offset + n]


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


def _text_by_code_points(start: int, end: int, at: int, n: int) -> Optional[List[str]]:
    """The ``n`` texts of a string column whose UTF-8 is at ``start ..< end``, decoded at once and
    sliced by the ``n + 1`` code-point offsets at ``at``; None when the bytes are not UTF-8 (a
    damaged file: the caller decodes row by row, with U+FFFD)."""
    c = _numbers("i", 4, at, n + 1)
    try:
        text = _utf_8_decode(MEMORY[start:end])[0]
    except UnicodeDecodeError:
        return None
    if len(text) != c[-1] - c[0]:
        return None
    return [text[a:b] for a, b in zip(c, c[1:])]


def _column(address: int, field: Field, code_points: bool = False) -> List[Any]:
    length, null_count, offset, n_buffers, n_children, buffers, children, _d, _r, _p = _unpack_array(MEMORY, address)
    if length == 0:
        return []
    buf = _pointers(buffers, n_buffers)
    if null_count == length and buf[0]:  # every row null (a page of messages without senders)
        return [None] * length
    fmt = field.format
    if fmt == "l" or fmt.startswith("ts"):
        values: List[Any] = _numbers("q", 8, buf[1] + 8 * offset, length)
    elif fmt == "i":
        values = _numbers("i", 4, buf[1] + 4 * offset, length)
    elif fmt == "b":
        values = list(map(_ONE, _bits(buf[1], offset, length)))
    elif fmt in ("u", "U"):
        o = (_numbers("i", 4, buf[1] + 4 * offset, length + 1) if fmt == "u" else
             _numbers("q", 8, buf[1] + 8 * offset, length + 1))
        start, end = buf[2] + o[0], buf[2] + o[-1]
        texts = (_text_by_code_points(start, end, buf[1] + 4 * (length + 1), length)
                 if code_points and fmt == "u" and not offset else None)
        values = texts if texts is not None else _strings(MEMORY[start:end].tobytes(), o)
    elif fmt == "+l":
        o = _numbers("i", 4, buf[1] + 4 * offset, length + 1)
        (child,) = _pointers(children, n_children)
        items = _column(child, field.children[0]) if o[-1] > o[0] else []
        base = o[0]
        if base:
            o = [x - base for x in o]
        # The library's only lists are match spans, flat start, end pairs: paired once for the column.
        flat = iter(items)
        pairs = list(zip(flat, flat))
        values = [pairs[a >> 1:b >> 1] for a, b in zip(o, o[1:])]
    else:
        raise InternalError(f"unexpected Arrow format {fmt!r} in column {field.name!r}")
    if null_count and buf[0]:
        values = [v if bit == "1" else None for v, bit in zip(values, _bits(buf[0], offset, length))]
    return values


def read_batch(array: int, schema: Field, code_points: bool = False) -> Dict[str, List[Any]]:
    """The columns of the record batch (a struct array) at ``array``, by name, as Python lists
    (times as int milliseconds; list<int32>, the match spans' flat start, end pairs, as lists of
    ``(start, end)`` tuples). The array is not released. ``code_points``: the batch was handed out
    by a call (not a stream), so its ``string`` columns' offsets go on with code-point offsets
    (``include/noteskit.h``, "Records"): each column's text is decoded at once and sliced by them."""
    length, _nulls, _offset, _nb, n_children, _buffers, children, _d, release_fn, _p = _unpack_array(MEMORY, array)
    if not release_fn:
        raise InternalError("the Arrow array was already released")
    if n_children != len(schema.children):
        raise InternalError(f"a batch of {n_children} columns does not match its schema of {len(schema.children)}")
    if not length:
        return {field.name: [] for field in schema.children}
    return {field.name: _column(child, field, code_points) for child, field in zip(_pointers(children, n_children), schema.children)}


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
