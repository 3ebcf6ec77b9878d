"""Memory: a scripted session keeps its resident size flat; valgrind finds no definite leak in the
library. `make stress` runs 1 000 000 calls and a longer valgrind session."""
from __future__ import annotations

import shutil

import pytest

from stress import leaks


def test_a_session_of_many_calls_across_the_api_keeps_memory_flat(tmp_path):
    figures = leaks.session(40_000, tmp_path / "leaks.db")
    assert figures["calls"] >= 40_000
    assert figures["growth_mb"] < 10


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_valgrind_finds_no_definite_leak_and_no_invalid_access_in_the_library():
    figures = leaks.run_valgrind(calls=200, control=False)
    assert figures["definite_leaks_in_library"] == 0 and figures["invalid_accesses_in_library"] == 0
