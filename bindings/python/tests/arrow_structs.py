"""Arrow C Data / C Stream Interface structs built by hand with ctypes, from the specification's
layouts (format/CDataInterface.rst, format/Columnar.rst), for tests that need what no well-behaved
producer emits: offsets past the data, dictionary indices out of range, a stream that fails. Every
release is counted (``Arrow.releases``) so a test can check each struct is released exactly once."""
from __future__ import annotations

import ctypes
import struct
from collections import Counter
from typing import Any, List, Optional, Sequence

from noteskit._ffi import ArrowArray, ArrowArrayStream, ArrowSchema

_SchemaRelease = dict(ArrowSchema._fields_)["release"]
_ArrayRelease = dict(ArrowArray._fields_)["release"]
_Stream = dict(ArrowArrayStream._fields_)


def _null_release(address: int, release_offset: int) -> None:
    ctypes.c_void_p.from_address(address + release_offset).value = None


class Arrow:
    """Makes structs, keeps their memory alive and counts their releases by label."""

    def __init__(self) -> None:
        self.releases: Counter = Counter()
        self.keep: List[Any] = []

        def releasing(what: str) -> Any:
            """The release callback of a schema or an array made here: children first, then counted."""
            def release(pointer: Any) -> None:
                s = pointer.contents
                for i in range(s.n_children):
                    if s.children[i].contents.release:
                        s.children[i].contents.release(s.children[i])
                self.releases[f"{what} {s.private_data or 0}"] += 1
                _null_release(ctypes.addressof(s), type(s).release.offset)
            return release

        self.release_schema, self.release_array = _SchemaRelease(releasing("schema")), _ArrayRelease(releasing("array"))
        self.labels = 0

    def _label(self) -> int:
        self.labels += 1
        return self.labels

    def buffer(self, data: Optional[bytes]) -> Optional[int]:
        if data is None:
            return None
        self.keep.append(data)
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value

    def schema(self, format: bytes, name: Optional[bytes] = None, children: Sequence[ArrowSchema] = (),
               dictionary: Optional[ArrowSchema] = None) -> ArrowSchema:
        s = ArrowSchema()
        s.format, s.name, s.flags = format, name, 2
        self._link(s, children, dictionary)
        s.release, s.private_data = self.release_schema, self._label()
        return s

    def _link(self, struct: Any, children: Sequence[Any], dictionary: Optional[Any]) -> None:
        """Points a schema or an array at its children and dictionary (kept alive by this maker)."""
        if children:
            pointers = (ctypes.POINTER(type(struct)) * len(children))(*[ctypes.pointer(c) for c in children])
            self.keep += [pointers, list(children)]
            struct.n_children, struct.children = len(children), pointers
        if dictionary is not None:
            self.keep.append(dictionary)
            struct.dictionary = ctypes.pointer(dictionary)

    def array(self, length: int, buffers: Sequence[Optional[bytes]], null_count: int = 0, offset: int = 0,
              children: Sequence[ArrowArray] = (), dictionary: Optional[ArrowArray] = None) -> ArrowArray:
        a = ArrowArray()
        a.length, a.null_count, a.offset = length, null_count, offset
        pointers = (ctypes.c_void_p * max(len(buffers), 1))(*[self.buffer(b) for b in buffers])
        self.keep.append(pointers)
        a.n_buffers, a.buffers = len(buffers), pointers
        self._link(a, children, dictionary)
        a.release, a.private_data = self.release_array, self._label()
        return a

    def stream(self, schema: ArrowSchema, batches: Sequence[ArrowArray], fail_at: Optional[int] = None,
               error: bytes = b"disk on fire") -> ArrowArrayStream:
        """A stream of `batches`; with `fail_at`, get_next fails (EIO) when asked for that batch."""
        state = {"next": 0, "schema_given": False}
        message = ctypes.create_string_buffer(error)
        stream = ArrowArrayStream()

        def get_schema(_s: Any, out: Any) -> int:
            ctypes.memmove(ctypes.addressof(out.contents), ctypes.addressof(schema), ctypes.sizeof(ArrowSchema))
            _null_release(ctypes.addressof(schema), ArrowSchema.release.offset)
            state["schema_given"] = True
            return 0

        def get_next(_s: Any, out: Any) -> int:
            k = state["next"]
            if fail_at is not None and k == fail_at:
                return 5
            if k < len(batches):
                ctypes.memmove(ctypes.addressof(out.contents), ctypes.addressof(batches[k]), ctypes.sizeof(ArrowArray))
                _null_release(ctypes.addressof(batches[k]), ArrowArray.release.offset)
            else:
                ctypes.memset(ctypes.addressof(out.contents), 0, ctypes.sizeof(ArrowArray))
            state["next"] = k + 1
            return 0

        def get_last_error(_s: Any) -> Optional[int]:
            return ctypes.addressof(message)

        def release(pointer: Any) -> None:
            for b in batches:  # what the consumer never took
                if b.release:
                    b.release(ctypes.byref(b))
            if schema.release:
                schema.release(ctypes.byref(schema))
            self.releases["stream"] += 1
            _null_release(ctypes.addressof(pointer.contents), ArrowArrayStream.release.offset)

        callbacks = (_Stream["get_schema"](get_schema), _Stream["get_next"](get_next),
                     _Stream["get_last_error"](get_last_error), _Stream["release"](release))
        stream.get_schema, stream.get_next, stream.get_last_error, stream.release = callbacks
        self.keep += [callbacks, message, schema, list(batches), state]
        return stream

    # -- columns ----------------------------------------------------------------------------------

    def strings(self, values: Sequence[Optional[bytes]], large: bool = False) -> List[Optional[bytes]]:
        """The buffers of a string (or large_string) column: validity, offsets, data."""
        offsets, data = [0], b""
        for v in values:
            data += v or b""
            offsets.append(len(data))
        return [bitmap([v is not None for v in values]), struct.pack(f"<{len(offsets)}{'q' if large else 'i'}", *offsets),
                data]

    def table(self, columns: Sequence[tuple], length: int) -> "tuple[ArrowSchema, ArrowArray]":
        """A struct schema and batch of `columns`: (name, format, buffers[, null_count])."""
        schemas = [self.schema(c[1], c[0]) for c in columns]
        arrays = [self.array(length, c[2], null_count=c[3] if len(c) > 3 else 0) for c in columns]
        return self.schema(b"+s", None, schemas), self.array(length, [None], children=arrays)


def bitmap(bits: Sequence[bool]) -> bytes:
    out = bytearray((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)
