"""Articles and drafts, as ``store.articles``."""
from __future__ import annotations

from ctypes import byref
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, MutableSequence, Optional, Union

from . import _columns, _ffi
from ._arrow import call_batch, call_page
from ._bulk import id_array, missing_code, pointer, time_bounds
from ._convert import (article_from_row, article_hits, articles, call_row, draft_from_row, drafts, get_article, page)
from .errors import InvalidArgumentError, ValidationError
from .models import Article, Page, SearchHit, walk
from .selection import Selection, order_code

if TYPE_CHECKING:
    from .store import Store

_I64 = 2 ** 63


class Articles:
    """The articles and drafts of a store, as ``store.articles``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="周末", content="今天天气真好")
    ...     _ = store.articles.update(a.id, content="今天下雨了")
    ...     [(x.title, x.content, x.revision) for x in store.articles.list(limit=20)]
    [('周末', '今天下雨了', 2)]
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    def create(self, title: str, content: str) -> Article:
        """Saves a new article. An empty or whitespace-only title or content raises
        :class:`ValidationError` naming the field, and nothing is written."""
        return article_from_row(call_row(_ffi.nk_article_create, self._store.handle, _ffi.text(title, "title"),
                                         _ffi.text(content, "content")))

    def create_many(self, records: Union[Iterable[Mapping[str, Any]], Any]) -> MutableSequence[Article]:
        """Saves many articles in one transaction: all of them, or none if any record is invalid.

        ``records`` is an iterable of mappings, or columns: any object with ``__arrow_c_stream__``
        or ``__arrow_c_array__`` (a pyarrow Table or RecordBatch, a polars DataFrame) or a pandas
        DataFrame. Each record has ``title`` and ``content`` and optionally ``uid``, ``created_at``
        and ``updated_at`` (``datetime``, naive taken as UTC, or ISO-8601 text; an Arrow timestamp of
        any unit). A failure names the record (``line``, 0-based) and the field. Returns the
        articles created, in record order: a list (``MutableSequence[Article]``; equal to a list
        of the same articles, ``+`` makes a list) whose ``len()`` is known at once and whose articles
        are built the first time any of them is read — a write whose result is only counted or
        dropped never decodes it.
        """
        return _columns.created_articles(self._store.handle, records)

    def get(self, id: int) -> Article:
        """The article with ``id``; :class:`NotFoundError` if there is none."""
        if type(id) is not int or not -_I64 <= id < _I64:  # _ffi.integer's checks, inlined for the hottest call
            id = _ffi.integer(id, "id")
        return get_article(self._store, id)

    def update(self, id: int, *, title: Optional[str] = None, content: Optional[str] = None,
               expected_revision: Optional[int] = None) -> Article:
        """Changes the title and/or content, raising the revision by one.

        With ``expected_revision``, raises :class:`ConflictError` (writing nothing) if the article
        was changed since. Saving the values it already has changes nothing.
        """
        expected = 0 if expected_revision is None else _ffi.integer(expected_revision, "expected_revision")
        if expected_revision is not None and expected <= 0:
            raise ValidationError("expected_revision must be a positive revision", field="expected_revision")
        return article_from_row(call_row(
            _ffi.nk_article_update, self._store.handle, _ffi.integer(id, "id"), _ffi.optional_text(title, "title"),
            _ffi.optional_text(content, "content"), expected))

    def delete(self, id: int) -> None:
        """Deletes the article and everything derived from it; :class:`NotFoundError` if there is none."""
        _ffi.check(_ffi.nk_article_delete(self._store.handle, _ffi.integer(id, "id")))

    def count(self, since: Optional[datetime] = None, until: Optional[datetime] = None) -> int:
        """How many articles were created in ``[since, until)`` (all of them by default); naive
        datetimes are UTC, and ``since`` at or after ``until`` counts nothing."""
        start, end = time_bounds(since, until)
        return _ffi.call_int(_ffi.nk_article_select_count, self._store.handle, start, end)

    def __len__(self) -> int:
        """``len(store.articles)``: the number of saved articles, as :meth:`count`."""
        return self.count()

    def list(self, limit: int = 20, after: Optional[str] = None, *, since: Optional[datetime] = None,
             until: Optional[datetime] = None, order: str = "desc") -> Page[Article]:
        """One page of articles, newest first (``created_at``, then ``id``; ``order="asc"``: oldest
        first), created in ``[since, until)`` when given (naive datetimes are UTC).

        ``limit`` is 1 to 1000. Pass a page's ``next_cursor`` as ``after`` for the next page: any
        depth costs what the first page costs, and rows added meanwhile are never seen twice or
        skipped. A cursor remembers its order and range: passing it with others is a
        :class:`ValidationError` on ``cursor``.
        """
        start, end = time_bounds(since, until)
        columns, _, cursor = call_page(_ffi.nk_article_list, self._store.handle, _ffi.integer(limit, "limit"),
                                       _ffi.optional_text(after, "after"), start, end, order_code(order))
        return page(articles(columns), cursor)

    def get_many(self, ids: Iterable[int], missing: str = "error") -> List[Article]:
        """The articles with ``ids``, in the order given, read at one moment. An id with no article
        raises :class:`NotFoundError` naming the missing ids, or is left out with ``missing="skip"``.
        """
        wanted = id_array(ids)
        columns, _ = call_batch(_ffi.nk_article_get_many, self._store.handle, pointer(wanted), len(wanted),
                                missing_code(missing))
        return articles(columns)

    def update_many(self, rows: Union[Iterable[Mapping[str, Any]], Any]) -> List[Article]:
        """Updates many articles in one transaction: all of them, or none.

        Each row has ``id`` and optionally ``title``, ``content`` and ``expected_revision`` (the
        revision it was read at); ``rows`` may also be columns (pyarrow, polars, pandas). One stale
        row raises :class:`ConflictError` naming the article and the row (``line``), an unknown id
        :class:`NotFoundError`, an id given twice :class:`ValidationError` (code ``duplicate_id``):
        then nothing is written. Returns the articles as saved, in row order.
        """
        columns, _ = _columns.update_articles(self._store.handle, rows)
        return articles(columns)

    def delete_many(self, ids: Iterable[int]) -> int:
        """Deletes the articles with ``ids`` and everything derived from them, in one transaction:
        all of them, or (when one does not exist: :class:`NotFoundError` naming the missing ids)
        none. Returns how many were deleted (an id given twice counts once)."""
        doomed = id_array(ids)
        return _ffi.call_int(_ffi.nk_article_delete_many, self._store.handle, pointer(doomed), len(doomed))

    def select(self, since: Optional[datetime] = None, until: Optional[datetime] = None,
               order: str = "desc") -> Selection[Article]:
        """Every article created in ``[since, until)``, newest first (``order="asc"``: oldest first),
        as a lazy :class:`Selection` for pyarrow, pandas, polars and DuckDB.

        ``since`` is inclusive and ``until`` exclusive; either may be None (no bound), aware or
        naive (taken as UTC). Nothing is read until the selection is.

        >>> import noteskit as nk
        >>> with nk.Store.memory() as store:
        ...     _ = store.articles.create_many([{"title": f"note {i}", "content": "x"} for i in range(3)])
        ...     [a.title for a in store.articles.select(order="asc")]
        ['note 0', 'note 1', 'note 2']
        """
        start, end = time_bounds(since, until)
        direction = order_code(order)
        def open_stream(threads: int, stream: Any) -> None:
            _ffi.check(_ffi.nk_article_select(self._store.handle, start, end, direction, threads, byref(stream)))

        def count() -> int:
            return _ffi.call_int(_ffi.nk_article_select_count, self._store.handle, start, end)

        return Selection(open_stream, count, articles, f"of articles (since={since}, until={until}, order={order!r})")

    def iter(self, batch_size: int = 200, *, since: Optional[datetime] = None, until: Optional[datetime] = None,
             order: str = "desc") -> Iterator[Article]:
        """Every article (created in ``[since, until)`` when given), newest first (``order="asc"``:
        oldest first), fetched lazily ``batch_size`` at a time."""
        return walk(lambda after: self.list(limit=batch_size, after=after, since=since, until=until, order=order))

    def __iter__(self) -> Iterator[Article]:
        return self.iter()

    def search(self, query: str, field: str = "any", case_sensitive: bool = False, limit: int = 20,
               after: Optional[str] = None, *, since: Optional[datetime] = None, until: Optional[datetime] = None,
               order: str = "desc") -> Page[SearchHit]:
        """The articles whose title and/or content contain ``query``, newest first (``order="asc"``:
        oldest first), with match spans; only those created in ``[since, until)`` when given.

        Literal substring search: every character of ``query`` is itself (quotes, ``%``, ``_``,
        ``*``, ``\\``, FTS words, emoji, CJK of any length). Text and query are compared in NFC, so
        composed and decomposed forms find each other, and case-insensitively by simple Unicode case
        folding unless ``case_sensitive``. ``field`` is ``"any"``, ``"title"`` or ``"content"``. An
        empty query lists every article. Paged like :meth:`list`: pass ``next_cursor`` as ``after``
        (with the same query, field, case mode, order and range).
        A query with a NUL or over 10 000 characters raises :class:`ValidationError`.
        """
        if not isinstance(case_sensitive, bool):
            raise InvalidArgumentError(f"case_sensitive must be a bool, got {type(case_sensitive).__name__}",
                                       field="case_sensitive")
        start, end = time_bounds(since, until)
        columns, n, cursor = call_page(_ffi.nk_article_search, self._store.handle, _ffi.text(query, "query"),
                                       _ffi.text(field, "field"), int(case_sensitive), start, end, order_code(order),
                                       _ffi.integer(limit, "limit"), _ffi.optional_text(after, "after"))
        return page(article_hits(columns, n), cursor)

    def search_iter(self, query: str, field: str = "any", case_sensitive: bool = False,
                    batch_size: int = 200, *, since: Optional[datetime] = None, until: Optional[datetime] = None,
                    order: str = "desc") -> Iterator[SearchHit]:
        """Every hit of :meth:`search`, in its order, fetched lazily ``batch_size`` at a time."""
        return walk(lambda after: self.search(query, field=field, case_sensitive=case_sensitive, limit=batch_size,
                                              after=after, since=since, until=until, order=order))

    # ---- Drafts -----------------------------------------------------------------------------

    def new_draft(self, title: Optional[str] = None, content: str = "") -> "Draft":
        """Opens a draft for a new article: an editing session kept in the store until discarded.

        Its title defaults to today's date (``YYYY-MM-DD``, the app's ``yyyy-MM-dd `` without its
        trailing space) in the local time zone.
        """
        return Draft(self._store, draft_from_row(call_row(_ffi.nk_draft_new, self._store.handle,
                                                          _ffi.optional_text(title, "title"), _ffi.text(content, "content"))))

    def edit(self, id: int) -> "Draft":
        """Opens a draft of article ``id`` at its current revision."""
        return Draft(self._store, draft_from_row(call_row(_ffi.nk_draft_edit, self._store.handle, _ffi.integer(id, "id"))))

    def draft(self, id: int) -> "Draft":
        """The draft with ``id``; :class:`NotFoundError` once discarded."""
        return Draft(self._store, draft_from_row(call_row(_ffi.nk_draft_get, self._store.handle, _ffi.integer(id, "id"))))

    def drafts(self) -> List["Draft"]:
        """Every draft with unsaved changes, oldest first (they survive the process dying).

        A draft saved, or opened with :meth:`edit` and not typed into, is not listed, though it
        stays open until discarded.
        """
        columns, _ = call_batch(_ffi.nk_draft_list, self._store.handle)
        return [Draft(self._store, d) for d in drafts(columns)]


class Draft:
    """An editing session, as the notes app's editor. Setting ``title`` or ``content`` writes
    through to the store at once, so a crash loses nothing; :meth:`save` validates and saves and
    leaves the draft open, bound to the saved article (later saves update it); :meth:`discard` —
    the editor's back button — ends the session, throwing away what was not saved.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     d = store.articles.new_draft(title="Notes")
    ...     d.content = "……"
    ...     a = d.save()
    ...     d.content = "…… and more"
    ...     b = d.save()
    ...     d.discard()
    ...     (a.id == b.id, b.revision, store.articles.count())
    (True, 2, 1)
    """

    def __init__(self, store: Store, data: Dict[str, Any]) -> None:
        self._store = store
        self._load(data)

    def _load(self, data: Dict[str, Any]) -> None:
        self.id: int = data["id"]
        self.uid: str = data["uid"]
        self.article_id: Optional[int] = data["article_id"]
        self.base_revision: Optional[int] = data["base_revision"]
        self._title: str = data["title"]
        self._content: str = data["content"]
        self.created_at: datetime = data["created_at"]
        self.updated_at: datetime = data["updated_at"]

    @property
    def title(self) -> str:
        """The draft's title; setting it writes it through to the store (not yet saved)."""
        return self._title

    @title.setter
    def title(self, value: str) -> None:
        self._load(draft_from_row(call_row(_ffi.nk_draft_update, self._store.handle, self.id, _ffi.text(value, "title"), None)))

    @property
    def content(self) -> str:
        """The draft's content; setting it writes it through to the store (not yet saved)."""
        return self._content

    @content.setter
    def content(self, value: str) -> None:
        self._load(draft_from_row(call_row(_ffi.nk_draft_update, self._store.handle, self.id, None,
                                           _ffi.text(value, "content"))))

    def save(self) -> Article:
        """Saves the draft as a new article, or the next revision of the one it edits or saved.

        The draft stays open, bound to the saved article at its new revision. :class:`ValidationError`
        (empty title or content) and :class:`ConflictError` (the article changed or was deleted
        since the draft was opened or last saved) keep the draft as it was.
        """
        article = article_from_row(call_row(_ffi.nk_draft_save, self._store.handle, self.id))
        self.article_id, self.base_revision = article.id, article.revision
        return article

    def discard(self) -> None:
        """Ends the editing session, throwing away what was not saved; saved articles are untouched."""
        _ffi.check(_ffi.nk_draft_discard(self._store.handle, self.id))

    def __repr__(self) -> str:
        target = f"article {self.article_id}@{self.base_revision}" if self.article_id else "new article"
        return f"<noteskit.Draft {self.id} of {target}: {self._title!r}>"
