"""Fuzz targets: each takes a store and one input (bytes) and drives the library with it.

A target may end in a :class:`noteskit.NotesError` (the input was refused cleanly); any other
exception, or a crash, is a bug. Targets also check what they can: text that was saved reads back
literally. ``stress/fuzz.py`` runs them under atheris; ``test_fuzz_corpus.py`` replays the kept
corpus (``bindings/python/tests/fuzz_corpus/<target>/``) in the normal test suite.

Targets appear only when the library has the feature they drive (import formats, search, chat).
"""
from __future__ import annotations

import ctypes
import json
import os
import tempfile
import unicodedata
from ctypes import byref, c_void_p
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import noteskit as nk
from noteskit import _ffi

from .common import REPO

CORPUS = REPO / "bindings" / "python" / "tests" / "fuzz_corpus"
SCRATCH = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())


def _text(data: bytes) -> str:
    """Bytes as text the way a Python caller would have it: invalid UTF-8 becomes U+FFFD."""
    return data.decode("utf-8", "replace")


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _split(data: bytes, parts: int) -> List[bytes]:
    """Splits an input on 0xFE bytes into `parts` pieces (missing ones empty)."""
    pieces = data.split(b"\xfe", parts - 1)
    return pieces + [b""] * (parts - len(pieces))


# ---- Targets that need only articles ----------------------------------------------------------

def arrow_records(store: nk.Store, data: bytes) -> None:
    """Raw bytes as an Arrow batch of articles built by hand (the library's Arrow reader): the first
    part picks the title column's layout (string, large_string, a dictionary with int8 indices) and
    its value lengths, the second is its bytes, the third its validity bitmap (or the dictionary's
    indices). Offsets stay within the bytes given (the C Data Interface carries no buffer sizes: a
    producer must not claim more); every value, null and index is the fuzzer's."""
    from noteskit._ffi import ArrowArray, ArrowSchema
    from noteskit import _columns

    spec, text, bits = _split(data, 3)
    n = spec[0] % 9 if spec else 0
    layout = spec[1] % 3 if len(spec) > 1 else 0
    lengths = list(spec[2:2 + n]) + [0] * max(0, n - len(spec[2:2 + n]))
    offsets = [0]
    for length in lengths:
        offsets.append(min(offsets[-1] + length, len(text)))
    large = layout == 1
    validity = (bits + b"\xff" * 2)[:2] if bits else None
    keep: List[Any] = []

    def array(length: int, buffers: List[Optional[bytes]], null_count: int, dictionary: Any = None) -> ArrowArray:
        a = ArrowArray()
        pointers = (c_void_p * len(buffers))(*[None if b is None else ctypes.cast(ctypes.c_char_p(b), c_void_p).value for b in buffers])
        keep.extend([pointers, buffers])
        a.length, a.null_count, a.n_buffers, a.buffers = length, null_count, len(buffers), pointers
        a.release = _columns._release_array
        if dictionary is not None:
            keep.append(dictionary)
            a.dictionary = ctypes.pointer(dictionary)
        return a

    def schema(format: bytes, name: bytes, dictionary: Any = None) -> ArrowSchema:
        s = ArrowSchema()
        s.format, s.name, s.release = format, name, _columns._release_schema
        if dictionary is not None:
            keep.append(dictionary)
            s.dictionary = ctypes.pointer(dictionary)
        return s

    packed_offsets = b"".join(o.to_bytes(8 if large else 4, "little", signed=True) for o in offsets)
    if layout == 2:  # a dictionary of the values, indexed by the third part's bytes (int8, any value)
        values = array(n, [None, packed_offsets, text], 0)
        indices = (bits + bytes(n))[:n]
        title = array(n, [None, indices], 0, dictionary=values)
        title_schema = schema(b"c", b"title", dictionary=schema(b"u", b""))
    else:
        title = array(n, [validity, packed_offsets, text], -1 if validity else 0)
        title_schema = schema(b"U" if large else b"u", b"title")
    content_offsets = b"".join(k.to_bytes(4, "little") for k in range(n + 1))
    content = array(n, [None, content_offsets, b"c" * n], 0)
    columns = _columns.Stream(_struct_schema([title_schema, schema(b"u", b"content")], keep),
                              [_struct_array(n, [title, content], keep)])
    before = store.articles.count()
    out = c_void_p()
    status = _ffi.nk_article_create_many(store.handle, byref(columns.struct), 0, byref(out))
    if status:
        error = _ffi.last_error()
        assert store.articles.count() == before, "a refused bulk create wrote something"
        raise error
    _ffi.nk_free(out.value)
    assert store.articles.count() == before + n


def _struct_schema(children: List[Any], keep: List[Any]) -> Any:
    from noteskit._ffi import ArrowSchema
    from noteskit import _columns

    s = ArrowSchema()
    pointers = (ctypes.POINTER(ArrowSchema) * len(children))(*[ctypes.pointer(c) for c in children])
    keep.extend([pointers, children])
    s.format, s.n_children, s.children, s.release = b"+s", len(children), pointers, _columns._release_schema
    return s


def _struct_array(n: int, children: List[Any], keep: List[Any]) -> Any:
    from noteskit._ffi import ArrowArray
    from noteskit import _columns

    a = ArrowArray()
    pointers = (ctypes.POINTER(ArrowArray) * len(children))(*[ctypes.pointer(c) for c in children])
    top = (c_void_p * 1)(None)
    keep.extend([pointers, children, top])
    a.length, a.n_buffers, a.buffers, a.n_children, a.children = n, 1, top, len(children), pointers
    a.release = _columns._release_array
    return a


def article_text(store: nk.Store, data: bytes) -> None:
    """Any text as title and content: saved literally (or refused), read back equal, found by paging."""
    title, content, update = (_text(p) for p in _split(data, 3))
    a = store.articles.create(title=title, content=content)
    got = store.articles.get(a.id)
    assert (got.title, got.content) == (title, content), "text did not round-trip"
    assert store.articles.list(limit=1).items[0].id == a.id
    if update:
        b = store.articles.update(a.id, content=update)
        assert store.articles.get(a.id).content == update == b.content


def cursor(store: nk.Store, data: bytes) -> None:
    """Any text as a list cursor: a page, or ValidationError naming the cursor."""
    try:
        store.articles.list(limit=5, after=_text(data))
    except nk.ValidationError as e:
        assert e.field in ("cursor", "after"), e.field  # "after" when Python refuses a NUL before the call
        raise


TARGETS: Dict[str, Callable[[nk.Store, bytes], None]] = {
    "arrow_records": arrow_records,
    "article_text": article_text,
    "cursor": cursor,
}


# ---- Chat ---------------------------------------------------------------------------------------

def _conversation(store: nk.Store) -> Any:
    for c in store.conversations.iter():
        return c
    return store.conversations.create("fuzz")


def message_text(store: nk.Store, data: bytes) -> None:
    """Any text sent, and any text and time received: stored literally (or refused), read back equal."""
    conv = _conversation(store)
    text, when = (_text(p) for p in _split(data, 2))
    m = conv.send(text)
    assert store.messages.get(m.id).content == text
    r = conv.receive(text, sent_at=when or None)
    got = store.messages.get(r.id)
    assert got.content == text and not got.from_me


# ---- Import parsers ---------------------------------------------------------------------------

def _import(fmt: str, suffix: str) -> Callable[[nk.Store, bytes], None]:
    def target(store: nk.Store, data: bytes) -> None:
        """The bytes as an import file: all of it imported, or a NotesError and nothing written."""
        before = store.articles.count(), store.last_change_seq()
        fd, name = tempfile.mkstemp(suffix=suffix, dir=SCRATCH)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            try:
                store.import_(name, format=fmt)
            except nk.NotesError:
                assert (store.articles.count(), store.last_change_seq()) == before, "a refused import wrote something"
                raise
        finally:
            os.unlink(name)
    target.__name__ = f"import_{fmt}"
    return target


def _csv_legacy(store: nk.Store, data: bytes) -> None:
    """The bytes as a CSV in a legacy encoding (the first byte picks gb18030, cp1252 or utf-16), with
    the delimiter sniffed, any header mapped and unknown columns ignored."""
    encoding = ("gb18030", "cp1252", "utf-16")[data[0] % 3] if data else "gb18030"
    before = store.articles.count(), store.last_change_seq()
    fd, name = tempfile.mkstemp(suffix=".csv", dir=SCRATCH)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data[1:])
        try:
            store.import_(name, encoding=encoding, columns={"Title": "title", "Body": "content"}, unknown_columns="ignore",
                          tz="Asia/Shanghai")
        except nk.NotesError:
            assert (store.articles.count(), store.last_change_seq()) == before, "a refused import wrote something"
            raise
    finally:
        os.unlink(name)


def _markdown_folder(store: nk.Store, data: bytes) -> None:
    """The bytes as one Markdown note (front matter and body) in a folder import."""
    before = store.articles.count(), store.last_change_seq()
    with tempfile.TemporaryDirectory(dir=SCRATCH) as folder:
        Path(folder, "note.md").write_bytes(data)
        try:
            store.import_(folder, format="markdown")
        except nk.NotesError:
            assert (store.articles.count(), store.last_change_seq()) == before, "a refused import wrote something"
            raise


LINK_NAMES = ["a.md", "b.markdown", "sub", "deep", "loop.md", "x.MD", "天气.md", "space name.md", "n"]
LINK_TARGETS = ["..", "../..", "/", ".", "a.md", "sub", "sub/a.md", "../outside", "../outside/secret.md",
                "../in/a.md", "../../in", "loop.md", "nowhere.md", "deep/../../outside/secret.md", "{outside}",
                "{outside}/secret.md", "{root}/a.md", "{root}", "/etc/passwd", "/proc/self/cwd"]


def _markdown_links(store: nk.Store, data: bytes) -> None:
    """The bytes as a folder tree of notes, sub-folders and symbolic links (to places inside and
    outside the folder, relative and absolute, loops, nowhere), imported: every outcome is an import
    or a NotesError, and nothing outside the folder is ever read."""
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        root, outside = Path(tmp, "in"), Path(tmp, "outside")
        root.mkdir()
        outside.mkdir()
        (outside / "secret.md").write_text("---\ntitle: secret\n---\n\nSECRET outside")
        folders = [root]
        for i in range(0, len(data) - 2, 3):
            kind, name, target = data[i] % 4, LINK_NAMES[data[i + 1] % len(LINK_NAMES)], data[i + 2]
            where = folders[target % len(folders)] if kind != 3 else folders[-1]
            path = where / name
            if os.path.lexists(path):
                continue
            if kind == 0:
                path.write_text(f"note {i}")
            elif kind == 1:
                path.mkdir()
                folders.append(path)
            else:
                link = LINK_TARGETS[target % len(LINK_TARGETS)].format(outside=outside, root=root)
                os.symlink(link, path)
        try:
            report = store.import_(root, format="markdown")
        finally:
            contents = [a.content for a in store.articles.iter()]
        assert not any("SECRET" in c for c in contents), "a link out of the folder was read through"
        assert all(not link.startswith("/") and ".." not in link.split("/") for link in report.skipped_links)


def _search_articles(store: nk.Store, data: bytes) -> None:
    """Any text as a search query, any field and case mode. Every hit's spans lie inside the field
    and (case-sensitive) cover the query, compared in NFC as search compares; an article holding
    the query (in NFC: "E" + U+0340 composes to "È", which does not hold "E") is found."""
    if store.articles.count() == 0:
        store.articles.create_many([{"title": t, "content": c} for t, c in SEARCH_ROWS])
    flags = data[:1]
    query = _text(data[1:])
    field = ("any", "title", "content")[flags[0] % 3] if flags else "any"
    case_sensitive = bool(flags and flags[0] & 4)
    if flags and flags[0] & 8 and query.strip():  # store the query itself, so there is a hit to check
        store.articles.create(title="fuzz", content=f"before {query} after")
    page = store.articles.search(query, field=field, case_sensitive=case_sensitive, limit=50)
    for hit in page.items:
        for name, spans in hit.spans.items():
            text = getattr(hit.article, name)
            for start, end in spans:
                assert 0 <= start < end <= len(text), (name, start, end, len(text))
                if case_sensitive:  # compared in NFC; a span may widen to whole normalization segments
                    assert _nfc(query) in _nfc(text[start:end]), (text[start:end], query)
    if case_sensitive and query and field != "title" and "\x00" not in query:
        stored = [a for a in store.articles.iter() if _nfc(query) in _nfc(a.content)]  # search compares in NFC
        if stored and not page.has_more:  # every hit is on this page
            found = {h.article.id for h in page.items}
            assert {a.id for a in stored} <= found, f"{query!r} is stored but not found"


def _search_messages(store: nk.Store, data: bytes) -> None:
    if not any(True for _ in store.conversations.iter()):
        conv = store.conversations.create("fuzz")
        for _, c in SEARCH_ROWS:
            conv.send(c)
    store.messages.search(_text(data), limit=50)


SEARCH_ROWS = [("天气", "今天天气很好 weather is fine"), ("100%", "50% off_sale *now* \"quoted\" \\slash"),
               ("NEAR", "a NEAR b OR c AND NOT d"), ("emoji", "😀👍🏽 family 👨‍👩‍👧"), ("İstanbul", "straße STRASSE ǅ")]


def available(store: nk.Store) -> Dict[str, Callable[[nk.Store, bytes], None]]:
    """Every target the loaded library can run."""
    targets = dict(TARGETS)
    if hasattr(store, "conversations"):
        targets["message_text"] = message_text
    if hasattr(store, "import_"):
        for fmt, suffix in (("json", ".json"), ("jsonl", ".jsonl"), ("csv", ".csv")):
            targets[f"import_{fmt}"] = _import(fmt, suffix)
        targets["import_markdown"] = _markdown_folder
        targets["import_markdown_links"] = _markdown_links
        if hasattr(store, "conversations"):  # transcripts are chat
            targets["import_transcript"] = _import("transcript", ".txt")
        from noteskit import exchange
        if "telegram" in exchange.FORMATS:  # other apps' chat exports
            targets["import_telegram"] = _import("telegram", ".json")
            targets["import_whatsapp"] = _import("whatsapp", ".txt")
            targets["import_csv_legacy"] = _csv_legacy
    if hasattr(store.articles, "search"):
        targets["search_articles"] = _search_articles
    if hasattr(store, "messages") and hasattr(store.messages, "search"):
        targets["search_messages"] = _search_messages
    return targets


def replay(name: str, store: nk.Store, data: bytes) -> Optional[str]:
    """Runs one corpus input; returns the NotesError kind it ended in, or None when it was accepted."""
    target = available(store)[name]
    try:
        target(store, data)
    except nk.NotesError as e:
        return e.kind
    return None


def corpus_files() -> List[Path]:
    return sorted(p for p in CORPUS.glob("*/*") if p.is_file())
