"""Every export of the C ABI against every hostile argument, generated from include/noteskit.h.

`make stress` runs the same sweep with 100 MB strings and many more closing-store rounds.
"""
from __future__ import annotations

import pytest

import noteskit as nk
from stress import abi_sweep


def test_the_sweep_knows_how_to_drive_every_parameter_of_every_export():
    header = abi_sweep.parse_header()
    assert len(header.exports) >= 25 and "nk_store" in header.handle_types
    roles = {p.role for e in header.exports.values() for p in e.params}
    assert {"handle", "out_handle", "string", "out_string", "out_scalar", "int64", "int32", "callback"} <= roles
    # the header's "(nullable)" notes are read: NULL is refused only where the header does not allow it
    update = {p.name: p.nullable for p in header.exports["nk_article_update"].params if p.role == "string"}
    assert update == {"title": True, "content": True}
    create = {p.name: p.nullable for p in header.exports["nk_article_create"].params if p.role == "string"}
    assert create == {"title": False, "content": False}


def test_every_export_answers_every_hostile_argument_with_an_error_code_and_message_never_a_crash():
    figures = abi_sweep.run(big_mb=16, storm_rounds=10)
    assert figures["exports"] == len(abi_sweep.parse_header().exports)
    assert figures["calls"] > 900 and figures["crashes"] == 0


def test_a_huge_cursor_is_refused_as_malformed(store):
    store.articles.create(title="t", content="c")
    with pytest.raises(nk.ValidationError, match="malformed") as e:
        store.articles.list(after="articles." + "9" * (8 * 2 ** 20))
    assert e.value.field == "cursor"


def test_a_layout_cache_bound_of_any_size_is_accepted_not_a_crash(store):
    # 2**63 - 1 overflowed the cache's table-size doubling and trapped (found by the sweep)
    for bound in (2 ** 63 - 1, 10 ** 18, 2 ** 62):
        with store.layout(width=375, cache_bytes=bound) as lay:
            assert lay.stats().capacity_bytes == bound
