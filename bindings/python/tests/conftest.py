from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

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


def batch_out() -> tuple:
    """Out-parameters for a batch export: ArrowArray, ArrowSchema (each by reference)."""
    from ctypes import byref

    from noteskit import _ffi

    return byref(_ffi.ArrowArray()), byref(_ffi.ArrowSchema())


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL server for the whole run (examples/throwaway_postgres.py): started
    on first use, stopped and deleted at the end, also when tests fail."""
    from examples.throwaway_postgres import ThrowawayCluster

    with ThrowawayCluster() as cluster:
        yield cluster


@pytest.fixture
def pg_database(pg_cluster: Any) -> Iterator[str]:
    """A fresh, empty database on the throwaway server, owned by its administrator role; the
    administrator's URI of it. Dropped after the test."""
    import secrets

    name = "t_" + secrets.token_hex(6)
    pg_cluster.psql(f"CREATE DATABASE {name} OWNER noteskit_admin")
    try:
        yield pg_cluster.uri(database=name)
    finally:
        pg_cluster.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
