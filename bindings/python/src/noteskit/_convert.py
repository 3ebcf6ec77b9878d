"""Conversions between the library's encodings and Python values, in one place.

Times cross the ABI as UTC milliseconds (Arrow ``timestamp[ms, tz=UTC]``, packed rows) or as
ISO-8601 text (options, bulk JSON); records leave the library as packed rows (one record) and
Arrow batches (lists, decoded by :mod:`noteskit._arrow`) and become the frozen dataclasses of
:mod:`noteskit.models` here. Records are built without going through their ``__init__`` (the
slots are filled directly, as ``pickle`` does): the same objects, a third of the cost.
"""
from __future__ import annotations

import struct
from collections import deque
from datetime import datetime, timedelta, timezone
from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar, Union

from . import _ffi
from ._arrow import MEMORY, ROW_BUFFER_SIZE as _ROW_BUFFER_SIZE, _out
from .errors import InvalidArgumentError, NotesError
from .models import Article, Change, Conversation, Message, MessageHit, Page, SearchHit, Spans

if TYPE_CHECKING:
    from .store import Store

UTC = timezone.utc
T = TypeVar("T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_fromtimestamp = datetime.fromtimestamp
_fromiso = datetime.fromisoformat
# Within ±2**33 seconds of 1970 (years 1697 to 2242) ms / 1000 as a double is within 0.12 µs of
# the exact instant, so fromtimestamp's rounding to the microsecond gives the exact milliseconds.
_FAST = 2 ** 33 * 1000
_MIN_MS = -62_135_596_800_000
_MAX_MS = 253_402_300_799_999


# ---- Times ------------------------------------------------------------------------------------

def time_from_ms(ms: int) -> datetime:
    """UTC milliseconds as an aware ``datetime`` (an instant outside years 1-9999, which only a
    damaged file holds, as the nearest one inside)."""
    if -_FAST < ms < _FAST:
        return _fromtimestamp(ms / 1000, UTC)
    return _EPOCH + timedelta(milliseconds=min(max(ms, _MIN_MS), _MAX_MS))


_per_second = (1000).__rtruediv__   # ms -> ms / 1000


def times(column: List[int]) -> List[datetime]:
    """A column of UTC milliseconds as aware datetimes."""
    try:
        if not column or (-_FAST < min(column) and max(column) < _FAST):
            return [*map(_fromtimestamp, map(_per_second, column), repeat(UTC, len(column)))]
        return [_fromtimestamp(ms / 1000, UTC) if -_FAST < ms < _FAST else time_from_ms(ms) for ms in column]
    except TypeError:  # a null
        return [None if ms is None else time_from_ms(ms) for ms in column]


def ms_from_time(value: Any, field: str) -> int:
    """A ``datetime`` (naive taken as UTC) as UTC milliseconds, or the error that names ``field``."""
    if not isinstance(value, datetime):
        raise InvalidArgumentError(f"{field} must be a datetime, got {type(value).__name__}", field=field)
    moment: datetime = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_time(text: str) -> datetime:
    """ISO-8601 text from the library (always UTC, ``...Z``) as an aware ``datetime``."""
    return _fromiso(text)


def format_time(value: Union[datetime, str], field: str) -> str:
    """A ``datetime`` (naive ones are taken as UTC) or ISO-8601 text, as the library takes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat(timespec="milliseconds")
    raise InvalidArgumentError(f"{field} must be a datetime or ISO-8601 text, got {type(value).__name__}", field=field)


# ---- Records without __init__ -----------------------------------------------------------------

_new = object.__new__


def _slot_setters(cls: type) -> List[Callable[[Any, Any], None]]:
    return [cls.__dict__[name].__set__ for name in cls.__slots__]  # type: ignore[attr-defined]


_M0, _M1, _M2, _M3, _M4, _M5, _M6 = _slot_setters(Message)
assert Article.__slots__ == ("id", "uid", "title", "content", "created_at", "updated_at", "revision")
assert Message.__slots__ == ("id", "uid", "conversation_id", "content", "from_me", "sent_at", "sender")


def message(id: int, uid: str, conversation_id: int, content: str, from_me: bool, sent_at: datetime,
            sender: Optional[str] = None) -> Message:
    m = _new(Message)
    _M0(m, id); _M1(m, uid); _M2(m, conversation_id); _M3(m, content); _M4(m, from_me); _M5(m, sent_at); _M6(m, sender)
    return m


def conversation(store: "Store", id: int, uid: str, title: str, created_at: datetime,
                 last_activity_at: datetime) -> Conversation:
    c = _new(Conversation)
    c.__dict__.update(id=id, uid=uid, title=title, created_at=created_at, last_activity_at=last_activity_at, _store=store)
    return c


# ---- Packed rows (one record) -----------------------------------------------------------------
# int64 size, the integer fields, the byte length of each text (-1: null), then the texts.
_ARTICLE = struct.Struct("<8q").unpack_from   # size, id, created, updated, revision | uid, title, content
_MESSAGE = struct.Struct("<8q").unpack_from   # size, id, conversation_id, from_me, sent_at | uid, content, sender
_CONVERSATION = struct.Struct("<6q").unpack_from  # size, id, created, last_activity | uid, title
_DRAFT = struct.Struct("<9q").unpack_from     # size, id, article_id, base_revision, created, updated | uid, title, content
_nk_free = _ffi.nk_free


def call_row(function: Any, *args: Any) -> int:
    """Calls an export whose last parameter is ``char **out_row`` and returns the packed row's
    address; the caller decodes it with one of the ``*_from_row`` functions, which free it."""
    out = _out
    out.cursor.value = None
    if function(*args, out.cursor_ref):
        raise _ffi.last_error()
    pointer: Optional[int] = out.cursor.value
    if not pointer:
        raise NotesError("the library returned no record")
    return pointer


_I32 = 2 ** 31
_get = _ffi.nk_article_get
_get_int32 = _ffi.nk_article_get_int32


def get_article(store: "Store", id: int) -> Article:
    """``articles.get``, the hottest call: the row is packed into this thread's buffer (no
    allocation, no ``nk_free``; a row too long for it comes back in new memory) and decoded by
    ``article_from_row``.
    The call goes through ``nk_article_get_int32`` when the handle and id fit in 32 bits. The handle
    is read without the property: a closed store's None fails the call, and the property then
    raises the ClosedError. (A call that succeeds always sets ``*out_row``: the out-pointer is not
    cleared before it.)"""
    buffer, cursor, cursor_ref, buffer_ref = _out.get_row
    handle = store._handle
    if -_I32 <= id < _I32 and handle is not None and handle < _I32:
        status = _get_int32(handle, id, buffer_ref, _ROW_BUFFER_SIZE, cursor_ref)
    else:
        status = _get(handle, id, buffer, _ROW_BUFFER_SIZE, cursor_ref)
    if status:
        store.handle  # raises ClosedError once the store is closed
        raise _ffi.last_error()
    p = cursor.value
    if not p:
        raise NotesError("the library returned no record")
    return article_from_row(p, buffer)


# Article's slots on a plain class. A packed row's article is filled in on it by plain attribute
# stores (which the interpreter specializes into direct slot writes) and then made an Article by
# ``__class__`` assignment, which CPython allows between two classes of the same layout: the same
# object ``Article(...)`` would give, for a tenth of the cost of seven calls of the slots' ``__set__``
# (4 000 of a get's 43 000 instructions). The assignment below fails at import, not at a get, if
# the layouts part.
_ArticleSlots: Any = type("_ArticleSlots", (), {"__slots__": Article.__slots__})
_ArticleSlots().__class__ = Article


def article_from_row(p: int, buffer: int = 0) -> Article:
    """The article packed at ``p``, which is freed unless it is ``buffer`` (the caller's memory)."""
    try:
        _, id, created, updated, revision, n_uid, n_title, n_content = _ARTICLE(MEMORY, p)
        at = p + 64
        uid = str(MEMORY[at:at + n_uid], "utf-8", "replace")
        at += n_uid
        title = str(MEMORY[at:at + n_title], "utf-8", "replace")
        at += n_title
        content = str(MEMORY[at:at + n_content], "utf-8", "replace")
    finally:
        if p != buffer:
            _nk_free(p)
    a = _ArticleSlots()
    a.id = id
    a.uid = uid
    a.title = title
    a.content = content
    a.created_at = created_at = _fromtimestamp(created / 1000, UTC) if -_FAST < created < _FAST else time_from_ms(created)
    a.updated_at = created_at if updated == created else (
        _fromtimestamp(updated / 1000, UTC) if -_FAST < updated < _FAST else time_from_ms(updated))
    a.revision = revision
    a.__class__ = Article
    article: Article = a
    return article


def message_from_row(p: int) -> Message:
    try:
        _, id, conversation_id, from_me, sent_at, n_uid, n_content, n_sender = _MESSAGE(MEMORY, p)
        at = p + 64
        uid = str(MEMORY[at:at + n_uid], "utf-8", "replace")
        at += n_uid
        content = str(MEMORY[at:at + n_content], "utf-8", "replace")
        at += n_content
        sender = None if n_sender < 0 else str(MEMORY[at:at + n_sender], "utf-8", "replace")
    finally:
        _nk_free(p)
    return message(id, uid, conversation_id, content, from_me == 1, time_from_ms(sent_at), sender)


def conversation_from_row(p: int, store: "Store") -> Conversation:
    try:
        _, id, created, last_activity, n_uid, n_title = _CONVERSATION(MEMORY, p)
        at = p + 48
        uid = str(MEMORY[at:at + n_uid], "utf-8", "replace")
        at += n_uid
        title = str(MEMORY[at:at + n_title], "utf-8", "replace")
    finally:
        _nk_free(p)
    return conversation(store, id, uid, title, time_from_ms(created), time_from_ms(last_activity))


def draft_from_row(p: int) -> Dict[str, Any]:
    """A draft's fields by name (``article_id`` and ``base_revision`` None for a new article)."""
    try:
        _, id, article_id, base_revision, created, updated, n_uid, n_title, n_content = _DRAFT(MEMORY, p)
        at = p + 72
        uid = str(MEMORY[at:at + n_uid], "utf-8", "replace")
        at += n_uid
        title = str(MEMORY[at:at + n_title], "utf-8", "replace")
        at += n_title
        content = str(MEMORY[at:at + n_content], "utf-8", "replace")
    finally:
        _nk_free(p)
    return {"id": id, "uid": uid, "article_id": None if article_id < 0 else article_id,
            "base_revision": None if base_revision < 0 else base_revision, "title": title, "content": content,
            "created_at": time_from_ms(created), "updated_at": time_from_ms(updated)}


# ---- Batches (lists of records) ---------------------------------------------------------------

Columns = Dict[str, List[Any]]


_ARTICLE_SETTERS = tuple(_slot_setters(Article))
_MESSAGE_SETTERS = (_M0, _M1, _M2, _M3, _M4, _M5, _M6)
_consume: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend


def _records(cls: type, setters: Tuple[Callable[[Any, Any], None], ...], columns: Tuple[List[Any], ...]) -> List[Any]:
    """Records of ``cls`` made column by column: each slot of every record set by one C-level ``map``."""
    n = len(columns[0])
    made: List[Any] = [*map(_new, repeat(cls, n))]  # ([*...], not list(): see _arrow._numbers)
    if n < 4:  # (a map per slot costs more than it saves for a row or two)
        for record, row in zip(made, zip(*columns)):
            for setter, value in zip(setters, row):
                setter(record, value)
        return made
    for setter, values in zip(setters, columns):
        _consume(map(setter, made, values))
    return made


def page(items: List[T], next_cursor: Optional[str]) -> Page[T]:
    """A :class:`Page` (frozen: its fields are set as its ``__init__`` would, without the call)."""
    p: Page[T] = _new(Page)
    p.__dict__.update(items=items, next_cursor=next_cursor, has_more=next_cursor is not None)
    return p


def articles(c: Columns) -> List[Article]:
    created, updated = c["created_at"], c["updated_at"]
    created_at = times(created)
    # Articles never edited were updated when created: the same (immutable) datetimes serve both.
    updated_at = created_at if updated == created else times(updated)
    return _records(Article, _ARTICLE_SETTERS, (c["id"], c["uid"], c["title"], c["content"], created_at, updated_at,
                                                c["revision"]))


def messages(c: Columns) -> List[Message]:
    return _records(Message, _MESSAGE_SETTERS, (c["id"], c["uid"], c["conversation_id"], c["content"], c["from_me"],
                                                times(c["sent_at"]), c["sender"]))


def conversations(c: Columns, store: "Store") -> List[Conversation]:
    return [conversation(store, *row) for row in zip(c["id"], c["uid"], c["title"], times(c["created_at"]),
                                                     times(c["last_activity_at"]))]


def changes(c: Columns) -> List[Change]:
    return list(map(Change, c["seq"], c["entity"], c["op"], c["id"], c["uid"], c["revision"], times(c["at"])))


def drafts(c: Columns) -> List[Dict[str, Any]]:
    names = ("id", "uid", "article_id", "base_revision", "title", "content", "created_at", "updated_at")
    rows = zip(c["id"], c["uid"], c["article_id"], c["base_revision"], c["title"], c["content"], times(c["created_at"]),
               times(c["updated_at"]))
    return [dict(zip(names, row)) for row in rows]


def change_from_json(d: Dict[str, Any]) -> Change:
    """A change as the subscribe callback's JSON has it."""
    return Change(d["seq"], d["entity"], d["op"], d["id"], d["uid"], d["revision"], _fromiso(d["at"]))


_set_attribute = object.__setattr__


def _hits(cls: type, name: str, records: List[Any], spans: Tuple[Tuple[str, List[Any]], ...]) -> List[Any]:
    """``cls(record, spans)`` for each record, ``spans`` naming each searched field's span column
    (a frozen dataclass: its ``__dict__`` made whole in one display and set by one C-level ``map``)."""
    n = len(records)
    if len(spans) == 1:
        ((field, column),) = spans
        dicts = [{name: record, "spans": {field: where}} for record, where in zip(records, column)]
    elif len(spans) == 2:
        (first, a), (second, b) = spans
        dicts = [{name: record, "spans": {first: x, second: y}} for record, x, y in zip(records, a, b)]
    else:
        fields = tuple(field for field, _ in spans)
        dicts = [{name: record, "spans": dict(zip(fields, row))} for record, row in zip(records, zip(*(c for _, c in spans)))]
    hits: List[Any] = [*map(_new, repeat(cls, n))]
    _consume(map(_set_attribute, hits, repeat("__dict__", n), dicts))
    return hits


def article_hits(c: Columns, n: int) -> List[SearchHit]:
    spans = tuple((name, c[f"{name}_spans"]) for name in ("title", "content") if f"{name}_spans" in c)
    return _hits(SearchHit, "article", articles(c), spans)


def message_hits(c: Columns, n: int) -> List[MessageHit]:
    return _hits(MessageHit, "message", messages(c), (("content", c["content_spans"]),))


__all__ = ["page", "article", "article_from_row", "get_article", "article_hits", "articles", "call_row", "changes", "conversation",
           "conversation_from_row", "conversations", "draft_from_row", "drafts", "format_time", "message",
           "message_from_row", "message_hits", "messages", "ms_from_time", "parse_time", "time_from_ms",
           "times", "change_from_json"]
