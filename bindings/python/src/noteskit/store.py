"""The store, its articles and drafts: the Pythonic layer over :mod:`noteskit._ffi`."""
from __future__ import annotations

import json
import os
from ctypes import byref, c_void_p
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _ffi
from ._arrow import call_batch
from ._convert import change_from_json, changes
from ._handle import _Handle
from .articles import Articles
from .chat import Conversations, Messages
from .errors import InvalidArgumentError, ValidationError
from .models import Change
from .privacy import file_mode, make_private_folder, warn_if_exposed
from .search import search as _search

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from .models import Conversation, MessageHit, Page, SearchHit

    from .exchange import ExportReport, ImportReport
    from .feed import CompactReport
    from .layout import ArticleRowStyle, BubbleStyle, Layout

PathLike = Union[str, "os.PathLike[str]"]


def is_postgres_uri(text: str) -> bool:
    """True for a PostgreSQL connection URI (``postgresql://...`` or ``postgres://...``)."""
    return text[:13].lower().startswith(("postgresql://", "postgres://"))


def _without_password(uri: str) -> str:
    """``uri`` with its password (in the user part or a ``password=`` parameter) shown as ``***``."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(uri)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            netloc = user.split(":", 1)[0] + ":***@" + host
    query = "&".join("password=***" if q.lower().startswith("password=") else q for q in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def default_store_path() -> Path:
    """The embedded default store: ``$XDG_DATA_HOME/noteskit/notes.db`` (``~/.local/share`` when unset).

    The folder is created when missing, readable by its owner only (0o700, whatever the umask; an
    existing folder is left as it is). The command line uses it when ``--db`` is not given.

    >>> import os, noteskit as nk
    >>> os.environ["XDG_DATA_HOME"] = "/tmp/noteskit-example"
    >>> nk.default_store_path()
    PosixPath('/tmp/noteskit-example/noteskit/notes.db')
    >>> del os.environ["XDG_DATA_HOME"]
    """
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    folder = Path(base) / "noteskit"
    make_private_folder(folder)
    return folder / "notes.db"


class Store(_Handle):
    """A NotesKit store: one SQLite file, or a private in-memory database.

    Use it as a context manager (or call :meth:`close`); a store that is garbage-collected is
    closed too. One store may be used from many threads at once.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     _ = store.articles.create(title="hello", content="world")
    ...     store.articles.count()
    1
    """

    _what = "store"

    def __init__(self, handle: int, path: Optional[str], uri: Optional[str] = None) -> None:
        self._own(handle, _ffi.nk_store_close)
        self.path = path
        #: For a store on a PostgreSQL server, its connection URI with the password hidden; else None.
        self.uri = _without_password(uri) if uri is not None else None
        self._callbacks: Dict[int, Any] = {}
        self.articles = Articles(self)
        self.conversations = Conversations(self)
        self.messages = Messages(self)

    @classmethod
    def open(cls, path: PathLike, *, read_only: bool = False, max_size_bytes: Optional[int] = None,
             durability: str = "durable", mode: Optional[int] = None) -> "Store":
        """Opens the store file at ``path``, creating it if it does not exist.

        With ``read_only=True`` the file must exist and is never written: every write raises
        :class:`ReadOnlyError`. With ``max_size_bytes``, the store is capped at that size (see
        :meth:`set_max_size`). With ``durability="durable"`` (the default) a write that returned
        survives a power cut; ``"fast"`` writes faster and keeps a returned write through a crash of
        the process, but a power cut may lose the last few.

        A new store (and its ``-wal``/``-shm`` files) is readable by its owner only (0o600) unless
        ``mode`` (e.g. ``0o640``) shares it on purpose, whatever the umask. An existing store keeps
        its mode; if other accounts can read it beyond ``mode``, one :class:`PrivacyWarning` says so.

        Raises :class:`StorageError` for a folder or unreachable path, :class:`CorruptStoreError`
        for a file that is not a database and :class:`SchemaError` for a database that is not a
        NotesKit store or was written by a newer NotesKit.

        A PostgreSQL connection URI (``postgresql://user:password@host:port/dbname`` or
        ``postgres://...``, any libpq URI) opens the store in that database instead, creating its
        schema on first use (see the README, "More than one machine"); ``mode`` and
        ``max_size_bytes`` do not apply to it. Raises :class:`AuthenticationError` for a wrong
        password, :class:`UnreachableError` when the server cannot be reached, and
        :class:`SchemaError` for a database that is not a NotesKit store.
        """
        text = os.fspath(path)
        if isinstance(text, str) and is_postgres_uri(text):
            if max_size_bytes is not None or mode is not None:
                raise ValidationError("max_size_bytes and mode apply to store files, not to a store on PostgreSQL",
                                      field="max_size_bytes" if max_size_bytes is not None else "mode")
            out = c_void_p()
            _ffi.check(_ffi.nk_store_open(_ffi.text(text, "path"), _ffi.NK_OPEN_READ_ONLY if read_only else 0, 0, byref(out)))
            return cls(out.value or 0, None, text)
        out = c_void_p()
        if durability not in ("durable", "fast"):
            raise ValidationError(f"durability must be \"durable\" or \"fast\", got {durability!r}", field="durability")
        flags = (_ffi.NK_OPEN_READ_ONLY if read_only else 0) | (_ffi.NK_OPEN_FAST if durability == "fast" else 0)
        _ffi.check(_ffi.nk_store_open(_ffi.text(text, "path"), flags, file_mode(mode), byref(out)))
        store = cls._opened(out.value or 0, text, max_size_bytes)
        try:
            warn_if_exposed(text, mode, stacklevel=2)
        except BaseException:  # a warning turned into an error (-W error): no store left open
            store.close()
            raise
        return store

    @classmethod
    def memory(cls, *, max_size_bytes: Optional[int] = None) -> "Store":
        """A private in-memory store, gone when closed (capped at ``max_size_bytes`` if given)."""
        out = c_void_p()
        _ffi.check(_ffi.nk_store_open_memory(byref(out)))
        return cls._opened(out.value or 0, None, max_size_bytes)

    @classmethod
    def _opened(cls, handle: int, path: Optional[str], max_size_bytes: Optional[int]) -> "Store":
        store = cls(handle, path)
        if max_size_bytes is not None:
            try:
                store.set_max_size(max_size_bytes)
            except BaseException:
                store.close()
                raise
        return store

    def set_max_size(self, max_size_bytes: int) -> int:
        """Caps the store at ``max_size_bytes`` for as long as this ``Store`` is open; returns the cap in effect.

        A write that would grow the database past the cap raises :class:`StorageFullError` and
        writes nothing; reads, deletes and writes that fit keep working. The cap is rounded up to
        whole database pages (4 KiB) and is never below the store's current size.
        """
        return _ffi.call_int(_ffi.nk_store_set_max_size, self.handle, _ffi.integer(max_size_bytes, "max_size_bytes"))

    def _closed(self) -> None:
        self._callbacks.clear()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<noteskit.Store {self.uri or self.path or ':memory:'} ({state})>"

    def create_user(self, name: str, password: Optional[str] = None) -> None:
        """Creates the PostgreSQL login role ``name`` (with ``password``; None: no password) as a
        user of this store: it sees and changes only its own rows, through NotesKit and through SQL.

        Only the store's administrator — the role that created it, which needs ``CREATEROLE`` —
        can. Raises :class:`ConflictError` when the role exists, :class:`ValidationError` for
        a store that is not on PostgreSQL.
        """
        _ffi.check(_ffi.nk_store_create_user(self.handle, _ffi.text(name, "name"), _ffi.optional_text(password, "password")))

    # ---- Import and export ------------------------------------------------------------------

    def export(self, path: PathLike, format: Optional[str] = None, *, table: Optional[str] = None,
               conversation: Union[int, "Conversation", None] = None, mode: Optional[int] = None,
               since: Optional[datetime] = None, until: Optional[datetime] = None, excel: bool = False) -> "ExportReport":
        """Writes the store to ``path`` and returns an :class:`ExportReport`.

        ``format`` is ``"json"`` (a lossless NotesKit backup), ``"jsonl"``, ``"csv"``,
        ``"markdown"``, ``"transcript"`` or ``"parquet"``; ``None`` takes it from the extension
        (``.json``, ``.jsonl``, ``.csv``, ``.txt``, ``.parquet``). A folder needs it: ``"markdown"``
        (one ``.md`` file per article) or ``"csv"`` (``articles.csv``, ``conversations.csv`` and
        ``messages.csv``); the folder must be new or empty. ``table`` picks what a single ``.csv``
        or ``.parquet`` file holds: ``"articles"`` (the default), ``"conversations"`` or
        ``"messages"``. ``conversation`` (an id or a :class:`Conversation`) is the one a transcript
        writes. ``since=`` / ``until=`` (datetimes, naive = UTC) export only the articles created
        and the messages sent in ``[since, until)``, the conversations holding such messages, and
        no drafts. ``excel=True`` writes CSV that Excel opens as UTF-8 (a byte order mark first;
        CSV has CRLF line ends anyway). ``mode`` (e.g. ``0o644``) makes files others may read: by
        default what is written is readable by its owner only (files 0o600, folders 0o700). A file
        is written beside ``path`` and renamed over it when complete: a failed export leaves
        nothing behind, a killed one nothing the next export into that folder keeps. A symbolic
        link at ``path`` is replaced, not followed. Runs in bounded memory. Parquet needs
        ``pip install 'noteskit[arrow]'``.
        """
        from .exchange import export

        return export(self, path, format, table=table, conversation=conversation, mode=mode, since=since, until=until,
                      excel=excel)

    def import_(self, path: PathLike, format: Optional[str] = None, *, on_conflict: str = "skip",
                on_error: str = "raise", progress: Optional[Callable[[int, int], Any]] = None,
                conversation: Any = None, title: Optional[str] = None, me: Optional[str] = None,
                tz: Optional[str] = None, encoding: Optional[str] = None, delimiter: Optional[str] = None,
                columns: Optional[Mapping[str, str]] = None, unknown_columns: str = "refuse",
                date_order: Optional[str] = None, table: Optional[str] = None) -> "ImportReport":
        """Imports ``path`` in one transaction and returns an :class:`ImportReport`.

        ``format`` is one of :data:`noteskit.exchange.FORMATS`, or taken from the extension (a
        ``.json`` file from Telegram Desktop and a WhatsApp ``.txt`` are told by their content).
        Records are matched by uid: importing the same file twice changes nothing the second time.
        ``on_conflict`` decides what a stored record with the same uid gets: ``"skip"`` (keep it),
        ``"replace"`` (take the file's) or ``"newer"`` (take the file's if its ``updated_at`` is
        later, or a Markdown file edited since). A malformed record raises :class:`FormatError`
        (``file``, ``line``, ``field``) and nothing is written; with ``on_error="skip"`` the good
        records are imported and the bad ones listed in ``report.errors``. ``progress(done,
        total)`` is called regularly (bytes of the file, or files of a folder); returning ``False``
        cancels: :class:`CancelledError`, nothing written. It must not call the store.

        Options, refused where they do not apply: ``conversation=`` (an id) or ``title=`` for a
        transcript or WhatsApp chat; ``me=`` (your name or Telegram id) for Telegram and WhatsApp;
        ``tz=`` (``"Europe/Berlin"``, ``"+08:00"``; UTC by default) for dates without times and
        times without a zone; for CSV ``encoding=`` (``"gb18030"``, ``"cp1252"``, ``"utf-16"``),
        ``delimiter=`` (sniffed by default), ``columns={"Title": "title"}`` and
        ``unknown_columns="ignore"``; ``date_order="dmy"|"mdy"`` for WhatsApp when no day is above 12.

        A ``.parquet`` file (``pip install 'noteskit[arrow]'``) holds one table, as ``export`` wrote
        it or made by another tool: articles (``title``, ``content``; optional ``uid``,
        ``created_at``, ``updated_at``, ``revision``), conversations (``title``; optional ``uid``,
        ``created_at``, ``last_activity_at``) or messages (``content``, ``from_me``; optional
        ``uid``, ``sent_at``, ``sender``, and the conversation as ``conversation_uid`` and/or
        ``conversation_title``); ``id`` and ``conversation_id`` columns are the other store's and
        are not read. ``table=`` says which when the file does not. A row's ``line`` is its number.
        """
        from .exchange import import_

        return import_(self, path, format, on_conflict=on_conflict, on_error=on_error, progress=progress,
                       conversation=conversation, title=title, me=me, tz=tz, encoding=encoding, delimiter=delimiter,
                       columns=columns, unknown_columns=unknown_columns, date_order=date_order, table=table)

    # ---- Search over every kind -------------------------------------------------------------

    def search(self, query: str, kinds: Union[str, Sequence[str]] = ("articles", "messages"),
               since: Optional[datetime] = None, until: Optional[datetime] = None, limit: int = 20,
               after: Optional[str] = None) -> "Page[Union[SearchHit, MessageHit]]":
        """One search over articles (title or content) and messages: a :class:`Page` of hits, newest first across kinds.

        Each hit says what it found: a :class:`SearchHit` (``hit.kind == "article"``) or a
        :class:`MessageHit` (``"message"``); ``hit.record`` is the article or message either way,
        ``hit.spans`` where the query matched, and ``hit.snippet(width=60)`` a one-line excerpt.
        Ordered by time (an article's ``created_at``, a message's ``sent_at``), then articles
        before messages, then newest id. Matching is as :meth:`Articles.search` (literal, NFC,
        case-insensitive; an empty query lists everything). ``kinds`` is ``("articles",
        "messages")``, or one of them; ``since`` (inclusive) and ``until`` (exclusive) bound the
        time. Keyset-paged: pass ``next_cursor`` as ``after`` to the same search (query, kinds,
        since, until).

        >>> import noteskit as nk
        >>> from datetime import datetime, timezone
        >>> with nk.Store.memory() as store:
        ...     _ = store.articles.create(title="Weekend", content="Hiking if the weather holds")
        ...     _ = store.conversations.create("Alice").receive("weather looks good!", sent_at=datetime(2030, 1, 1, tzinfo=timezone.utc))
        ...     [(hit.kind, hit.snippet(width=20).text) for hit in store.search("weather")]
        [('message', 'weather looks good!'), ('article', '…if the weather holds')]
        """
        return _search(self, query, kinds, since, until, limit, after)

    # ---- Change feed ------------------------------------------------------------------------

    def changes(self, since: int = 0, limit: int = 1000) -> List[Change]:
        """The changes committed after ``since`` (a :attr:`Change.seq`), oldest first, at most ``limit``.

        Sees every commit to the file, from any handle or process.
        """
        columns, _ = call_batch(_ffi.nk_store_changes, self.handle, _ffi.integer(since, "since"),
                                _ffi.integer(limit, "limit"))
        return changes(columns)

    def reindex(self) -> None:
        """Rebuilds the search index from the stored text, in one transaction.

        Every write keeps the index up to date; this is for repair.
        """
        _ffi.check(_ffi.nk_store_reindex(self.handle))

    def compact(self, retain: Union[None, float, "timedelta"] = None) -> "CompactReport":
        """Compacts the change feed and gives the freed pages back; returns a :class:`CompactReport`.

        Removes every change that a newer change of the same record supersedes (as CouchDB keeps
        each document's latest change): each record keeps its latest change, deletes included.
        Changes recorded within ``retain`` (a ``timedelta`` or seconds; ``None`` keeps none for
        that reason) stay as they are, and so do those a subscriber is still to be handed. A
        reader whose ``since`` is older than what was removed gets the latest change of every
        record changed after it, never a silent gap. One write transaction; then, when the
        file's free pages are a quarter of it or more, a ``VACUUM`` gives them back (it rewrites
        the file); fewer stay in the file for later writes to reuse.
        """
        from datetime import timedelta

        from .feed import CompactReport

        if retain is None:
            ms = 0
        elif isinstance(retain, timedelta):
            ms = int(retain.total_seconds() * 1000)
        elif isinstance(retain, (int, float)) and not isinstance(retain, bool):
            if not -2 ** 52 < retain < 2 ** 52:  # NaN and infinities too
                raise ValidationError(f"retain must be a number of seconds, got {retain}", field="retain")
            ms = int(retain * 1000)
        else:
            raise InvalidArgumentError(f"retain must be a timedelta, a number of seconds or None, got {type(retain).__name__}",
                                       field="retain")
        return CompactReport._from_json(_ffi.call_json(_ffi.nk_store_compact, self.handle, ms))

    def last_change_seq(self) -> int:
        """The ``seq`` of the newest change, 0 if there is none."""
        return _ffi.call_int(_ffi.nk_store_last_change_seq, self.handle)

    def subscribe(self, callback: Callable[[List[Change]], Any]) -> "Subscription":
        """Calls ``callback(changes)`` after each commit made through this store, on the committing thread.

        Returns a :class:`Subscription`; close it (or use it as a context manager) to stop. An exception
        raised by the callback is reported through ``sys.unraisablehook`` and does not undo the commit.
        On a SQLite file, commits made by other processes are read with :meth:`changes`. On a
        PostgreSQL store the callback also gets every other process's and host's commits that this
        role may see (woken by ``NOTIFY``, called on a thread of the store's), each change once, in
        ``seq`` order.
        """
        if not callable(callback):
            raise InvalidArgumentError("callback must be callable", field="callback")

        def trampoline(_user_data: Any, changes_json: bytes) -> None:
            callback([change_from_json(r) for r in json.loads(changes_json)])

        c_callback = _ffi.nk_change_callback(trampoline)
        token = _ffi.call_int(_ffi.nk_store_subscribe, self.handle, c_callback, None)
        self._callbacks[token] = c_callback  # kept alive while C may call it
        return Subscription(self, token)

    # ---- Layout -----------------------------------------------------------------------------

    def layout(self, width: float = 375, article_style: Optional["ArticleRowStyle"] = None,
               bubble_style: Optional["BubbleStyle"] = None, estimated_height: float = 150,
               cache_bytes: Optional[int] = None) -> "Layout":
        """Row heights and bubbles of this store at ``width`` pixels, measured with Pango and cached.

        ``article_style`` / ``bubble_style`` default to the apps' numbers (:class:`ArticleRowStyle`,
        :class:`BubbleStyle`); rows not measured yet count as ``estimated_height``; ``cache_bytes``
        bounds the cache (64 MiB, about 1.4 million rows, by default). See :class:`Layout`.
        """
        from .layout import Layout

        return Layout(self, width, article_style, bubble_style, estimated_height, cache_bytes)

    def _unsubscribe(self, token: int) -> None:
        handle = self._handle
        if handle is not None and token in self._callbacks:
            _ffi.check(_ffi.nk_store_unsubscribe(handle, token))
        self._callbacks.pop(token, None)


class Subscription:
    """A change-feed subscription from :meth:`Store.subscribe`; :meth:`close` (or leaving ``with``) stops it.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     seen = []
    ...     with store.subscribe(seen.extend):
    ...         _ = store.articles.create(title="t", content="c")
    ...     _ = store.articles.create(title="after", content="c")
    ...     [(c.op, c.id) for c in seen]
    [('create', 1)]
    """

    def __init__(self, store: Store, token: int) -> None:
        self._store = store
        self.token = token

    def close(self) -> None:
        """Stops the callbacks; closing twice does nothing."""
        self._store._unsubscribe(self.token)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
