"""``select``: every record of a kind as a lazy :class:`Selection`, for pandas, polars, DuckDB and pyarrow."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, List, TypeVar

from . import _arrow
from ._convert import Columns
from .errors import NotesError, ValidationError

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped,unused-ignore]
    import polars
    import pyarrow  # type: ignore[import-untyped,unused-ignore]

T = TypeVar("T")

#: ``since`` / ``until`` not given, as the library takes it.
NO_TIME = -(2 ** 63)


def order_code(order: str) -> int:
    """``order=`` as the library takes it: 1 ascending, -1 descending."""
    if order == "asc":
        return 1
    if order == "desc":
        return -1
    raise ValidationError(f'order must be "asc" or "desc", got {order!r}', field="order")


def _extra(module: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise NotesError(f"{what} needs {module}, which is not installed: pip install 'noteskit[arrow]' "
                         f"(pyarrow, pandas, polars and duckdb)") from None


class Selection(Generic[T]):
    """Records chosen by ``select``, read only when asked for, and every time afresh.

    A ``Selection`` speaks the Arrow PyCapsule Interface (``__arrow_c_stream__``), so
    ``pyarrow.table(sel)``, ``polars.DataFrame(sel)`` and DuckDB (``duckdb.sql("SELECT ... FROM
    sel")``) read it directly; :meth:`to_arrow`, :meth:`to_pandas` and :meth:`to_polars` do the
    same for you (they need the ``[arrow]`` extra). Iterating it yields the records themselves
    (:class:`Article`, :class:`Message`, :class:`Conversation`), a batch at a time, without
    pyarrow. Columns are named as the record's fields: ids ``int64``, ``from_me`` ``bool``, times
    ``timestamp[ms, tz=UTC]``, text ``string``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     conv = store.conversations.create("Alice")
    ...     _ = conv.send("hello"); _ = conv.receive("hi")
    ...     sel = store.messages.select(conversation=conv.id)
    ...     (sel.count(), [m.content for m in sel])
    (2, ['hello', 'hi'])
    """

    def __init__(self, open_stream: Callable[[int, "_arrow.ArrowArrayStream"], None], count: Callable[[], int],
                 records: Callable[[Columns], List[T]], description: str) -> None:
        self._open = open_stream
        self._count = count
        self._records = records
        self._description = description

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """A new ``ArrowArrayStream`` PyCapsule over the records, read from the store as it is now.

        The rows are read on two threads (the second half on its own connection) when the store is
        a file holding many of them. ``requested_schema`` is not supported and ignored: the
        stream has the schema described above.
        """
        return _arrow.stream_capsule(lambda stream: self._open(2, stream))

    def to_arrow(self) -> "pyarrow.Table":
        """The records as a ``pyarrow.Table`` (needs pyarrow)."""
        pa = _extra("pyarrow", "Selection.to_arrow()")
        table: "pyarrow.Table" = pa.RecordBatchReader.from_stream(self).read_all()
        return table

    def to_pandas(self) -> "pandas.DataFrame":
        """The records as a ``pandas.DataFrame``, times as ``datetime64[ms, UTC]`` (needs pandas and pyarrow)."""
        _extra("pandas", "Selection.to_pandas()")
        _extra("pyarrow", "Selection.to_pandas()")
        frame: "pandas.DataFrame" = self.to_arrow().to_pandas()
        return frame

    def to_polars(self) -> "polars.DataFrame":
        """The records as a ``polars.DataFrame`` (needs polars)."""
        pl = _extra("polars", "Selection.to_polars()")
        frame: "polars.DataFrame" = pl.DataFrame(self)
        return frame

    def __iter__(self) -> Iterator[T]:
        """The records, read a batch (65 536 rows) at a time; the store may be used between batches."""
        for columns in _arrow.iter_batches(lambda stream: self._open(1, stream)):
            yield from self._records(columns)

    def count(self) -> int:
        """How many records the selection holds now."""
        return self._count()

    def __repr__(self) -> str:
        return f"<noteskit.Selection {self._description}>"
