"""Records: frozen dataclasses built from the library's JSON, and the generic :class:`Page`."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Generic, Iterator, List, Optional, TypeVar, Union

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

    def _repr_html_(self) -> str:
        from ._display import html_record

        return html_record(self)

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "Article":
        return cls(d["id"], d["uid"], d["title"], d["content"], _fromiso(d["created_at"]), _fromiso(d["updated_at"]),
                   d["revision"])


@dataclass(frozen=True)
class Change:
    """One committed change from the change feed: ``op`` is ``"create"``, ``"update"`` or ``"delete"``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="t", content="c")
    ...     store.articles.delete(a.id)
    ...     [(c.seq, c.entity, c.op, c.id) for c in store.changes(since=0)]
    [(1, 'article', 'create', 1), (2, 'article', 'delete', 1)]
    """

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

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     _ = store.articles.create_many([{"title": f"note {i}", "content": "x"} for i in range(3)])
    ...     page = store.articles.list(limit=2)
    ...     print([a.title for a in page], page.has_more)
    ...     print([a.title for a in store.articles.list(limit=2, after=page.next_cursor)])
    ['note 2', 'note 1'] True
    ['note 0']
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

    def _repr_html_(self) -> str:
        """A table in a notebook: articles as rows, messages as a chat, search hits with matches highlighted."""
        from ._display import html_page

        return html_page(self)
