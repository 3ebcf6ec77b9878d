"""Parquet files: ``store.export("x.parquet", table=...)`` and ``store.import_("x.parquet")``, through pyarrow.

Export streams a table's ``select()`` (Arrow batches straight from the library) into a
``pyarrow.parquet.ParquetWriter``, a batch of 65 536 rows at a time; import streams the file's
batches into the library's table import (``nk_store_import_table``: the import of every other
format — one transaction, uids matched, ``on_conflict``/``on_error``, a report — with rows as the
records). The file is written as every export is: a private temporary file beside the target,
synced and renamed over it.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import secrets
from contextlib import contextmanager
from datetime import datetime
from ctypes import c_void_p
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

from . import _ffi
from ._columns import arrow_stream
from .errors import CancelledError, FormatError, InvalidArgumentError, NotesError, ValidationError
from .selection import _extra

if TYPE_CHECKING:
    from .exchange import ExportReport, ImportReport
    from .store import Store

TABLES = ("articles", "conversations", "messages")
#: The key of the Parquet file's metadata that names the table an export wrote.
TABLE_KEY = b"noteskit.table"
#: Columns a table's select() has that are the store's own ids: written, not read back.
STORE_IDS = ("id", "conversation_id")


def _pyarrow(what: str) -> Any:
    _extra("pyarrow", what)
    import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

    return pq


def _mode(mode: Optional[int]) -> int:
    """An export's mode, as the library checks it: read and write bits, the owner's included."""
    if mode is None:
        return 0o600
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise InvalidArgumentError(f"mode must be an int such as 0o640, got {type(mode).__name__}", field="mode")
    if mode & ~0o666 or mode & 0o600 != 0o600:
        raise ValidationError(f"mode must give the owner read and write and no execute or special bits (0o600 to 0o666), "
                              f"got {mode:#o}", field="mode")
    return mode


@contextmanager
def _replacing(path: str, mode: int) -> Iterator[Any]:
    """A binary file to write the export into: made beside ``path`` as the library makes its
    temporaries (``.noteskit-new-`` + 26 random letters, ``O_EXCL``, no link followed, locked, given
    its mode, renamed ``.noteskit-tmp-…``), synced and renamed over ``path`` when the body returns
    (a link at ``path`` is replaced, not followed), the folder synced; removed if it fails."""
    folder = os.path.dirname(os.path.abspath(path))
    letters = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(26))
    new, tmp = os.path.join(folder, ".noteskit-new-" + letters), os.path.join(folder, ".noteskit-tmp-" + letters)
    try:
        fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise NotesError(f"cannot write {path}: {e.strerror}", field="path") from None
    name = new
    try:
        with os.fdopen(fd, "wb") as file:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.fchmod(fd, mode)
            os.rename(new, tmp)
            name = tmp
            yield file
            file.flush()
            os.fsync(fd)
            os.rename(tmp, path)
            name = ""
            folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(folder_fd)
            finally:
                os.close(folder_fd)
    except OSError as e:
        raise NotesError(f"cannot write {path}: {e.strerror}", field="path") from None
    finally:
        if name:
            try:
                os.unlink(name)
            except OSError:
                pass


def export(store: "Store", path: str, table: Optional[str], mode: Optional[int], since: Optional[datetime] = None,
           until: Optional[datetime] = None) -> "ExportReport":
    """Writes one table of the store to the Parquet file ``path``; see :meth:`noteskit.Store.export`."""
    from .exchange import ExportReport

    table = table or "articles"
    if table not in TABLES:
        raise ValidationError(f'table must be "articles", "conversations" or "messages", got {table!r}', field="table")
    bits = _mode(mode)
    pq = _pyarrow("Parquet export")
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]

    if table == "conversations" and (since is not None or until is not None):
        raise ValidationError("since and until apply to the articles and messages tables of a Parquet file", field="since")
    selection: Any = (store.articles.select(since=since, until=until, order="asc") if table == "articles"
                      else store.messages.select(since=since, until=until, order="asc") if table == "messages"
                      else store.conversations.select())
    reader = pa.RecordBatchReader.from_stream(selection)
    schema = reader.schema
    add: Callable[[Any], Any] = lambda batch: batch
    if table == "messages":  # a message names its conversation by uid and title, as in messages.csv
        conversations = store.conversations.select().to_arrow().combine_chunks()
        ids, uids, titles = (conversations[name].chunk(0) if conversations.num_rows else pa.array([], type)
                             for name, type in (("id", pa.int64()), ("uid", pa.string()), ("title", pa.string())))
        schema = schema.append(pa.field("conversation_uid", pa.string())).append(pa.field("conversation_title", pa.string()))

        def add(batch: Any) -> Any:
            where = pc.index_in(batch["conversation_id"], value_set=ids)
            return pa.RecordBatch.from_arrays(batch.columns + [pc.take(uids, where), pc.take(titles, where)], schema=schema)

    schema = schema.with_metadata({TABLE_KEY: table.encode()})
    rows = 0
    with _replacing(path, bits) as file:
        with pq.ParquetWriter(file, schema) as writer:
            for batch in reader:
                writer.write_batch(add(batch).replace_schema_metadata(schema.metadata))
                rows += batch.num_rows
    counts = {"articles": 0, "conversations": 0, "messages": 0}
    counts[table] = rows
    return ExportReport(counts["articles"], 0, counts["conversations"], counts["messages"], 1)


def _table_of(names: List[str], metadata: Optional[Dict[bytes, bytes]], given: Optional[str], path: str) -> str:
    """The table a file holds: ``table=``, else what the export wrote in its metadata, else told by its columns."""
    if given is not None:
        if given not in TABLES:
            raise ValidationError(f'table must be "articles", "conversations" or "messages", got {given!r}', field="table")
        return given
    written = (metadata or {}).get(TABLE_KEY, b"").decode("utf-8", "replace")
    if written in TABLES:
        return written
    if "from_me" in names:
        return "messages"
    if "content" in names:
        return "articles"
    if "title" in names:
        return "conversations"
    raise FormatError(f"{path} holds none of the NotesKit tables (columns: {', '.join(names[:20])}); an articles "
                      "table has title and content, a messages table content and from_me, a conversations table title",
                      file=path)


def import_(store: "Store", path: str, table: Optional[str], on_conflict: str, on_error: str,
            progress: Optional[Callable[[int, int], Any]]) -> "ImportReport":
    """Imports a Parquet file of one table; see :meth:`noteskit.Store.import_`."""
    from .exchange import import_outcome

    pq = _pyarrow("Parquet import")
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
    except FileNotFoundError:
        raise NotesError(f"cannot read {path}: no such file", field="path") from None
    except (pa.ArrowException, OSError) as e:
        raise FormatError(f"{path} is not a readable Parquet file: {e}", file=path) from None
    names = list(schema.names)
    kind = _table_of(names, schema.metadata, table, path)
    kept = [name for name in names if name not in STORE_IDS]
    total = parquet.metadata.num_rows
    cancelled: List[BaseException] = []

    def batches() -> Iterator[Any]:
        done = 0
        if progress is not None and progress(0, total) is False:
            raise CancelledError("the import was cancelled by its progress callback; nothing was written")
        for batch in parquet.iter_batches(batch_size=65_536, columns=kept):
            yield batch
            done += batch.num_rows
            if progress is not None and progress(done, total) is False:
                error = CancelledError("the import was cancelled by its progress callback; nothing was written")
                cancelled.append(error)
                raise error

    def guarded() -> Iterator[Any]:
        try:
            yield from batches()
        except (pa.ArrowException, OSError) as e:  # a damaged page: the library stops and writes nothing
            cancelled.append(FormatError(f"{path} is damaged: {e}", file=path))
            raise
        except BaseException as e:
            if not cancelled:
                cancelled.append(e)
            raise

    reader = pa.RecordBatchReader.from_batches(pa.schema([schema.field(n) for n in kept]), guarded())
    options = _ffi.text(f'{{"on_conflict": "{_choice(on_conflict, "on_conflict")}", "on_error": "{_choice(on_error, "on_error")}"}}',
                        "options")
    stream = arrow_stream(reader)
    out = c_void_p()
    try:
        status = _ffi.nk_store_import_table(store.handle, kind.encode(), ctypes.byref(stream.struct), _ffi.text(path, "path"),
                                            options, ctypes.byref(out))
    finally:
        stream.close()
    return import_outcome(status, out, cancelled)


def _choice(value: str, field: str) -> str:
    """A policy name, checked to be plain text (the library says which ones it takes)."""
    text = _ffi.text(value, field).decode()
    if not text.isidentifier():
        raise ValidationError(f"{field} must be a policy name such as \"skip\", got {value!r}", field=field)
    return text
