"""The exception tree: one class per error kind of the library, all under :class:`NotesError`.

>>> import noteskit as nk
>>> [cls.__name__ for cls in nk.ReadOnlyError.__mro__[:3]]
['ReadOnlyError', 'StorageError', 'NotesError']
"""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Type

#: How a caller spells an option the library names: (name as the Swift API spells it, suggested
#: value or None) -> words.
OptionWords = Callable[[str, Any], str]


def python_option(name: str, value: Any) -> str:
    """An option as a Python call spells it: ``read_only=True``, ``format="markdown"``, ``format=``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    if value is None:
        return f"{snake}="
    return f"{snake}={value!r}" if isinstance(value, bool) else f'{snake}="{value}"'


class NotesError(Exception):
    """Base class of every error NotesKit raises.

    ``kind`` is the library's name for the error (``"validation"``, ``"not_found"``, ...),
    ``code`` a stable machine-readable name of this very error, finer than the kind and never
    reworded (``"title_empty"``, ``"content_empty"``, ``"message_empty"``, ``"revision_conflict"``,
    ``"cursor_other_search"``, ...: the library names them), ``field`` the field at fault where there is one, ``line`` the record or line number of a bulk
    call (0-based) or the line of an import file (1-based), ``file`` the import file at fault,
    ``sqlite_code`` the SQLite result code behind a storage error.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     try:
    ...         store.articles.create_many([{"title": "ok", "content": "ok"}, {"title": "", "content": "x"}])
    ...     except nk.NotesError as e:
    ...         print(e.kind, e.field, e.line)
    validation title 1

    :meth:`message_in` gives the apps' own wording where they had one:

    >>> with nk.Store.memory() as store:
    ...     try:
    ...         store.articles.create(title="", content="x")
    ...     except nk.ValidationError as e:
    ...         print(e.code, e.message_in("zh-Hans"), "/", e.message_in("en"))
    title_empty 标题不可为空 / title must not be empty or only white space
    """

    kind = "error"

    def __init__(self, message: str, *, field: Optional[str] = None, line: Optional[int] = None,
                 sqlite_code: Optional[int] = None, file: Optional[str] = None, code: Optional[str] = None,
                 messages: Optional[Dict[str, str]] = None, options: Optional[List[Dict[str, Any]]] = None) -> None:
        # The library's message names the options of the call in its own words; say them in Python's.
        self._core_message = message
        self._options: List[Dict[str, Any]] = list(options or [])
        message = self._worded(python_option)
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line
        self.sqlite_code = sqlite_code
        self.file = file
        self.code: str = code or self.kind
        self._messages: Dict[str, str] = dict(messages or {})

    def _worded(self, words: OptionWords) -> str:
        """The library's message with each option it names in ``words`` (the command line's, say)."""
        message = self._core_message
        for option in self._options:
            message = message.replace(option["text"], words(option["name"], option.get("value")))
        return message

    def message_in(self, language: str) -> str:
        """The message in ``language`` (a BCP 47 tag: ``"zh-Hans"``, ``"zh-CN"``, ``"zh"``) where the
        apps had their own wording for this error, else the English :attr:`message`."""
        parts = language.replace("_", "-").lower().split("-")
        if parts[0] == "zh" and not {"hant", "tw", "hk", "mo"} & set(parts):
            return self._messages.get("zh-Hans", self.message)
        return self._messages.get(language, self.message)


class InvalidArgumentError(NotesError, ValueError):
    """An argument cannot cross to the library at all: wrong type, invalid Unicode, bad handle.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     store.articles.get("1")
    Traceback (most recent call last):
    noteskit.errors.InvalidArgumentError: id must be an int, got str
    """

    kind = "invalid_argument"


class ValidationError(NotesError, ValueError):
    """A value breaks a rule: an empty title, a limit out of range, a forged cursor. ``field`` names it.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     try:
    ...         store.articles.create(title="   ", content="x")
    ...     except nk.ValidationError as e:
    ...         print(e.field)
    title
    """

    kind = "validation"


class NotFoundError(NotesError, LookupError):
    """The record asked for does not exist (also a :class:`LookupError`).

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     try:
    ...         store.articles.get(42)
    ...     except nk.NotFoundError as e:
    ...         print(e)
    article 42 does not exist
    """

    kind = "not_found"


class ConflictError(NotesError):
    """The record changed since it was read: a stale draft or revision, a duplicate uid.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="t", content="v1")
    ...     _ = store.articles.update(a.id, content="v2")
    ...     try:
    ...         store.articles.update(a.id, content="v3", expected_revision=a.revision)
    ...     except nk.ConflictError:
    ...         print("changed meanwhile:", store.articles.get(a.id).content)
    changed meanwhile: v2
    """

    kind = "conflict"


class StorageError(NotesError):
    """SQLite could not do what was asked (cannot open the file, I/O error, ...); the base of the storage errors.

    >>> import noteskit as nk
    >>> try:
    ...     nk.Store.open("/no/such/folder/notes.db")
    ... except nk.StorageError as e:
    ...     print(type(e).__name__)
    StorageError
    """

    kind = "storage"


class SchemaError(StorageError):
    """The file is not a NotesKit store, or a newer NotesKit wrote it (it is left untouched).

    >>> import sqlite3, tempfile, os, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "other.db")
    >>> with sqlite3.connect(path) as db:
    ...     _ = db.execute("create table t(x)")
    >>> try:
    ...     nk.Store.open(path)
    ... except nk.SchemaError:
    ...     print("not a NotesKit store")
    not a NotesKit store
    """

    kind = "schema"


class CorruptStoreError(StorageError):
    """The file is damaged, or is not a database at all.

    >>> import tempfile, os, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.db")
    >>> with open(path, "w") as f:
    ...     _ = f.write("plain text, not a database " * 200)
    >>> try:
    ...     nk.Store.open(path)
    ... except nk.CorruptStoreError:
    ...     print("damaged")
    damaged
    """

    kind = "corrupt"


class ReadOnlyError(StorageError):
    """The store file (or its folder) cannot be written, or the store was opened read-only.

    >>> import tempfile, os, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.db")
    >>> nk.Store.open(path).close()
    >>> with nk.Store.open(path, read_only=True) as store:
    ...     try:
    ...         store.articles.create(title="t", content="c")
    ...     except nk.ReadOnlyError:
    ...         print("read-only")
    read-only
    """

    kind = "read_only"


class StorageFullError(StorageError):
    """The disk, or the store's page limit, is full; nothing of the failed write is kept.

    >>> from noteskit import StorageError, StorageFullError
    >>> StorageFullError.__bases__ == (StorageError,)
    True
    """

    kind = "storage_full"


class BusyError(StorageError):
    """Another connection held a lock past the busy timeout (10 s); the call may be retried.

    >>> import noteskit as nk; nk.BusyError.kind
    'busy'
    """

    kind = "busy"


class ClosedError(NotesError):
    """The store was closed.

    >>> import noteskit as nk
    >>> store = nk.Store.memory()
    >>> store.close()
    >>> try:
    ...     store.articles.count()
    ... except nk.ClosedError as e:
    ...     print(e)
    the store is closed
    """

    kind = "closed"


class FormatError(NotesError, ValueError):
    """Import data is malformed; ``file``, ``line`` (1-based) and ``field`` say where. Nothing is written.

    >>> import os, tempfile, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"type": "article", "title": "t"\\n')
    >>> with nk.Store.memory() as store:
    ...     try:
    ...         store.import_(path)
    ...     except nk.FormatError as e:
    ...         print(e.line, store.articles.count())
    1 0
    """

    kind = "format"


class FontError(NotesError):
    """A font needed to measure text is missing; the message names the package to install.

    >>> import noteskit as nk
    >>> nk.FontError("no font for 'Noto Sans' (apt-get install fonts-noto)").kind
    'font'
    """

    kind = "font"


class CancelledError(NotesError):
    """A progress callback cancelled the operation; nothing was written.

    >>> import noteskit as nk
    >>> nk.CancelledError("import cancelled").kind
    'cancelled'
    """

    kind = "cancelled"


class AuthenticationError(StorageError):
    """A PostgreSQL server refused the connection's credentials: a wrong password, an unknown
    role, or a role not allowed to connect. Nothing was read or written.

    >>> import noteskit as nk
    >>> issubclass(nk.AuthenticationError, nk.StorageError)
    True
    """

    kind = "authentication"


class UnreachableError(StorageError):
    """A PostgreSQL server cannot be reached (connection refused, unknown host, timed out), or
    the connection broke during a write: the write was rolled back, or — when it broke while
    committing — the message says its outcome is unknown. Reads are retried once on a new
    connection before this is raised.

    >>> import noteskit as nk
    >>> issubclass(nk.UnreachableError, nk.StorageError)
    True
    """

    kind = "unreachable"


class InternalError(NotesError):
    """A bug in NotesKit. Please report it with the message.

    >>> import noteskit
    >>> noteskit.InternalError("unexpected state").code
    'internal'
    """

    kind = "internal"


class LibraryError(NotesError):
    """The native library cannot be found or does not match this package (raised by ``import noteskit``).

    >>> import noteskit as nk
    >>> nk.LIBRARY_PATH.name
    'libNotesCAPI.so'
    """

    kind = "library"


_BY_KIND: Dict[str, Type[NotesError]] = {
    cls.kind: cls
    for cls in (InvalidArgumentError, ValidationError, NotFoundError, ConflictError, StorageError, SchemaError,
                CorruptStoreError, ReadOnlyError, StorageFullError, BusyError, ClosedError, FormatError, FontError,
                CancelledError, AuthenticationError, UnreachableError, InternalError)
}


def error_from(info: Dict[str, Any]) -> NotesError:
    """The exception for the library's last-error JSON object."""
    cls = _BY_KIND.get(info.get("kind", ""), NotesError)
    return cls(info.get("message", "unknown error"), field=info.get("field"), line=info.get("line"),
               sqlite_code=info.get("sqlite_code"), file=info.get("file"), code=info.get("error_code"),
               messages=info.get("messages"), options=info.get("options"))
