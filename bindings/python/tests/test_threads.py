"""Eight Python threads on one store (the short run; `make stress` runs 10 000 operations each)."""
from __future__ import annotations

from stress import threads


def test_eight_threads_mixing_every_operation_lose_no_write_and_read_consistently(tmp_path):
    figures = threads.run(threads=8, ops=400, path=tmp_path / "threads.db")
    assert figures["operations"] == 3200
    assert figures["live_articles"] > 0 and figures["lost_writes"] == 0

