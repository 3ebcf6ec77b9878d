from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

import noteskit as nk

REPO = Path(__file__).resolve().parents[3]
# The reliability checks live in REPO/stress (shared with `make stress`); the tests run them small.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture
def store() -> Iterator[nk.Store]:
    with nk.Store.memory() as s:
        yield s


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "notes.db"


def page_out() -> tuple:
    """Out-parameters for a page export: ArrowArray, ArrowSchema, cursor (each by reference)."""
    from ctypes import byref, c_void_p

    from noteskit import _ffi

    return byref(_ffi.ArrowArray()), byref(_ffi.ArrowSchema()), byref(c_void_p())


def last_error() -> dict:
    """This thread's last error of the library, decoded (there must be one)."""
    import ctypes
    import json

    from noteskit import _ffi

    pointer = _ffi.nk_last_error()
    assert pointer
    try:
        return dict(json.loads(ctypes.string_at(pointer)))
    finally:
        _ffi.nk_free(pointer)


def batch_out() -> tuple:
    """Out-parameters for a batch export: ArrowArray, ArrowSchema (each by reference)."""
    from ctypes import byref

    from noteskit import _ffi

    return byref(_ffi.ArrowArray()), byref(_ffi.ArrowSchema())
