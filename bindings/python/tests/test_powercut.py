"""A write that returned survives a power cut (the short runs; `make stress` runs 1 000+ cuts).

The power-cut simulator (stress/powercut_sim.c, test-only) cuts a forked child at sync points and
between them; see stress/powercut.py for the sequences and what is checked after each cut."""
from __future__ import annotations

import pytest

import noteskit as nk
from stress import powercut

SMALL = {"drafts": 3, "chat": 4, "reindex": 20, "migration": 10, "export": 20}


def assert_kept(figures):
    assert figures["lost"] == 0 and figures["unclean"] == 0, figures.get("detail")
    assert figures["index_mismatch"] == 0 and figures["export_bad"] == 0, figures.get("detail")
    assert figures["torn_lost"] == 0 and figures["torn_unclean"] == 0, figures.get("detail")


def test_saved_drafts_and_sent_messages_survive_power_cuts_at_sync_points():
    figures = powercut.run_isolated(sequences=["drafts", "chat"], random_points=2, max_points=8, sizes=SMALL)
    assert_kept(figures)
    assert figures["drop_cuts"] == 16 and figures["torn_cuts"] == 16
    assert figures["torn_writes"] > 0  # the torn mode did tear unsynced writes


def test_an_export_after_a_power_cut_is_the_old_file_or_the_whole_new_one():
    assert_kept(powercut.run_isolated(sequences=["export"], random_points=2, max_points=8, sizes=SMALL))


def test_a_migration_and_a_reindex_cut_by_a_power_cut_leave_a_clean_store():
    assert_kept(powercut.run_isolated(sequences=["migration", "reindex"], random_points=1, max_points=4, sizes=SMALL))


def test_the_fast_mode_loses_returned_writes_to_a_power_cut_but_stays_consistent():
    # The trials can fail: with synchronous=NORMAL the last commits are not on disk when they return.
    figures = powercut.run_isolated(sequences=["chat"], random_points=4, max_points=10, sizes=SMALL, durability="fast")
    assert figures["lost"] > 0
    assert figures["unclean"] == 0 and figures["index_mismatch"] == 0


@pytest.mark.parametrize("sabotage", [1, 2], ids=["no syncfs of a folder export", "no fsync of the folder after a rename"])
def test_an_export_without_its_syncs_is_caught_by_the_trials(sabotage):
    figures = powercut.run_isolated(sequences=["export"], random_points=4, max_points=12, sizes=SMALL, sabotage=sabotage)
    assert figures["export_bad"] > 0 and figures["unclean"] == 0


@pytest.mark.parametrize("sync_data, sync_folder, left", [
    (True, True, b"new contents"),   # what the exporters do
    (True, False, b"old contents"),  # the rename is not on disk until its folder is synced
    (False, True, b""),              # the name is, but not the bytes: ALICE's classic
])
def test_the_simulator_keeps_only_synced_bytes_and_names(tmp_path, sync_data, sync_folder, left):
    assert powercut.replace_file(powercut.simulator(), tmp_path, sync_data, sync_folder) == left


def test_durability_is_durable_or_fast(db_path):
    with nk.Store.open(db_path, durability="fast") as s:
        a = s.articles.create(title="t", content="c")
    with nk.Store.open(db_path) as s:
        assert s.articles.get(a.id) == a
    with pytest.raises(nk.ValidationError) as e:
        nk.Store.open(db_path, durability="paranoid")
    assert e.value.field == "durability"
