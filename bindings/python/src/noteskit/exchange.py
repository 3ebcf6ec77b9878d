"""Import and export: NotesKit JSON, JSON Lines, CSV, Markdown folders and chat transcripts; import
of Telegram Desktop and WhatsApp chat exports.

All parsing and writing happens in the library; this module marshals the arguments and the reports.

>>> import noteskit as nk, tempfile, os
>>> folder = tempfile.mkdtemp()
>>> with nk.Store.memory() as store:
...     _ = store.articles.create(title="2026-11-29", content="今天天气真好")
...     store.export(os.path.join(folder, "backup.json")).articles
1
>>> with nk.Store.memory() as store:
...     store.import_(os.path.join(folder, "backup.json"))
ImportReport(created=1, updated=0, skipped=0, errors=(), skipped_links=())
"""
from __future__ import annotations

import json
import os
from datetime import datetime
from ctypes import byref, c_void_p
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from . import _ffi
from ._convert import ms_from_time
from .errors import FormatError, InvalidArgumentError, ValidationError, error_from
from .privacy import file_mode

if TYPE_CHECKING:
    from .models import Conversation
    from .store import Store

PathLike = Union[str, "os.PathLike[str]"]
#: The formats ``format=`` takes.
FORMATS = ("json", "jsonl", "csv", "markdown", "transcript", "telegram", "whatsapp", "parquet")
#: What ``on_conflict=`` takes: what a record whose uid the store already has does.
CONFLICT_POLICIES = ("skip", "replace", "newer")
#: What ``on_error=`` takes: whether a malformed record stops the import or is listed and left out.
ERROR_POLICIES = ("raise", "skip")
#: What ``unknown_columns=`` takes (CSV): a column NotesKit does not know is refused or ignored.
UNKNOWN_COLUMNS = ("refuse", "ignore")
#: What ``date_order=`` takes (WhatsApp): day first or month first.
DATE_ORDERS = ("dmy", "mdy")


@dataclass(frozen=True)
class SkippedRecord:
    """A record an import left out on purpose: where it is (``file``, 1-based ``line``) and why
    (``reason``: stored already and unchanged, kept by ``on_conflict``, an empty note, a chat's
    service message or media without text, ...).

    >>> import os, tempfile, noteskit as nk
    >>> vault = tempfile.mkdtemp()
    >>> open(os.path.join(vault, "Untitled.md"), "w").close()       # what a stray click in Obsidian leaves
    >>> with nk.Store.memory() as store:
    ...     [(os.path.basename(s.file), s.line, s.reason) for s in store.import_(vault, format="markdown").skips]
    [('Untitled.md', 1, 'the note is empty')]
    """

    file: str
    line: int
    reason: str


@dataclass(frozen=True)
class ImportReport:
    """What an import did.

    ``created``, ``updated`` (``on_conflict="replace"`` or ``"newer"``) and ``skipped`` (the uid
    was there already and the policy, or identical content, kept the stored record) count records;
    ``errors`` holds the malformed records left out with ``on_error="skip"``, each a
    :class:`FormatError` with ``file``, ``line`` and ``field``; ``skips`` lists each skipped record
    as a :class:`SkippedRecord` (file, line, reason; the first 10 000). ``skipped_links`` lists the
    symbolic links of a Markdown folder (paths relative to it) that were not read because they
    lead outside the folder, or nowhere.

    >>> import os, tempfile, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "backup.json")
    >>> with nk.Store.memory() as store:
    ...     _ = store.articles.create(title="周末", content="今天天气真好")
    ...     _ = store.export(path)
    >>> with nk.Store.memory() as copy:
    ...     first = copy.import_(path)
    ...     again = copy.import_(path)        # matched by uid: nothing changes the second time
    ...     (first.created, again.created, again.skipped)
    (1, 0, 1)
    """

    created: int
    updated: int
    skipped: int
    errors: Tuple[FormatError, ...] = ()
    skips: Tuple[SkippedRecord, ...] = ()
    skipped_links: Tuple[str, ...] = ()

    def __repr__(self) -> str:  # the skips can be many: counted, not listed
        return (f"ImportReport(created={self.created}, updated={self.updated}, skipped={self.skipped}, "
                f"errors={self.errors!r}" + (f", skips=<{len(self.skips)} listed>" if self.skips else "")
                + f", skipped_links={self.skipped_links!r})")


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote: records of each kind, and the number of files.

    >>> import os, tempfile, noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     conv = store.conversations.create("Alice")
    ...     _ = conv.send("周末有空吗？"); _ = conv.receive("Saturday!")
    ...     store.export(os.path.join(tempfile.mkdtemp(), "backup.jsonl"))
    ExportReport(articles=0, drafts=0, conversations=1, messages=2, files=1)
    """

    articles: int
    drafts: int
    conversations: int
    messages: int
    files: int


def _path(path: Any) -> bytes:
    try:
        text = os.fspath(path)
    except TypeError:
        raise InvalidArgumentError(f"path must be a str or os.PathLike, got {type(path).__name__}", field="path") from None
    if isinstance(text, bytes):
        raise InvalidArgumentError("path must be a str, not bytes", field="path")
    return _ffi.text(text, "path")


def _options(options: Dict[str, Any]) -> Optional[bytes]:
    given = {k: getattr(v, "id", v) for k, v in options.items() if v is not None}
    if not given:
        return None
    try:
        return json.dumps(given, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as e:
        raise InvalidArgumentError(f"options cannot be sent: {e}") from None


def _is_parquet(path: PathLike, format: Optional[str]) -> bool:
    """Parquet is written and read by pyarrow here, not by the library."""
    if format is not None:
        return format == "parquet"
    try:
        text: Any = os.fspath(path)
    except TypeError:
        return False
    return isinstance(text, str) and text.lower().endswith(".parquet")


def export(store: "Store", path: PathLike, format: Optional[str] = None, *, table: Optional[str] = None,
           conversation: Union[int, "Conversation", None] = None, mode: Optional[int] = None,
           since: Optional[datetime] = None, until: Optional[datetime] = None, excel: bool = False) -> ExportReport:
    """See :meth:`noteskit.Store.export`."""
    if not isinstance(excel, bool):
        raise InvalidArgumentError(f"excel must be a bool, got {type(excel).__name__}", field="excel")
    if _is_parquet(path, format):
        for name, given in (("conversation", conversation is not None), ("excel", excel)):
            if given:
                raise ValidationError(f"{name} does not apply to Parquet", field=name)
        from . import _parquet

        return _parquet.export(store, _path(path).decode(), table, mode, since, until)
    options = dict(table=table, conversation=conversation, mode=None if mode is None else file_mode(mode),
                   excel=excel or None,  # a range: articles created, messages sent in [since, until)
                   since=None if since is None else ms_from_time(since, "since"),
                   until=None if until is None else ms_from_time(until, "until"))
    data = _ffi.call_json(_ffi.nk_store_export, store.handle, _path(path), _ffi.optional_text(format, "format"),
                          _options(options))
    return ExportReport(data["articles"], data["drafts"], data["conversations"], data["messages"], data["files"])


def import_outcome(status: int, out: c_void_p, raised: List[BaseException]) -> ImportReport:
    """What an import call came to: its report, or (a non-zero ``status``) its error, raised as the
    Python exception that stopped it (``raised[0]``: a progress callback's, a Parquet reader's)
    chained to the library's when there is one."""
    if status:
        error = _ffi.last_error()
        if raised:
            raise raised[0] from error
        raise error
    return report_from_json(_ffi.take_json(out.value))


def report_from_json(data: Dict[str, Any]) -> ImportReport:
    """An import's report as the library hands it out."""
    errors = tuple(error_from(e) for e in data["errors"])
    skips = tuple(SkippedRecord(k["file"], k["line"], k["reason"]) for k in data["skips"])
    return ImportReport(data["created"], data["updated"], data["skipped"], errors, skips,  # type: ignore[arg-type]
                        tuple(data["skipped_links"]))


def import_(store: "Store", path: PathLike, format: Optional[str] = None, *, on_conflict: str = "skip",
            on_error: str = "raise", progress: Optional[Callable[[int, int], Any]] = None,
            conversation: Any = None, title: Optional[str] = None, me: Optional[str] = None,
            tz: Optional[str] = None, encoding: Optional[str] = None, delimiter: Optional[str] = None,
            columns: Optional[Mapping[str, str]] = None, unknown_columns: str = "refuse",
            date_order: Optional[str] = None, table: Optional[str] = None) -> ImportReport:
    """See :meth:`noteskit.Store.import_`."""
    if progress is not None and not callable(progress):
        raise InvalidArgumentError("progress must be callable", field="progress")
    if _is_parquet(path, format):
        for name, value in (("conversation", conversation), ("title", title), ("me", me), ("tz", tz), ("encoding", encoding),
                            ("delimiter", delimiter), ("columns", columns), ("date_order", date_order),
                            ("unknown_columns", None if unknown_columns == "refuse" else unknown_columns)):
            if value is not None:
                raise ValidationError(f"{name} does not apply to Parquet", field=name)
        from . import _parquet

        return _parquet.import_(store, _path(path).decode(), table, on_conflict, on_error, progress)
    if table is not None:
        raise ValidationError("table applies to Parquet files (a CSV file's table is told by its columns)", field="table")
    if columns is not None and not isinstance(columns, Mapping):
        raise InvalidArgumentError(f"columns must be a mapping of header names to NotesKit column names, got {type(columns).__name__}",
                                   field="columns")
    raised: List[BaseException] = []

    def trampoline(_user_data: Any, done: int, total: int) -> int:
        try:
            return 0 if progress(done, total) is False else 1  # type: ignore[misc]
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the import rolled back
            raised.append(e)
            return 0

    options = dict(conversation=conversation, title=title, me=me, tz=tz, encoding=encoding, delimiter=delimiter,
                   columns=dict(columns) if columns is not None else None,
                   unknown_columns=None if unknown_columns == "refuse" else unknown_columns, date_order=date_order,
                   on_conflict=_ffi.text(on_conflict, "on_conflict").decode(), on_error=_ffi.text(on_error, "on_error").decode())
    callback = _ffi.nk_progress_callback(trampoline) if progress is not None else _ffi.nk_progress_callback()
    out = c_void_p()
    status = _ffi.nk_store_import(store.handle, _path(path), _ffi.optional_text(format, "format"), _options(options),
                                  callback, None, byref(out))
    return import_outcome(status, out, raised)
