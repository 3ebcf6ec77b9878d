"""Reading a store's whole change feed a page at a time, as a subscriber catching up would."""
from __future__ import annotations

from typing import List

import noteskit as nk


def every_change(store: nk.Store, since: int = 0, limit: int = 1000) -> List[nk.Change]:
    """Every change after `since`, read `limit` at a time."""
    out: List[nk.Change] = []
    while True:
        page = store.changes(since=since, limit=limit)
        if not page:
            return out
        out += page
        since = page[-1].seq
