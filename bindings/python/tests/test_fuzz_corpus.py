"""Replays the kept fuzz corpus (seeds and every case fuzzing ever found): each input is accepted or
refused with a NotesError, never anything else. `make stress` fuzzes 1 000 000 new inputs with atheris."""
from __future__ import annotations

import pytest

import noteskit as nk
from stress import fuzz_targets

FILES = fuzz_targets.corpus_files()


def test_the_corpus_has_seeds_for_every_target_the_library_supports():
    with nk.Store.memory() as store:
        targets = set(fuzz_targets.available(store))
    with_files = {p.parent.name for p in FILES}
    assert targets <= with_files, f"targets without a seed: {sorted(targets - with_files)}"


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_a_kept_fuzz_input_is_accepted_or_refused_with_a_notes_error(path):
    with nk.Store.memory() as store:
        if path.parent.name not in fuzz_targets.available(store):
            pytest.skip(f"the library has no {path.parent.name} yet")
        kind = fuzz_targets.replay(path.parent.name, store, path.read_bytes())
    assert kind is None or kind in {cls.kind for cls in _error_classes()}


def _error_classes():
    seen, todo = [], [nk.NotesError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen
