"""Records: the frozen dataclasses the API returns, and the generic :class:`Page` (built by :mod:`noteskit._convert`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, Generic, Iterator, List, Optional, Tuple, TypeVar, Union, cast

if TYPE_CHECKING:
    from .search import Snippet
    from .store import Store

T = TypeVar("T")

def walk(fetch: "Callable[[Optional[str]], Page[T]]") -> Iterator[T]:
    """Every item of a keyset-paged list: calls ``fetch(after)`` page after page until the last."""
    after: Optional[str] = None
    while True:
        page = fetch(after)
        yield from page.items
        if page.next_cursor is None:
            return
        after = page.next_cursor

def _through_constructor(record: Any) -> Tuple[type, Tuple[object, ...]]:
    """How ``pickle`` and ``copy`` rebuild a record with ``__slots__``: through its constructor, with
    its fields in slot order (their default sets the slots one by one, which a frozen dataclass refuses)."""
    return (type(record), tuple(getattr(record, name) for name in record.__slots__))

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

    def __reduce__(self) -> Tuple[type, Tuple[object, ...]]:
        return _through_constructor(self)

    def _repr_html_(self) -> str:
        from ._display import html_record

        return html_record(self)

    def __repr__(self) -> str:  # long text cut: a page of long notes stays readable
        from ._display import record_repr

        return record_repr(self)

@dataclass(frozen=True)
class Message:
    """One chat message: ``from_me`` is True for a message the user sent, False for one received.

    ``content`` is the text exactly as given; ``sent_at`` is an aware UTC ``datetime``. New
    messages get time-ordered uids (UUID version 7). ``sender`` is the author's name in a group chat
    (an imported Telegram or WhatsApp chat, or ``insert_many`` with ``sender``); ``None`` in the
    two-person chats, where ``from_me`` tells who wrote it.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     m = store.conversations.create("Alice").send("  see you at 8  ")
    ...     (m.content, m.from_me)
    ('  see you at 8  ', True)
    """

    __slots__ = ("id", "uid", "conversation_id", "content", "from_me", "sent_at", "sender")
    id: int
    uid: str
    conversation_id: int
    content: str
    from_me: bool
    sent_at: datetime
    sender: Optional[str]

    def __init__(self, id: int, uid: str, conversation_id: int, content: str, from_me: bool, sent_at: datetime,
                 sender: Optional[str] = None) -> None:
        for name, value in (("id", id), ("uid", uid), ("conversation_id", conversation_id), ("content", content),
                            ("from_me", from_me), ("sent_at", sent_at), ("sender", sender)):
            object.__setattr__(self, name, value)

    def __reduce__(self) -> Tuple[type, Tuple[object, ...]]:
        return _through_constructor(self)

    def __repr__(self) -> str:  # long text cut
        from ._display import record_repr

        return record_repr(self)

    def _repr_html_(self) -> str:
        """In a notebook, the message as a chat bubble (mine on the right)."""
        from ._display import html_record

        return html_record(self)

@dataclass(frozen=True)
class Conversation:
    """A chat conversation, bound to the store it came from so that it can be used directly.

    ``last_activity_at`` orders ``store.conversations.list()`` (most recent first): the later of
    ``created_at`` and the newest ``sent_at`` of its messages; it never moves back. The record is
    frozen: :meth:`rename` returns the renamed conversation and leaves this one as it was. Its
    dataclass fields are the model's only; the store it is bound to is kept beside them, so
    ``dataclasses.asdict`` and ``==`` see just the record.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     conv = store.conversations.create("Alice")
    ...     _ = conv.send("hello"); _ = conv.receive("hi")
    ...     [(m.content, m.from_me) for m in conv.history()]
    [('hello', True), ('hi', False)]
    """

    id: int
    uid: str
    title: str
    created_at: datetime
    last_activity_at: datetime

    @property
    def _bound(self) -> "Store":
        store: Optional["Store"] = self.__dict__.get("_store")
        if store is None:
            from .errors import InvalidArgumentError

            raise InvalidArgumentError("this Conversation is not bound to a store (it was built by hand or by "
                                       "dataclasses.replace); get it from store.conversations")
        return store

    def __reduce__(self) -> Tuple[type, Tuple[object, ...]]:
        # pickled, the record travels without its store (a store is a live handle): it comes back
        # unbound, as one from dataclasses.replace, and store.conversations.get(id) binds it again.
        return (type(self), (self.id, self.uid, self.title, self.created_at, self.last_activity_at))

    def __copy__(self) -> "Conversation":  # frozen: a copy may be itself, still bound
        return self

    def __deepcopy__(self, memo: Dict[int, object]) -> "Conversation":
        return self

    def send(self, text: str) -> Message:
        """Adds a message sent by the user (``from_me=True``), now. See :meth:`Messages.send`."""
        return self._bound.messages.send(self.id, text)

    def receive(self, text: str, sent_at: Union[datetime, str, None] = None) -> Message:
        """Adds a message the user received (``from_me=False``), now or at ``sent_at``. See :meth:`Messages.receive`."""
        return self._bound.messages.receive(self.id, text, sent_at=sent_at)

    def history(self, limit: int = 50, before: Optional[str] = None, *, since: Optional[datetime] = None,
                until: Optional[datetime] = None) -> "Page[Message]":
        """A page of this conversation's history, newest page first, oldest first within the page;
        only messages sent in ``[since, until)`` when given. See :meth:`Messages.history`."""
        return self._bound.messages.history(self.id, limit=limit, before=before, since=since, until=until)

    def rename(self, title: str) -> "Conversation":
        """Gives the conversation a new title and returns it renamed (this object is frozen)."""
        return self._bound.conversations.rename(self.id, title)

    def delete(self) -> None:
        """Deletes the conversation and all its messages, in one transaction."""
        self._bound.conversations.delete(self.id)

    def __repr__(self) -> str:  # a long title cut
        from ._display import record_repr

        return record_repr(self)

    def _repr_html_(self) -> str:
        """In a notebook, the title and times above the picture of :meth:`_repr_png_`."""
        from ._display import html_conversation

        return html_conversation(self, self._repr_png_() if "_store" in self.__dict__ else None)

    def _repr_png_(self) -> Optional[bytes]:
        """In a notebook, the conversation as the chat app drew it at 375 pixels (nothing while it has no messages)."""
        import tempfile

        from .errors import ValidationError

        with tempfile.TemporaryDirectory() as folder, self._bound.layout(width=375) as layout:
            try:
                picture = layout.render_conversation(self.id, f"{folder}/conversation.png")
            except ValidationError:  # no messages: nothing to draw
                return None
            return picture._repr_png_()

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

    def __repr__(self) -> str:  # one item a line, long texts cut
        from ._display import page_repr

        return page_repr(self)

    def _repr_html_(self) -> str:
        """A table in a notebook: articles as rows, messages as a chat, search hits with matches highlighted."""
        from ._display import html_page

        return html_page(self)

Spans = Dict[str, List[Tuple[int, int]]]

R = TypeVar("R")


class _Hit(Generic[R]):
    """What both kinds of search hit share: the record found under its kind's name, and the repr."""

    kind: ClassVar[str]
    spans: Spans

    @property
    def record(self) -> R:
        """The record found (:attr:`SearchHit.article`, :attr:`MessageHit.message`): one name for both kinds of hit."""
        return cast(R, getattr(self, self.kind))

    def __repr__(self) -> str:
        from ._display import spans_repr

        return f"{type(self).__name__}({self.kind}={self.record!r}, spans={spans_repr(self.spans)})"


@dataclass(frozen=True, repr=False)
class SearchHit(_Hit[Article]):
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

    #: What was found, in a page of :meth:`Store.search`: ``"article"`` (a :class:`MessageHit` says ``"message"``).
    kind: ClassVar[str] = "article"

    def snippet(self, width: int = 60, field: Optional[str] = None) -> "Snippet":
        """A one-line :class:`Snippet` of ``width`` characters around the first match, for a result list.

        ``field`` is ``"title"`` or ``"content"``; by default the content when it matched, else the
        title when it matched, else the content's beginning. See :class:`Snippet` for how it is cut
        (grapheme clusters are never split) and for ``width=0`` (empty) and widths smaller than the match.
        """
        from .search import snippet

        if field is None:
            field = "title" if self.spans.get("title") and not self.spans.get("content") else "content"
        if field not in ("title", "content"):
            from .errors import ValidationError

            raise ValidationError(f'field must be "title" or "content", got {field!r}', field="field")
        return snippet(getattr(self.article, field), self.spans.get(field, ()), width)

@dataclass(frozen=True, repr=False)
class MessageHit(_Hit[Message]):
    """One message found by :meth:`Messages.search`: the message and where the query matched.

    ``spans`` is ``{"content": [(start, end), ...]}``: code-point offsets of every non-overlapping
    match in ``message.content`` as stored, leftmost first.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     conv = store.conversations.create("Alice")
    ...     _ = conv.send("see you at 8")
    ...     store.messages.search("YOU")[0].spans
    {'content': [(4, 7)]}
    """

    message: Message
    spans: Spans

    #: What was found, in a page of :meth:`Store.search`: ``"message"`` (a :class:`SearchHit` says ``"article"``).
    kind: ClassVar[str] = "message"

    def snippet(self, width: int = 60) -> "Snippet":
        """A one-line :class:`Snippet` of the message's text, ``width`` characters around the first
        match (see :meth:`SearchHit.snippet`).

        >>> import noteskit as nk
        >>> with nk.Store.memory() as store:
        ...     _ = store.conversations.create("Alice").send("Family 👩‍👩‍👧 dinner at 8, bring the 🇯🇵 flag")
        ...     store.messages.search("dinner")[0].snippet(width=12).text   # the family emoji is one character
        '… 👩‍👩‍👧 dinner at…'
        """
        from .search import snippet

        return snippet(self.message.content, self.spans.get("content", ()), width)
