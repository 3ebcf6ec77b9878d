"""Processes, kill -9 and read-only files (the short runs; `make stress` runs the long ones)."""
from __future__ import annotations

import pytest

import noteskit as nk
from stress import kill9, processes


def test_four_processes_writing_one_file_lose_nothing_and_never_see_locked(db_path):
    figures = processes.run(processes=4, ops=250, path=db_path)
    assert figures["busy_errors"] == 0 and figures["integrity"] == "ok"


def test_killing_a_draft_writer_at_random_moments_never_loses_a_saved_draft(db_path):
    figures = kill9.run_drafts(kills=4, path=db_path)
    assert figures["lost"] == 0 and figures["integrity"] == "ok"
    assert figures["open"] > 0 and figures["saved"] > 0


def test_a_read_only_store_reads_and_refuses_writes(db_path):
    with nk.Store.open(db_path) as s:
        a = s.articles.create(title="t", content="c")
    before = db_path.read_bytes()
    with nk.Store.open(db_path, read_only=True) as s:
        assert s.articles.get(a.id) == a
        with pytest.raises(nk.ReadOnlyError, match="read-only"):
            s.articles.create(title="x", content="y")
        with pytest.raises(nk.ReadOnlyError):
            s.articles.new_draft()
    assert db_path.read_bytes() == before


def test_opening_a_missing_file_read_only_does_not_create_it(tmp_path):
    with pytest.raises(nk.StorageError):
        nk.Store.open(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_damaged_store_raises_corrupt_store_error_naming_the_damage(db_path):
    with nk.Store.open(db_path) as s:
        s.articles.create_many([{"title": f"t{i}", "content": "x" * 500} for i in range(2000)])
    data = bytearray(db_path.read_bytes())
    page = 4096
    # Every b-tree page but the first (the schema) gets an impossible page type.
    for offset in range(page, len(data), page):
        data[offset] = 0xFF
    db_path.write_bytes(bytes(data))
    with pytest.raises(nk.CorruptStoreError, match="damaged"):
        with nk.Store.open(db_path) as s:
            for _ in s.articles.iter():
                pass


def test_killing_an_import_at_random_moments_leaves_all_of_it_or_none(db_path):
    figures = kill9.run_import(kills=3, records=5_000, path=db_path)
    assert figures["half_imports"] == 0 and figures["integrity"] == "ok"
    assert figures["final_articles"] in (0, 5_000)


def test_killing_an_export_at_random_moments_leaves_whole_targets_and_no_leftover_past_the_next_export():
    figures = kill9.run_export(kills=4, records=1_000)
    assert figures["leftovers_after_next_export"] == 0 and figures["kills"] == 4


def test_killing_a_telegram_or_whatsapp_import_at_random_moments_leaves_all_of_it_or_none(db_path):
    figures = kill9.run_chat_import(kills=3, messages=3_000, path=db_path)
    assert figures["half_imports"] == 0 and figures["integrity"] == "ok"


def test_killing_the_migration_to_compact_rows_at_random_moments_loses_nothing(db_path):
    figures = kill9.run_migration(kills=4, messages=20_000, path=db_path)
    assert figures["integrity"] == "ok" and figures["kills"] == 4
