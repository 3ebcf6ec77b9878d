from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

import noteskit as nk

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def store() -> Iterator[nk.Store]:
    with nk.Store.memory() as s:
        yield s


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "notes.db"
