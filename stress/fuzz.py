"""Coverage-guided fuzzing with atheris (libFuzzer for Python) over the library's parsers.

Every target of ``stress/fuzz_targets.py`` the library supports (bulk JSON records, article text,
cursors, and — once the library has them — the import formats JSON, JSON Lines, CSV, Markdown
front matter and transcripts, and article/message search queries) gets an equal share of the
inputs. Each target runs in its own process (libFuzzer exits when done), starting from the kept
corpus in ``bindings/python/tests/fuzz_corpus/<target>/``. What must hold: 0 crashes, and every
failure a ``NotesError``. An input that breaks that is copied into the kept corpus as
``crash-<sha1>``, so ``make test`` replays it from then on.

Only the Python side is coverage-instrumented (the Swift library is not built with
SanitizerCoverage), so guidance comes from the binding's code paths and the mutator's reach;
the seeds carry the formats' structure.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

from .common import REPO, child_env

RESET_EVERY = 2_000  # inputs per in-memory store, so imports and stored queries do not grow one store forever

REPLAY = """
import sys, noteskit as nk
from stress import fuzz_targets
with nk.Store.memory() as store:
    print(fuzz_targets.replay(sys.argv[1], store, open(sys.argv[2], "rb").read()))
"""  # inputs per in-memory store, so imports do not grow one store forever


def drive(target_name: str, libfuzzer_args: List[str]) -> None:
    """Runs inside the child: sets up atheris on one target and fuzzes until libFuzzer stops."""
    import atheris

    with atheris.instrument_imports(include=["noteskit", "stress.fuzz_targets"]):
        import noteskit as nk
        from stress import fuzz_targets

    state: Dict[str, Any] = {"store": nk.Store.memory(), "n": 0}
    target = fuzz_targets.available(state["store"])[target_name]

    def one_input(data: bytes) -> None:
        state["n"] += 1
        if state["n"] % RESET_EVERY == 0:
            state["store"].close()
            state["store"] = nk.Store.memory()
        try:
            target(state["store"], data)
        except nk.NotesError:
            pass

    atheris.Setup([sys.argv[0], *libfuzzer_args], one_input)
    atheris.Fuzz()


def targets() -> List[str]:
    import noteskit as nk

    from . import fuzz_targets

    with nk.Store.memory() as store:
        return sorted(fuzz_targets.available(store))


def fuzz_one(name: str, runs: int, max_len: int = 4096) -> Dict[str, Any]:
    """Fuzzes one target for `runs` inputs in a child process; returns its figures."""
    from .fuzz_targets import CORPUS

    kept = CORPUS / name
    kept.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"nk-fuzz-{name}-") as tmp:
        work, artifacts = Path(tmp) / "corpus", Path(tmp) / "artifacts"
        work.mkdir()
        artifacts.mkdir()
        args = [f"-runs={runs}", f"-max_len={max_len}", "-timeout=60", "-rss_limit_mb=4096", "-print_final_stats=1",
                f"-artifact_prefix={artifacts}/", str(work), str(kept)]
        out = subprocess.run([sys.executable, "-m", "stress.fuzz", "--drive", name, *args], env=child_env(), cwd=REPO,
                             capture_output=True, text=True, timeout=7200)
        executed = re.search(r"stat::number_of_executed_units:\s*(\d+)", out.stderr)
        found = sorted(artifacts.iterdir())
        for crash in found:
            shutil.copy(crash, kept / crash.name)
        ok = out.returncode == 0 and not found
        figures = {"target": name, "inputs": int(executed.group(1)) if executed else 0, "crashes": len(found),
                   "new_corpus_units": len(list(work.iterdir()))}
        if not ok:
            tail = "\n".join(out.stdout.splitlines()[-30:] + out.stderr.splitlines()[-25:])
            for crash in found:  # the Python traceback of each kept input, replayed outside libFuzzer
                replay = subprocess.run([sys.executable, "-c", REPLAY, name, str(crash)], env=child_env(), cwd=REPO,
                                        capture_output=True, text=True, timeout=600)
                tail += f"\n--- replay of {crash.name} (exit {replay.returncode}):\n" + replay.stderr[-3000:]
            raise AssertionError(f"fuzz target {name} failed (exit {out.returncode}, kept {[c.name for c in found]}):\n{tail}")
    return figures


def run(inputs: int = 1_000_000, only: List[str] = []) -> Dict[str, Any]:
    """Fuzzes every available target with an equal share of `inputs`."""
    try:
        import atheris  # noqa: F401
    except ImportError:
        raise AssertionError("atheris is not installed: `pip install -e 'bindings/python[stress]'` (make stress does)") from None
    names = [n for n in targets() if not only or n in only]
    share = max(1, -(-inputs // len(names)))  # rounded up: at least `inputs` in all
    figures: Dict[str, Any] = {"targets": len(names)}
    total = 0
    for name in names:
        one = fuzz_one(name, share)
        figures[f"inputs_{name}"] = one["inputs"]
        total += one["inputs"]
    figures["inputs"] = total
    figures["crashes"] = 0
    figures["non_notes_errors"] = 0
    return figures


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--drive":
        drive(sys.argv[2], sys.argv[3:])
    else:
        import argparse

        from .common import show

        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--inputs", type=int, default=1_000_000)
        parser.add_argument("targets", nargs="*")
        args = parser.parse_args()
        show("fuzz", run(args.inputs, args.targets))
