"""Chat: the conversations and messages of a store, as ``store.conversations`` and ``store.messages``."""
from __future__ import annotations

from ctypes import byref
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, MutableSequence, Optional, Tuple, Union

from . import _columns, _ffi
from ._arrow import call_batch, call_page
from ._bulk import id_array, missing_code, pointer, time_bounds
from ._convert import (Columns, call_row, conversation_from_row, conversations, format_time, message_from_row, message_hits,
                       messages, page, times)
from .errors import InvalidArgumentError, NotFoundError
from .models import Conversation, Message, MessageHit, Page, walk
from .selection import Selection, order_code

if TYPE_CHECKING:
    from .store import Store


class Conversations:
    """The conversations of a store, as ``store.conversations``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     alice = store.conversations.create("Alice")
    ...     [c.title for c in store.conversations.list()]
    ['Alice']
    """

    def __init__(self, store: "Store") -> None:
        self._store = store

    def _conversation(self, row: int) -> Conversation:
        return conversation_from_row(row, self._store)

    def create(self, title: str) -> Conversation:
        """Starts a conversation. An empty, whitespace-only or over-long (> 1000 characters) title
        raises :class:`ValidationError` naming ``title``, and nothing is written."""
        return self._conversation(call_row(_ffi.nk_conversation_create, self._store.handle, _ffi.text(title, "title")))

    def get(self, id: int) -> Conversation:
        """The conversation with ``id``; :class:`NotFoundError` if there is none."""
        return self._conversation(call_row(_ffi.nk_conversation_get, self._store.handle, _ffi.integer(id, "id")))

    def list(self, limit: int = 20, after: Optional[str] = None) -> Page[Conversation]:
        """One page of conversations, most recent activity first (``last_activity_at``, then ``id``).

        ``limit`` is 1 to 1000; pass a page's ``next_cursor`` as ``after`` for the next page (same
        cost at any depth). A conversation that gets a message while you page moves to the top: it
        is never seen twice, and shows up on the next first page.
        """
        columns, _, cursor = call_page(_ffi.nk_conversation_list, self._store.handle, _ffi.integer(limit, "limit"),
                                       _ffi.optional_text(after, "after"))
        return page(conversations(columns, self._store), cursor)

    def select(self) -> Selection[Conversation]:
        """Every conversation, most recent activity first, as a lazy :class:`Selection` (see
        :meth:`Articles.select`); iterating it yields bound :class:`Conversation` records."""
        store = self._store

        def open_stream(threads: int, stream: Any) -> None:
            _ffi.check(_ffi.nk_conversation_select(store.handle, threads, byref(stream)))

        def count() -> int:
            return _ffi.call_int(_ffi.nk_conversation_select_count, store.handle)

        def records(columns: Columns) -> List[Conversation]:
            return conversations(columns, store)

        return Selection(open_stream, count, records, "of conversations")

    def count(self) -> int:
        """How many conversations the store holds."""
        return _ffi.call_int(_ffi.nk_conversation_select_count, self._store.handle)

    def __len__(self) -> int:
        """``len(store.conversations)``: as :meth:`count`."""
        return self.count()

    def find(self, title: str) -> List[Conversation]:
        """The conversations titled exactly ``title`` (same characters, same case; none: ``[]``),
        most recent activity first."""
        columns, _ = call_batch(_ffi.nk_conversation_find, self._store.handle, _ffi.text(title, "title"))
        return conversations(columns, self._store)

    def stats(self) -> Selection[Dict[str, Any]]:
        """Per-conversation figures, most recent activity first, as a lazy :class:`Selection`
        (``to_pandas()``, ``to_arrow()``, ``to_polars()``, DuckDB): columns ``id``, ``title``,
        ``messages``, ``sent`` (by the user), ``received``, ``first_at`` and ``last_at`` (the first
        and last message's ``sent_at``; None for a conversation without messages). Iterating it
        yields one dict per conversation.

        >>> import noteskit as nk
        >>> with nk.Store.memory() as store:
        ...     conv = store.conversations.create("Alice")
        ...     _ = conv.send("hello"); _ = conv.receive("hi"); _ = conv.receive("how are you?")
        ...     [(s["title"], s["messages"], s["sent"], s["received"]) for s in store.conversations.stats()]
        [('Alice', 3, 1, 2)]
        """
        store = self._store

        def open_stream(threads: int, stream: Any) -> None:
            _ffi.check(_ffi.nk_conversation_stats(store.handle, byref(stream)))

        def count() -> int:
            return _ffi.call_int(_ffi.nk_conversation_select_count, store.handle)

        def records(columns: Columns) -> List[Dict[str, Any]]:
            figures = dict(columns, first_at=times(columns["first_at"]), last_at=times(columns["last_at"]))
            return [dict(zip(figures, row)) for row in zip(*figures.values())]

        return Selection(open_stream, count, records, "of per-conversation figures")

    def iter(self, batch_size: int = 200) -> Iterator[Conversation]:
        """Every conversation, most recent activity first, fetched lazily ``batch_size`` at a time."""
        return walk(lambda after: self.list(limit=batch_size, after=after))

    def __iter__(self) -> Iterator[Conversation]:
        return self.iter()

    def rename(self, id: int, title: str) -> Conversation:
        """Gives conversation ``id`` a new title (same rules as :meth:`create`) and returns it.
        Its place in the list does not change."""
        return self._conversation(call_row(_ffi.nk_conversation_rename, self._store.handle, _ffi.integer(id, "id"),
                                           _ffi.text(title, "title")))

    def delete(self, id: int) -> None:
        """Deletes conversation ``id`` and all its messages in one transaction; :class:`NotFoundError`
        if there is none. The change feed gets a ``delete`` per message, then one for the conversation."""
        _ffi.check(_ffi.nk_conversation_delete(self._store.handle, _ffi.integer(id, "id")))


class Messages:
    """The chat messages of a store, in every conversation, as ``store.messages``.

    Message text must not be empty or only white space (:class:`ValidationError` on field
    ``"content"``, the model's name for it, and nothing written); it is stored exactly as given.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     conv = store.conversations.create("Alice")
    ...     made = store.messages.insert_many(conv.id, [{"content": "hi", "from_me": False},
    ...                                                 {"content": "hello", "from_me": True}])
    ...     [(m.content, m.from_me) for m in store.messages.history(conv.id)]
    [('hi', False), ('hello', True)]
    """

    def __init__(self, store: "Store") -> None:
        self._store = store

    def send(self, conversation_id: int, text: str) -> Message:
        """Adds a message sent by the user (``from_me=True``) to the conversation, sent now.
        :class:`NotFoundError` for an unknown conversation."""
        return message_from_row(call_row(_ffi.nk_message_send, self._store.handle,
                                         _ffi.integer(conversation_id, "conversation_id"), _ffi.text(text, "content")))

    def receive(self, conversation_id: int, text: str, sent_at: Union[datetime, str, None] = None) -> Message:
        """Adds a message the user received (``from_me=False``). ``sent_at`` (a ``datetime``, naive
        taken as UTC, or ISO-8601 text) dates an imported message; by default it is now."""
        when = None if sent_at is None else _ffi.text(format_time(sent_at, "sent_at"), "sent_at")
        return message_from_row(call_row(_ffi.nk_message_receive, self._store.handle,
                                         _ffi.integer(conversation_id, "conversation_id"), _ffi.text(text, "content"), when))

    def history(self, conversation_id: int, limit: int = 50, before: Optional[str] = None, *,
                since: Optional[datetime] = None, until: Optional[datetime] = None) -> Page[Message]:
        """A page of a conversation's history, paged backward from the newest message ("load earlier").

        The first call returns the newest ``limit`` messages; pass its ``next_cursor`` as ``before``
        for the messages just earlier, and so on. Within a page the items are **oldest first**, as a
        chat shows them; ``has_more`` tells whether anything earlier exists. Ordered by ``sent_at``,
        then ``id``: messages added while you page back are never seen twice nor make you skip one,
        and any depth costs what the newest page costs. ``limit`` is 1 to 1000. With ``since`` /
        ``until`` (naive datetimes are UTC), only the messages sent in ``[since, until)``. A cursor
        of another conversation or range is a :class:`ValidationError` on ``cursor``.
        """
        start, end = time_bounds(since, until)
        columns, _, cursor = call_page(_ffi.nk_conversation_history, self._store.handle,
                                       _ffi.integer(conversation_id, "conversation_id"), _ffi.integer(limit, "limit"),
                                       _ffi.optional_text(before, "before"), start, end)
        return page(messages(columns), cursor)

    def get(self, id: int) -> Message:
        """The message with ``id``; :class:`NotFoundError` if there is none."""
        return message_from_row(call_row(_ffi.nk_message_get, self._store.handle, _ffi.integer(id, "id")))

    def get_many(self, ids: Iterable[int], missing: str = "error") -> List[Message]:
        """The messages with ``ids``, in the order given, read at one moment. An id with no message
        raises :class:`NotFoundError` naming the missing ids, or is left out with ``missing="skip"``."""
        wanted = id_array(ids)
        columns, _ = call_batch(_ffi.nk_message_get_many, self._store.handle, pointer(wanted), len(wanted),
                                missing_code(missing))
        return messages(columns)

    def count(self, conversation: Optional[int] = None, since: Optional[datetime] = None,
              until: Optional[datetime] = None, from_me: Optional[bool] = None) -> int:
        """How many messages (of ``conversation``, or of all) were sent in ``[since, until)`` by the
        user (``from_me=True``), by the others (``False``) or by anyone (None). An unknown
        conversation raises :class:`NotFoundError`."""
        return _ffi.call_int(_ffi.nk_message_select_count, self._store.handle,
                             *_message_filter(conversation, since, until, from_me))

    def __len__(self) -> int:
        """``len(store.messages)``: every message in every conversation, as :meth:`count`."""
        return self.count()

    def iter(self, conversation: Optional[int] = None, *, since: Optional[datetime] = None,
             until: Optional[datetime] = None, from_me: Optional[bool] = None, order: str = "asc") -> Iterator[Message]:
        """Every message (of ``conversation``, or of all; sent in ``[since, until)``; by ``from_me``),
        oldest first (``order="desc"``: newest first), read lazily 65 536 at a time: :meth:`select`'s records."""
        return iter(self.select(conversation=conversation, since=since, until=until, from_me=from_me, order=order))

    def delete_many(self, ids: Iterable[int]) -> int:
        """Deletes the messages with ``ids`` in one transaction: all of them, or (when one does not
        exist: :class:`NotFoundError` naming the missing ids) none. Their conversations' last
        activity stays. Returns how many were deleted (an id given twice counts once)."""
        doomed = id_array(ids)
        return _ffi.call_int(_ffi.nk_message_delete_many, self._store.handle, pointer(doomed), len(doomed))

    def delete_range(self, conversation: int, since: Optional[datetime] = None, until: Optional[datetime] = None) -> int:
        """Deletes the messages of ``conversation`` sent in ``[since, until)`` (None: no bound) in one
        transaction and returns how many. An unknown conversation raises :class:`NotFoundError`;
        ``since`` at or after ``until`` deletes nothing."""
        start, end = time_bounds(since, until)
        return _ffi.call_int(_ffi.nk_message_delete_range, self._store.handle, _ffi.integer(conversation, "conversation"),
                             start, end)

    def delete(self, id: int) -> None:
        """Deletes message ``id``; :class:`NotFoundError` if there is none."""
        _ffi.check(_ffi.nk_message_delete(self._store.handle, _ffi.integer(id, "id")))

    def insert_many(self, conversation_id: int, records: Union[Iterable[Mapping[str, Any]], Any]) -> MutableSequence[Message]:
        """Adds many messages to a conversation in one transaction: all of them, or (on any invalid record) none.

        ``records`` is an iterable of mappings, or columns (an object with ``__arrow_c_stream__`` or
        ``__arrow_c_array__``, a pandas DataFrame). Each record has ``content`` (str) and ``from_me``
        (bool), and optionally ``uid`` (a UUID string), ``sent_at`` (``datetime``, naive taken as
        UTC, or ISO-8601 text; by default the time of the write) and ``sender`` (the author's name
        in a group chat). A failure names the record
        (``line``, 0-based) and the field. Returns the messages created, in record order: a list
        (``MutableSequence[Message]``) built when first read (see :meth:`Articles.create_many`).
        """
        return _columns.created_messages(self._store.handle, _ffi.integer(conversation_id, "conversation_id"), records)

    def search(self, query: str, conversation: Optional[int] = None, case_sensitive: bool = False, limit: int = 20,
               after: Optional[str] = None, order: str = "desc", *, since: Optional[datetime] = None,
               until: Optional[datetime] = None) -> Page[MessageHit]:
        """The messages whose content contains ``query``, newest first (``order="asc"``: in chat
        order, oldest first), in every conversation or in one.

        The same rules as :meth:`Articles.search`: literal substring, NFC, simple case folding
        unless ``case_sensitive``; an empty query lists every message. Each hit is a
        :class:`MessageHit` with ``spans["content"]``. With ``since`` / ``until``, only messages sent
        in ``[since, until)``. Pass ``next_cursor`` as ``after`` (with the same query,
        ``conversation``, ``case_sensitive``, ``order`` and range) for the next page. An
        unknown conversation raises :class:`NotFoundError`. The chat demo's own search is
        ``search(q, case_sensitive=True, order="asc")``.
        """
        if not isinstance(case_sensitive, bool):
            raise InvalidArgumentError(f"case_sensitive must be a bool, got {type(case_sensitive).__name__}",
                                       field="case_sensitive")
        flags = ((_ffi.NK_SEARCH_CASE_SENSITIVE if case_sensitive else 0)
                 | (_ffi.NK_SEARCH_OLDEST_FIRST if order_code(order) == 1 else 0))
        cid = 0 if conversation is None else _ffi.integer(conversation, "conversation")
        if conversation is not None and cid <= 0:
            raise NotFoundError(f"conversation {cid} does not exist")
        start, end = time_bounds(since, until)
        columns, n, cursor = call_page(_ffi.nk_message_search, self._store.handle, _ffi.text(query, "query"), cid,
                                       flags, start, end, _ffi.integer(limit, "limit"), _ffi.optional_text(after, "after"))
        return page(message_hits(columns, n), cursor)

    def select(self, conversation: Optional[int] = None, since: Optional[datetime] = None,
               until: Optional[datetime] = None, from_me: Optional[bool] = None, order: str = "asc") -> Selection[Message]:
        """Every message (of ``conversation``, or of all) sent in ``[since, until)``, by the user
        (``from_me=True``), by the others (``False``) or by anyone (None), oldest first
        (``order="desc"``: newest first), as a lazy :class:`Selection`.

        ``since`` is inclusive and ``until`` exclusive; either may be None, aware or naive (taken
        as UTC). An unknown conversation raises :class:`NotFoundError` when the selection is read.

        >>> import noteskit as nk
        >>> with nk.Store.memory() as store:
        ...     conv = store.conversations.create("Alice")
        ...     _ = conv.send("hello"); _ = conv.receive("hi")
        ...     [m.content for m in store.messages.select(from_me=False)]
        ['hi']
        """
        cid, start, end, who = _message_filter(conversation, since, until, from_me)
        direction = order_code(order)
        store = self._store

        def open_stream(threads: int, stream: Any) -> None:
            _ffi.check(_ffi.nk_message_select(store.handle, cid, start, end, who, direction, threads, byref(stream)))

        def count() -> int:
            return _ffi.call_int(_ffi.nk_message_select_count, store.handle, cid, start, end, who)

        return Selection(open_stream, count, messages,
                         f"of messages (conversation={conversation}, since={since}, until={until}, from_me={from_me}, "
                         f"order={order!r})")

    def search_iter(self, query: str, conversation: Optional[int] = None, case_sensitive: bool = False,
                    batch_size: int = 200, order: str = "desc", *, since: Optional[datetime] = None,
                    until: Optional[datetime] = None) -> Iterator[MessageHit]:
        """Every hit of :meth:`search`, in its ``order``, fetched lazily ``batch_size`` at a time."""
        return walk(lambda after: self.search(query, conversation=conversation, case_sensitive=case_sensitive,
                                              limit=batch_size, after=after, order=order, since=since, until=until))


def _message_filter(conversation: Optional[int], since: Optional[datetime], until: Optional[datetime],
                    from_me: Optional[bool]) -> Tuple[int, int, int, int]:
    """A message selection's filter as the library takes it: conversation id (0: all), since,
    until, from_me (-1: anyone)."""
    cid = 0 if conversation is None else _ffi.integer(conversation, "conversation")
    if conversation is not None and cid <= 0:
        raise NotFoundError(f"conversation {cid} does not exist")
    if from_me is not None and not isinstance(from_me, bool):
        raise InvalidArgumentError(f"from_me must be a bool or None, got {type(from_me).__name__}", field="from_me")
    start, end = time_bounds(since, until)
    return cid, start, end, -1 if from_me is None else int(from_me)
