"""What :meth:`Store.compact` reports."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class CompactReport:
    """What a :meth:`Store.compact` did.

    ``changes_removed`` changes were superseded by a newer change of the same record and left the
    feed; ``changes_kept`` remain (each record's latest change, deletes included, and what a
    retention window or a subscriber still needed); ``bytes_freed`` is what the file gave back
    (0 when the free pages were under a quarter of the file: they stay for later writes; in WAL
    mode the file shrinks at the next checkpoint); ``horizon`` is the seq up to which
    superseded changes were removed: ``changes(since)`` below it reads the compacted feed, the
    latest change of every record changed after ``since``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="t", content="v1")
    ...     for n in range(2, 6):
    ...         a = store.articles.update(a.id, content=f"v{n}")
    ...     report = store.compact()
    ...     (report.changes_removed, report.changes_kept, [(c.op, c.revision) for c in store.changes()])
    (4, 1, [('update', 5)])
    """

    changes_removed: int
    changes_kept: int
    bytes_freed: int
    horizon: int

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> "CompactReport":
        return cls(d["changes_removed"], d["changes_kept"], d["bytes_freed"], d["horizon"])
