"""Records: frozen dataclasses built from the library's JSON, and the generic :class:`Page`."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Generic, Iterator, List, Optional, Tuple, TypeVar, Union

T = TypeVar("T")

_fromiso = datetime.fromisoformat


def parse_time(text: str) -> datetime:
    """ISO-8601 text from the library (always UTC, ``...Z``) as an aware ``datetime``."""
    return _fromiso(text)


def format_time(value: Union[datetime, str], field: str) -> str:
    """A ``datetime`` (naive ones are taken as UTC) or ISO-8601 text, as the library takes it."""
    from .errors import InvalidArgumentError

    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    raise InvalidArgumentError(f"{field} must be a datetime or ISO-8601 text, got {type(value).__name__}", field=field)


@dataclass(frozen=True)
class Article:
    """A saved article.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="2026-11-29", content="今天天气真好")
    ...     (a.title, a.revision)
    ('2026-11-29', 1)
    """

    __slots__ = ("id", "uid", "title", "content", "created_at", "updated_at", "revision")
    id: int
    uid: str
    title: str
    content: str
    created_at: datetime
    updated_at: datetime
    revision: int

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "Article":
        return cls(d["id"], d["uid"], d["title"], d["content"], _fromiso(d["created_at"]), _fromiso(d["updated_at"]),
                   d["revision"])


@dataclass(frozen=True)
class Change:
    """One committed change from the change feed: ``op`` is ``"create"``, ``"update"`` or ``"delete"``."""

    seq: int
    entity: str
    op: str
    id: int
    uid: str
    revision: Optional[int]
    at: datetime

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "Change":
        return cls(d["seq"], d["entity"], d["op"], d["id"], d["uid"], d["revision"], _fromiso(d["at"]))


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a keyset-paged list. Pass ``next_cursor`` as ``after=`` to get the next page.

    Iterating a page iterates its items; ``len(page)`` is their number.
    """

    items: List[T]
    next_cursor: Optional[str]
    has_more: bool = field(default=False)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]


Spans = Dict[str, List[Tuple[int, int]]]


def _spans(d: Dict[str, Any]) -> Spans:
    return {name: [(start, end) for start, end in ranges] for name, ranges in d.items()}


@dataclass(frozen=True)
class SearchHit:
    """One article found by :meth:`Articles.search`: the article and where the query matched.

    ``spans`` maps each field searched (``"title"``, ``"content"``) to the ``(start, end)``
    code-point offsets of every non-overlapping match in that field as stored, leftmost first, so
    ``article.content[start:end]`` is the matched text. A field searched without a match maps to
    ``[]``; a field not searched is absent.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     _ = store.articles.create(title="Weather", content="今天天气真好")
    ...     hit = store.articles.search("天气")[0]
    ...     hit.spans
    {'title': [], 'content': [(2, 4)]}
    """

    article: Article
    spans: Spans

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "SearchHit":
        return cls(Article._from_json(d["article"]), _spans(d["spans"]))
