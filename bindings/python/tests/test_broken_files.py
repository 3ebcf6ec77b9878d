"""Damaged files, files that are not stores, impossible values and a full disk: a clear NotesError,
nothing saved lost, never a crash."""
from __future__ import annotations

import random
import sqlite3

import pytest

import noteskit as nk
from stress import broken_files


def test_random_bytes_in_a_stores_pages_give_corrupt_store_error_or_readable_data_never_a_crash():
    figures = broken_files.run_corruption(rounds=12)
    assert figures["crashes"] == 0 and figures.get("outcome_CorruptStoreError", 0) > 0


def test_a_damaged_store_raises_corrupt_store_error_with_a_message_to_restore(db_path):
    with nk.Store.open(db_path) as s:
        s.articles.create_many([{"title": f"t{i}", "content": "x" * 500} for i in range(2000)])
    data = bytearray(db_path.read_bytes())
    rng = random.Random(1)
    # whole pages of noise: scattered bytes can all land in text, which SQLite cannot tell from data
    for page in rng.sample(range(2, len(data) // 4096), 8):
        data[page * 4096:(page + 1) * 4096] = rng.randbytes(4096)
    db_path.write_bytes(bytes(data))
    with pytest.raises(nk.CorruptStoreError, match="damaged"):
        with nk.Store.open(db_path) as s:
            for _ in s.articles.iter():
                pass


@pytest.mark.parametrize("name", ["random bytes", "a text file", "one byte", "a SQLite header then noise",
                                  "a truncated store"])
def test_a_file_that_is_not_a_store_is_refused_as_corrupt_and_left_as_it_was(tmp_path, name):
    path = broken_files.garbage_files(tmp_path)[name]
    before = path.read_bytes()
    with pytest.raises(nk.CorruptStoreError, match="not a database|damaged"):
        with nk.Store.open(path) as s:
            list(s.articles.iter())
    assert path.read_bytes() == before


def test_another_applications_database_is_refused_and_not_altered(tmp_path):
    path = broken_files.garbage_files(tmp_path)["another application's database"]
    before = path.read_bytes()
    with pytest.raises(nk.SchemaError, match="not a NotesKit store"):
        nk.Store.open(path)
    assert path.read_bytes() == before  # the old code switched it to WAL before refusing it
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()


def test_an_empty_file_becomes_a_new_store(tmp_path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    path.chmod(0o600)  # an existing file keeps its mode: make it private
    with nk.Store.open(path) as s:
        assert s.articles.count() == 0


def test_an_impossible_time_written_by_another_program_is_read_clamped_not_a_crash(db_path):
    with nk.Store.open(db_path) as s:
        a = s.articles.create(title="t", content="c")
    db = sqlite3.connect(db_path)
    db.execute("UPDATE articles SET created_at = ?, updated_at = ?", (2 ** 62, -(2 ** 63)))
    db.commit()
    db.close()
    with nk.Store.open(db_path) as s:
        got = s.articles.get(a.id)
        assert (got.created_at.year, got.updated_at.year) == (9999, 1)
        assert [x.id for x in s.articles.list().items] == [a.id]


def test_opening_an_up_to_date_store_writes_nothing(db_path):
    with nk.Store.open(db_path) as s:
        s.articles.create(title="t", content="c")
    before = db_path.read_bytes()
    with nk.Store.open(db_path) as s:
        assert s.articles.count() == 1
    assert db_path.read_bytes() == before
    assert not db_path.with_name(db_path.name + "-wal").exists() or \
        db_path.with_name(db_path.name + "-wal").stat().st_size == 0


def test_a_full_disk_is_a_storage_full_error_that_loses_nothing_saved():
    with broken_files.small_disk(1024) as disk:
        if disk is None:
            pytest.skip("mounting a small tmpfs needs root")
        figures = broken_files.fill_until_full(disk / "full.db", random.Random(5), block=20_000)
    assert figures["full_create"] == 1 and figures["lost"] == 0 and figures["integrity"] == "ok"
    assert figures["saved_before_full"] > 0


def test_a_store_at_its_size_cap_is_a_storage_full_error_that_loses_nothing_saved(tmp_path):
    figures = broken_files.fill_until_full(tmp_path / "capped.db", random.Random(6), block=20_000,
                                           max_size_bytes=512 * 1024)
    assert figures["full_create"] == 1 and figures["lost"] == 0 and figures["integrity"] == "ok"
    assert figures["saved_before_full"] > 0


def test_the_size_cap_is_rounded_to_pages_never_below_the_current_size_and_must_be_positive(tmp_path):
    with nk.Store.open(tmp_path / "s.db", max_size_bytes=10 ** 6) as s:
        assert s.set_max_size(10 ** 6) == 245 * 4096  # whole 4 KiB pages
        s.articles.create_many([{"title": "t", "content": "x" * 4000} for _ in range(50)])
        assert s.set_max_size(1) >= 50 * 4096  # never below what the store already holds
        for bad in (0, -1):
            with pytest.raises(nk.ValidationError) as e:
                s.set_max_size(bad)
            assert e.value.field == "max_size_bytes"
        assert s.articles.count() == 50
    with pytest.raises(nk.ValidationError):
        nk.Store.memory(max_size_bytes=0)
    with nk.Store.memory(max_size_bytes=2 ** 63 - 1) as m:
        m.articles.create(title="t", content="c")


@pytest.mark.parametrize("damaged", ["0003_sea\ufffdch_index", "", "0003_s arch_index", "\x01\x02"])
def test_a_damaged_migration_list_is_a_corrupt_store_not_a_newer_version(db_path, damaged):
    nk.Store.open(db_path).close()
    db = sqlite3.connect(db_path)
    db.execute("UPDATE migrations SET name = ? WHERE id = (SELECT max(id) FROM migrations)", (damaged,))
    db.commit()
    db.close()
    with pytest.raises(nk.CorruptStoreError, match="damaged"):
        nk.Store.open(db_path)
    with pytest.raises(nk.CorruptStoreError, match="damaged"):
        nk.Store.open(db_path, read_only=True)
