"""Hostile input at every export of the C ABI, generated from ``include/noteskit.h``.

The header is parsed into prototypes; each parameter is classified by its C type (a handle, a
string in, an out-pointer, a number, a callback, user data) and gets every hostile value of its
class while the other parameters keep sensible values: NULL for every pointer, invalid UTF-8,
100 MB strings, SQL/FTS/JSON syntax, negative and huge numbers, forged handles, handles of the
wrong kind, closed handles. What must hold for every call:

- it returns one of the header's status codes, never crashes;
- a failure leaves ``nk_last_error()`` with the same code, a kind and a short, non-empty message
  (it never echoes a 100 MB argument back);
- a failure writes nothing (the store's change feed does not move);
- NULL for a pointer the header does not call nullable is ``NK_E_INVALID_ARGUMENT``, invalid UTF-8
  is ``NK_E_INVALID_ARGUMENT``, a closed handle is ``NK_E_CLOSED``, a forged or wrong-kind handle is
  ``NK_E_INVALID_ARGUMENT`` or ``NK_E_CLOSED``;
- every export is reached (a new export is covered without editing this file).

``storm`` adds threads calling every export that takes a handle (store, layout, rows...) at once while
the store behind those handles is closed under them.
"""
from __future__ import annotations

import ctypes
import json
import random
import re
import tempfile
import threading
from ctypes import byref, c_double, c_int32, c_int64, c_void_p
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .common import REPO

HEADER = REPO / "include" / "noteskit.h"

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1

BAD_UTF8 = [b"\xff", b"abc\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"ok\xf8\x88\x80\x80\x80", b"\xe5\xad", b"\x80" * 64]
SYNTAX = [
    b"'; DROP TABLE articles; --", b"\" OR 1=1 --", b"%", b"_", b"*", b"\\", b"NEAR(a b)", b"a AND b OR NOT c",
    b"title:x", b"^start", b"\"unterminated", b"{}", b"[", b"[" * 20_000, b"null", b"-1", b"0" * 1000,
    b"../../etc/passwd", b"/etc/passwd", b"\xf0\x9f\x98\x80\xe5\xad\x97", b" ", b"",
]
FORGED_CURSORS = [b"articles.1.1.0000000000000000", b"articles.9223372036854775807.-1.ffffffffffffffff",
                  b"x.y.z.w", b"....", b"articles.1.1"]
INT_VALUES = [0, -1, 1, INT64_MIN, INT64_MAX, INT32_MAX + 1, INT32_MIN - 1, 10 ** 18]
INT32_VALUES = [0, -1, 1, INT32_MIN, INT32_MAX, 0x7F, 0x100]
DOUBLE_VALUES = [0.0, -0.0, -1.0, 1e-300, 1e308, float("inf"), float("-inf"), float("nan")]
FORGED_HANDLES = [1, 0x10, 0xDEADBEEF0, 2 ** 60 + 1, 2 ** 64 - 16, 0xFFFF_FFFF_FFFF_FFF1]


# ---- The header ---------------------------------------------------------------------------------

@dataclass
class Param:
    ctype: str
    name: str
    role: str            # handle, out_handle, string, out_string, out_scalar, out_buffer, out_arrow, int64, int32, double,
                         # callback, user_data, pointer, arrow_stream
    kind: str = ""       # the handle type for handle/out_handle
    nullable: bool = False


@dataclass
class Export:
    name: str
    restype: str
    params: List[Param]
    doc: str

    @property
    def handle_params(self) -> List[Param]:
        return [p for p in self.params if p.role == "handle"]


@dataclass
class Header:
    exports: Dict[str, Export]
    handle_types: List[str]
    codes: Dict[int, str]
    callbacks: List[str]


def parse_header(path: Path = HEADER) -> Header:
    """The exports, handle types, callback types and status codes the header declares."""
    text = path.read_text()
    handle_types = re.findall(r"typedef\s+struct\s+(nk_\w+)\s+\1\s*;", text)
    callbacks = re.findall(r"typedef\s+\w+\s*\(\s*\*\s*(nk_\w+)\s*\)", text)
    codes = {int(v): k for k, v in re.findall(r"#define\s+(NK_(?:OK|E_\w+))\s+(\d+)", text)}
    exports: Dict[str, Export] = {}
    for match in re.finditer(r"^(?!typedef)([A-Za-z_][\w \t]*?\**)\s*\b(nk_\w+)\s*\(([^()]*)\)\s*;", text, re.M):
        restype, name, params_text = match.group(1).strip(), match.group(2), " ".join(match.group(3).split())
        doc = _doc_before(text, match.start())
        params = [] if params_text in ("", "void") else [_param(p, handle_types, callbacks, doc) for p in params_text.split(",")]
        exports[name] = Export(name, restype, params, doc)
    return Header(exports, handle_types, codes, callbacks)


def _doc_before(text: str, start: int) -> str:
    """What the header says about the prototype at `start`: the comment right above it, plus the
    notes of its section (comments since the last "---- Section ----" line that are not attached
    to another prototype)."""
    section = max(text.rfind("/* ----", 0, start), 0)
    notes = []
    for m in re.finditer(r"/\*(.*?)\*/", text[section:start], re.S):
        after = text[section + m.end():start]
        attached = re.match(r"\s*(?:#define[^\n]*\s*)*(?!typedef)[A-Za-z_][\w \t*]*\bnk_\w+\s*\(", after)
        own = not after.strip() or re.fullmatch(r"\s*(?:#define[^\n]*\s*)*", after)
        if own or not attached:
            notes.append(" ".join(m.group(1).replace("*", " ").split()))
    return " ".join(notes)


def _nullable_names(doc: str) -> set:
    """Parameter names the doc comment marks nullable: "after (nullable)", "title and/or content (nullable: ...)", "a, b (nullable)"."""
    names = set()
    for group in re.findall(r"((?:\w+(?:, | and/or | and | or ))*\w+) \(nullable", doc):
        names.update(re.split(r", | and/or | and | or ", group))
    return names


def _param(text: str, handle_types: List[str], callbacks: List[str], doc: str) -> Param:
    text = text.strip()
    match = re.match(r"(.*?)(\w+)$", text)
    assert match, text
    ctype, name = " ".join(match.group(1).replace("*", " * ").split()), match.group(2)
    base, stars = ctype.replace("*", "").replace("const", "").strip(), ctype.count("*")
    if base in handle_types:
        role = {1: "handle", 2: "out_handle"}[stars]
        return Param(ctype, name, role, kind=base)
    if base in callbacks:
        return Param(ctype, name, "callback", nullable=name in _nullable_names(doc))
    if base == "char":
        role = {1: "string", 2: "out_string"}[stars]
        return Param(ctype, name, role, nullable=role == "string" and name in _nullable_names(doc))
    if base.startswith("struct Arrow") and stars == 1 and name.startswith("out"):
        return Param(ctype, name, "out_arrow", kind=base[len("struct "):])
    if base == "void" and stars == 1:
        return Param(ctype, name, "user_data" if "user_data" in name else "pointer")
    if base == "void" and stars == 2:
        return Param(ctype, name, "out_buffer")
    if base == "struct ArrowArrayStream" and stars == 1 and not name.startswith("out"):
        return Param(ctype, name, "arrow_stream")
    if stars == 1 and base in ("int64_t", "int32_t", "double", "uint8_t"):
        return Param(ctype, name, "out_scalar", kind=base)
    if stars == 0 and base in ("int64_t", "int32_t", "double"):
        return Param(ctype, name, base.replace("_t", ""))
    raise AssertionError(f"abi_sweep does not know how to drive parameter {text!r}; teach _param about it")


# ---- Calling ------------------------------------------------------------------------------------

class Ctx:
    """A fresh in-memory store with an article, a draft and one handle of every other kind."""

    def __init__(self, sweep: "Sweep") -> None:
        self.sweep = sweep
        self.handles: Dict[str, int] = {}
        self.to_close: List[Tuple[str, int]] = []

    def handle(self, kind: str) -> Optional[int]:
        if kind not in self.handles:
            made = self.sweep.make_handle(kind, self)
            if made is None:
                return None
            self.handles[kind] = made
            self.to_close.append((kind, made))
        return self.handles[kind]

    def close(self) -> None:
        for kind, h in reversed(self.to_close):
            self.sweep.close_handle(kind, h)
        self.to_close.clear()
        self.handles.clear()


@dataclass
class Figures:
    calls: int = 0
    failures: int = 0
    exports: set = field(default_factory=set)
    by_status: Dict[str, int] = field(default_factory=dict)


class Sweep:
    def __init__(self, big_mb: int, tmp: Path) -> None:
        from noteskit import _ffi  # imported here so that `python -m stress --help` needs no library
        self.ffi = _ffi
        self.header = parse_header()
        self.tmp = tmp
        self.big = b"a" * (big_mb * 2 ** 20)
        self.big_multibyte = "字".encode() * (big_mb * 2 ** 20 // 3)
        self.figures = Figures()
        self.keep: List[Any] = []  # callbacks kept alive while C may call them
        missing = [n for n in self.header.exports if not hasattr(_ffi, n)]
        assert not missing, f"exports without a Python binding: {missing}"

    # -- handles ------------------------------------------------------------------------------

    def opener(self, kind: str) -> Optional[Export]:
        """An export that makes a handle of `kind` from other handles only (preferring in-memory stores)."""
        makers = [e for e in self.header.exports.values() if any(p.role == "out_handle" and p.kind == kind for p in e.params)]
        makers.sort(key=lambda e: (any(p.role == "string" and not p.nullable for p in e.params), len(e.params)))
        return makers[0] if makers else None

    def closer(self, kind: str) -> Optional[Export]:
        stem = kind[len("nk_"):]
        for suffix in ("close", "free", "destroy"):
            e = self.header.exports.get(f"nk_{stem}_{suffix}")
            if e:
                return e
        return None

    def make_handle(self, kind: str, ctx: Ctx) -> Optional[int]:
        maker = self.opener(kind)
        if maker is None:
            return None
        out = c_void_p()
        args = []
        for p in maker.params:
            if p.role == "out_handle" and p.kind == kind:
                args.append(byref(out))
            else:
                args.append(self.valid(p, ctx, maker))
        status = getattr(self.ffi, maker.name)(*args)
        kept = [None if p.role == "out_handle" and p.kind == kind else a for p, a in zip(maker.params, args)]
        self.release_outs(maker, kept, status)
        assert status == 0, f"{maker.name} with valid arguments failed: {self.ffi.last_error()}"
        return out.value

    def close_handle(self, kind: str, handle: int) -> None:
        closer = self.closer(kind)
        if closer is not None:
            getattr(self.ffi, closer.name)(handle)

    # -- values -------------------------------------------------------------------------------

    def valid(self, p: Param, ctx: Ctx, export: Export) -> Any:
        """A sensible value for `p`: what a well-behaved caller would pass."""
        if p.role == "handle":
            return ctx.handle(p.kind)
        if p.role == "out_handle":
            return byref(c_void_p())
        if p.role in ("out_string", "out_buffer"):
            return byref(c_void_p())
        if p.role == "out_arrow":
            return byref(getattr(self.ffi, p.kind)())
        if p.role == "arrow_stream":  # records in: one good record, packed as the package packs them
            from noteskit import _columns
            articles = "nk_article" in export.name or export.name == "nk_store_import_table"  # (its table is "articles")
            fields = _columns.ARTICLE_FIELDS if articles else _columns.MESSAGE_FIELDS
            stream = _columns.pack([{"title": "t", "content": "c"} if articles else {"content": "c", "from_me": True}], fields)
            self.keep.append(stream)
            return byref(stream.struct)
        if p.role == "out_scalar":
            return byref({"int64_t": c_int64, "int32_t": c_int32, "double": c_double}.get(p.kind, c_int64)())
        if p.role == "string":
            if p.name == "path":
                return str(self.tmp / f"valid-{export.name}.db").encode()
            if p.nullable:
                return None
            if p.name.endswith("_json"):
                if "records" in p.name:
                    return b'[{"title": "t", "content": "c"}]' if "nk_article" in export.name else b'[{"content": "c", "from_me": true}]'
                return b"[1]" if p.name.startswith("ids") else b"{}"
            return {"kind": b"article", "format": b"json", "table": b"articles"}.get(p.name, b"valid text")
        if p.role in ("int64", "int32"):
            return {"limit": 10, "since": 0, "since_ms": INT64_MIN, "until_ms": INT64_MIN, "from_me": -1, "order": 0, "flags": 0, "expected_revision": 0, "max_bytes": 2 ** 30,
                    "cache_bytes": 0, "threads": 1, "row": 0}.get(p.name, 1)
        if p.role == "double":
            return {"size": 17.0, "estimated_height": 150.0}.get(p.name, 320.0)
        if p.role == "callback":
            callback = getattr(self.ffi, p.ctype.replace("*", "").strip())(lambda *a: None)
            self.keep.append(callback)
            return callback
        if p.role == "user_data":
            return None
        if p.role == "pointer":
            return None
        raise AssertionError(p)

    def hostile(self, p: Param, ctx: Ctx) -> List[Tuple[str, Any, Optional[Tuple[int, ...]]]]:
        """(label, value, allowed statuses or None for "any clean status") for parameter `p`."""
        E = self.codes
        out: List[Tuple[str, Any, Optional[Tuple[int, ...]]]] = []
        if p.role in ("handle",):
            out.append(("NULL", None, (E["NK_E_INVALID_ARGUMENT"],)))
            for h in FORGED_HANDLES:
                out.append((f"forged {h:#x}", h, (E["NK_E_INVALID_ARGUMENT"], E["NK_E_CLOSED"])))
            for other in self.header.handle_types:
                if other != p.kind:
                    real = ctx.handle(other)
                    if real is not None:
                        out.append((f"a real {other}", real, (E["NK_E_INVALID_ARGUMENT"],)))
            mine = ctx.handle(p.kind)
            if mine is not None:
                for other_kind in range(16):
                    twisted = (mine & ~0xF) | other_kind
                    if twisted != mine:
                        out.append((f"kind bits {other_kind}", twisted, (E["NK_E_INVALID_ARGUMENT"], E["NK_E_CLOSED"])))
                closed = self.make_handle(p.kind, ctx)
                if closed is not None and self.closer(p.kind):
                    self.close_handle(p.kind, closed)
                    out.append(("closed", closed, (E["NK_E_CLOSED"],)))
        elif p.role in ("out_handle", "out_string", "out_scalar", "out_buffer", "out_arrow"):
            out.append(("NULL", None, (E["NK_E_INVALID_ARGUMENT"],)))
        elif p.role == "arrow_stream":
            from noteskit import _ffi
            out.append(("NULL", None, (E["NK_E_INVALID_ARGUMENT"],)))
            released = _ffi.ArrowArrayStream()  # all zero: release is NULL, as after a release
            self.keep.append(released)
            out.append(("released", byref(released), (E["NK_E_INVALID_ARGUMENT"],)))
        elif p.role == "callback":
            null_function = getattr(self.ffi, p.ctype.replace("*", "").strip())()  # ctypes' NULL function pointer
            out.append(("NULL", null_function, None if p.nullable else (E["NK_E_INVALID_ARGUMENT"],)))
        elif p.role == "string":
            out.append(("NULL", None, None if p.nullable else (E["NK_E_INVALID_ARGUMENT"],)))
            for bad in BAD_UTF8:
                out.append((f"invalid UTF-8 {bad[:8]!r}", bad, (E["NK_E_INVALID_ARGUMENT"],)))
                out.append(("invalid UTF-8 at the end of a long string", b"x" * 70_000 + bad, (E["NK_E_INVALID_ARGUMENT"],)))
            for text in SYNTAX + FORGED_CURSORS:
                out.append((f"text {text[:20]!r}", text, None))
            out.append((f"{len(self.big) >> 20} MB ASCII", self.big, None))
            out.append((f"{len(self.big_multibyte) >> 20} MB CJK", self.big_multibyte, None))
            if p.name == "path":  # hostile file names stay inside the sweep's folder
                prefix = str(self.tmp).encode() + b"/"
                out = [(label, value if value is None else prefix + value, allowed) for label, value, allowed in out]
        elif p.role == "int64":
            out += [(f"{v}", v, None) for v in INT_VALUES]
        elif p.role == "int32":
            out += [(f"{v}", v, None) for v in INT32_VALUES]
        elif p.role == "double":
            out += [(f"{v}", v, None) for v in DOUBLE_VALUES]
        elif p.role == "user_data":
            out += [("NULL", None, None), ("any address", 0xDEADBEEF, None)]
        elif p.role == "pointer":
            out.append(("NULL", None, None))  # nk_free(NULL); any other value must come from the library
        return out

    @property
    def codes(self) -> Dict[str, int]:
        return {v: k for k, v in self.header.codes.items()}

    # -- one call -----------------------------------------------------------------------------

    def release_outs(self, export: Export, args: List[Any], status: int) -> None:
        """Frees owned strings, closes handles and releases Arrow structs a successful call handed
        out (a stream is read to its end first: every get_next must succeed or fail cleanly)."""
        if status != 0:
            return
        for p, a in zip(export.params, args):
            if a is None or not hasattr(a, "_obj"):
                continue
            if p.role in ("out_string", "out_buffer") and a._obj.value:
                self.ffi.nk_free(a._obj.value)
                a._obj.value = None
            elif p.role == "out_handle" and a._obj.value:
                self.close_handle(p.kind, a._obj.value)
            elif p.role == "out_arrow" and a._obj.release:
                if p.kind == "ArrowArrayStream":
                    drain(self.ffi, a._obj)
                a._obj.release(a)

    def change_seq(self, ctx: Ctx) -> Optional[int]:
        store = ctx.handles.get("nk_store")
        if store is None:
            return None
        seq = c_int64()
        return seq.value if self.ffi.nk_store_last_change_seq(store, byref(seq)) == 0 else None

    def call(self, export: Export, args: List[Any], what: str, allowed: Optional[Tuple[int, ...]], ctx: Ctx) -> int:
        function = getattr(self.ffi, export.name)
        before = self.change_seq(ctx)
        result = function(*args)
        self.figures.calls += 1
        self.figures.exports.add(export.name)
        if export.restype != "int32_t" or export.name == "nk_abi_version":
            if export.restype == "char *" and result:
                self.ffi.nk_free(result)
            return 0
        status = result
        name = self.header.codes.get(status)
        assert name is not None, f"{export.name}({what}) returned {status}, not a status code of the header"
        self.figures.by_status[name] = self.figures.by_status.get(name, 0) + 1
        if allowed is not None:
            assert status in allowed, (f"{export.name}({what}) returned {name}, expected one of "
                                       f"{[self.header.codes[a] for a in allowed]}: {self.error_json()}")
        if status != 0:
            self.figures.failures += 1
            error = self.error_json()
            assert error["code"] == status and error["kind"] and error["message"], (export.name, what, error)
            assert len(error["message"]) < 4096, f"{export.name}({what}) echoes its input: a {len(error['message'])}-character message"
            assert status != 99, f"{export.name}({what}) is an internal error: {error}"
            after = self.change_seq(ctx)
            assert before == after, f"{export.name}({what}) failed with {name} but the change feed moved {before} -> {after}"
        self.release_outs(export, args, status)
        return status

    def error_json(self) -> Dict[str, Any]:
        pointer = self.ffi.nk_last_error()
        assert pointer, "a failed call left no last error"
        try:
            return json.loads(ctypes.string_at(pointer))
        finally:
            self.ffi.nk_free(pointer)

    def seed(self, ctx: Ctx) -> None:
        """An article and a draft with id 1 in the context's store, so id-taking calls find something."""
        store = ctx.handle("nk_store")
        out = c_void_p()
        assert self.ffi.nk_article_create(store, b"seed", b"seed content", byref(out)) == 0
        self.ffi.nk_free(out.value)
        assert self.ffi.nk_draft_new(store, b"seed draft", b"x", byref(out)) == 0
        self.ffi.nk_free(out.value)

    # -- the sweep ----------------------------------------------------------------------------

    def run(self) -> Figures:
        for export in self.header.exports.values():
            if not export.params:
                self.call(export, [], "no arguments", None, Ctx(self))
                continue
            for index, p in enumerate(export.params):
                ctx = Ctx(self)
                try:
                    self.seed(ctx)
                    for label, value, allowed in self.hostile(p, ctx):
                        args = [value if i == index else self.valid(q, ctx, export) for i, q in enumerate(export.params)]
                        self.call(export, args, f"{p.name}={label}", allowed, ctx)
                finally:
                    ctx.close()
        return self.figures


def drain(ffi: Any, stream: Any) -> None:
    """Reads a stream's schema and batches to the end (or its first error), releasing each."""
    schema = ffi.ArrowSchema()
    if stream.get_schema(byref(stream), byref(schema)) == 0:
        schema.release(byref(schema))
    while True:
        array = ffi.ArrowArray()
        code = stream.get_next(byref(stream), byref(array))
        if code != 0:
            message = stream.get_last_error(byref(stream))
            assert code in (5, 22) and message, f"get_next failed with {code} without a message"
            return
        if not array.release:
            return
        array.release(byref(array))


def storm(sweep: Sweep, rounds: int, threads: int = 4, calls_per_thread: int = 200, seed: int = 1) -> Dict[str, int]:
    """Threads call every export that takes a handle, with valid arguments, while the store all
    those handles come from is closed under them.

    Every status must be OK or a clean error (``NK_E_CLOSED`` once closed), never a crash.
    """
    E = sweep.codes
    ffi = sweep.ffi
    # every export that takes a handle (store, layout, rows...), all made from the store being closed
    exports = [e for e in sweep.header.exports.values()
               if any(p.role == "handle" for p in e.params) and not e.name.endswith(("_close", "_free"))]
    rng = random.Random(seed)
    seen: Dict[str, int] = {}
    lock = threading.Lock()
    calls = 0
    for _ in range(rounds):
        ctx = Ctx(sweep)
        sweep.seed(ctx)
        for kind in {p.kind for e in exports for p in e.params if p.role == "handle"}:
            ctx.handle(kind)  # made before the threads start: the context is not shared-safe
        store = ctx.handles["nk_store"]
        plans = [[rng.choice(exports) for _ in range(calls_per_thread)] for _ in range(threads)]

        def hammer(plan: List[Export]) -> None:
            nonlocal calls
            for export in plan:
                args = [sweep.valid(p, ctx, export) for p in export.params]
                status = getattr(ffi, export.name)(*args)
                name = sweep.header.codes.get(status, f"unknown {status}")
                if status != 0:
                    error = sweep.error_json()
                    assert error["code"] == status, error
                sweep.release_outs(export, args, status)
                with lock:
                    seen[name] = seen.get(name, 0) + 1
                    calls += 1

        workers = [threading.Thread(target=hammer, args=(plan,)) for plan in plans]
        for w in workers:
            w.start()
        assert ffi.nk_store_close(store) == 0
        for w in workers:
            w.join()
        ctx.handles.pop("nk_store")
        ctx.to_close = [(k, h) for k, h in ctx.to_close if h != store]
        ctx.close()
    assert set(seen) <= {"NK_OK", "NK_E_CLOSED", "NK_E_NOT_FOUND", "NK_E_VALIDATION", "NK_E_CONFLICT"}, seen
    assert "unknown" not in " ".join(seen)
    return {"storm_calls": calls, "storm_closed": seen.get("NK_E_CLOSED", 0)}


def run(big_mb: int = 100, storm_rounds: int = 20) -> Dict[str, Any]:
    """Runs the sweep and the closing storm; returns their figures."""
    with tempfile.TemporaryDirectory(prefix="nk-abi-sweep-") as tmp:
        sweep = Sweep(big_mb, Path(tmp))
        figures = sweep.run()
        not_reached = set(sweep.header.exports) - figures.exports
        assert not not_reached, f"exports the sweep never called: {sorted(not_reached)}"
        storm_figures = storm(sweep, storm_rounds)
    return {"exports": len(figures.exports), "calls": figures.calls, "clean_errors": figures.failures,
            "crashes": 0, **storm_figures}


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--storm-rounds", type=int, default=200)
    args = parser.parse_args()
    show("abi_sweep", run(args.big_mb, args.storm_rounds))
