"""What the analysis calls share: ids packed for the library, time ranges, the ``missing=`` option."""
from __future__ import annotations

import operator
from array import array
from datetime import datetime
from typing import Any, Iterable, Optional, Tuple

from ._convert import ms_from_time
from .errors import InvalidArgumentError, ValidationError
from .selection import NO_TIME


def id_array(ids: Iterable[Any], field: str = "ids") -> "array[int]":
    """``ids`` as a C array of int64 (an ``array('q')``): each an int (or anything with
    ``__index__``, like numpy's integers), never a bool; :class:`InvalidArgumentError` naming the
    first that is not, :class:`ValidationError` for one out of range."""
    if isinstance(ids, (str, bytes)):
        raise InvalidArgumentError(f"{field} must be a list of ints, got {type(ids).__name__}", field=field)
    values = ids if isinstance(ids, (list, tuple)) else list(ids)
    if set(map(type, values)) <= {int}:
        try:
            return array("q", values)
        except OverflowError:
            pass
    out = array("q")
    for i, v in enumerate(values):
        if isinstance(v, bool):
            raise InvalidArgumentError(f"{field}[{i}] must be an int, got bool", field=field, line=i)
        try:
            n = operator.index(v)
        except TypeError:
            raise InvalidArgumentError(f"{field}[{i}] must be an int, got {type(v).__name__}", field=field, line=i) from None
        if not -(2 ** 63) <= n < 2 ** 63:
            raise ValidationError(f"{field}[{i}] is out of range: {n}", field=field, line=i)
        out.append(n)
    return out


def pointer(ids: "array[int]") -> Optional[int]:
    """The address of the ids (None for none)."""
    return ids.buffer_info()[0] if len(ids) else None


def time_bounds(since: Optional[datetime], until: Optional[datetime]) -> Tuple[int, int]:
    """``since`` / ``until`` as the library takes them: UTC milliseconds, ``NO_TIME`` for None.
    Naive datetimes are UTC."""
    return (NO_TIME if since is None else ms_from_time(since, "since"),
            NO_TIME if until is None else ms_from_time(until, "until"))


def missing_code(missing: str) -> int:
    """``missing=`` as the library takes it: 0 raises NotFoundError, 1 skips."""
    if missing == "error":
        return 0
    if missing == "skip":
        return 1
    raise ValidationError(f'missing must be "error" or "skip", got {missing!r}', field="missing")
