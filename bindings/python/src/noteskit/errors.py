"""The exception tree: one class per error kind of the library, all under :class:`NotesError`.

>>> import noteskit as nk
>>> with nk.Store.memory() as store:
...     try:
...         store.articles.create(title="  ", content="x")
...     except nk.ValidationError as e:
...         print(e.field)
title
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Type


class NotesError(Exception):
    """Base class of every error NotesKit raises.

    ``kind`` is the library's name for the error (``"validation"``, ``"not_found"``, ...),
    ``field`` the field at fault where there is one, ``line`` the record or line number of a bulk
    call (0-based) or the line of an import file (1-based), ``file`` the import file at fault,
    ``sqlite_code`` the SQLite result code behind a storage error.
    """

    kind = "error"

    def __init__(self, message: str, *, field: Optional[str] = None, line: Optional[int] = None,
                 sqlite_code: Optional[int] = None, file: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line
        self.sqlite_code = sqlite_code
        self.file = file


class InvalidArgumentError(NotesError, ValueError):
    """An argument cannot cross to the library at all: wrong type, invalid Unicode, bad handle."""

    kind = "invalid_argument"


class ValidationError(NotesError, ValueError):
    """A value breaks a rule: an empty title, a limit out of range, a forged cursor. ``field`` names it."""

    kind = "validation"


class NotFoundError(NotesError, LookupError):
    """The record asked for does not exist."""

    kind = "not_found"


class ConflictError(NotesError):
    """The record changed since it was read: a stale draft or revision, a duplicate uid."""

    kind = "conflict"


class StorageError(NotesError):
    """SQLite could not do what was asked (cannot open the file, I/O error, ...)."""

    kind = "storage"


class SchemaError(StorageError):
    """The file is not a NotesKit store, or a newer NotesKit wrote it (it is left untouched)."""

    kind = "schema"


class CorruptStoreError(StorageError):
    """The file is damaged, or is not a database at all."""

    kind = "corrupt"


class ReadOnlyError(StorageError):
    """The store file (or its folder) cannot be written."""

    kind = "read_only"


class StorageFullError(StorageError):
    """The disk, or the store's page limit, is full."""

    kind = "storage_full"


class BusyError(StorageError):
    """Another connection held a lock past the busy timeout."""

    kind = "busy"


class ClosedError(NotesError):
    """The store was closed."""

    kind = "closed"


class FormatError(NotesError, ValueError):
    """Import data is malformed; ``file``, ``line`` (1-based) and ``field`` say where."""

    kind = "format"


class FontError(NotesError):
    """A font needed to measure text is missing; the message names the package to install."""

    kind = "font"


class CancelledError(NotesError):
    """A progress callback cancelled the operation; nothing was written."""

    kind = "cancelled"


class InternalError(NotesError):
    """A bug in NotesKit. Please report it with the message."""

    kind = "internal"


class LibraryError(NotesError):
    """The native library cannot be found or does not match this package."""

    kind = "library"


_BY_KIND: Dict[str, Type[NotesError]] = {
    cls.kind: cls
    for cls in (InvalidArgumentError, ValidationError, NotFoundError, ConflictError, StorageError, SchemaError,
                CorruptStoreError, ReadOnlyError, StorageFullError, BusyError, ClosedError, FormatError, FontError,
                CancelledError, InternalError)
}


def error_from(info: Dict[str, Any]) -> NotesError:
    """The exception for the library's last-error JSON object."""
    cls = _BY_KIND.get(info.get("kind", ""), NotesError)
    return cls(info.get("message", "unknown error"), field=info.get("field"), line=info.get("line"),
               sqlite_code=info.get("sqlite_code"), file=info.get("file"))
