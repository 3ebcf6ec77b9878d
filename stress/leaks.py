"""Memory: a long scripted session must keep its resident size flat, and valgrind must find no
definite leak in libNotesCAPI.so.

The session cycles through the whole Python API — create, get, update, list with cursors, drafts
(new, type, save, discard), the change feed, bulk create, delete, and the error paths (not found,
validation, forged cursor, closed store) — plus chat, search and layout where the library has them.
It deletes what it creates, so the store file stays the same size and SQLite's page cache stays
bounded: any growth is a leak.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List

import noteskit as nk

from .common import REPO, child_env, rss_mb


def _steps(store: nk.Store) -> List[Callable[[], Any]]:
    """One cycle of calls; each entry is one call into the library."""
    state: Dict[str, Any] = {}
    a = store.articles

    def create() -> None:
        state["a"] = a.create(title="leak check 天气", content="content " * 20)

    def bulk() -> None:
        state["bulk"] = a.create_many([{"title": f"b{i}", "content": "bulk 😀"} for i in range(5)])

    def delete_bulk() -> None:
        for x in state.pop("bulk"):
            a.delete(x.id)

    def bulk_refused() -> None:  # read by the Arrow reader, refused at record 1: nothing kept, all released
        try:
            a.create_many([{"title": "t", "content": "c"}, {"title": "t", "content": None}])
        except nk.ValidationError:
            pass

    def not_found() -> None:
        try:
            a.get(-5)
        except nk.NotFoundError:
            pass

    def invalid() -> None:
        try:
            a.create(title="  ", content="x")
        except nk.ValidationError:
            pass

    def forged_cursor() -> None:
        try:
            a.list(after="articles.1.1.0000000000000000")
        except nk.ValidationError:
            pass

    def page_twice() -> None:
        page = a.list(limit=3)
        if page.next_cursor:
            a.list(limit=3, after=page.next_cursor)

    def draft_cycle() -> None:
        d = a.new_draft()
        d.content = "typed"
        state["saved"] = d.save()
        e = a.edit(state["saved"].id)
        e.title = "edited"
        e.discard()
        a.delete(state["saved"].id)

    steps: List[Callable[[], Any]] = [
        create,
        lambda: a.get(state["a"].id),
        lambda: a.update(state["a"].id, content="changed " * 20),
        page_twice,
        a.count,
        lambda: store.changes(since=max(0, store.last_change_seq() - 10), limit=10),
        bulk, delete_bulk, bulk_refused, not_found, invalid, forged_cursor, draft_cycle,
        lambda: a.delete(state["a"].id),
    ]
    if hasattr(store, "conversations"):
        conv = store.conversations.create("leaks")

        def chat() -> None:
            m = conv.send("hello 😀")
            conv.receive("hi")
            store.messages.history(conv.id, limit=5)
            store.messages.delete(m.id)
        steps.append(chat)
        if hasattr(store.messages, "select"):
            def selections() -> None:
                list(store.messages.select(conversation=conv.id))  # a stream read to its end
                store.articles.select().__arrow_c_stream__()  # a stream nobody reads (its capsule releases it)
                records = iter(store.conversations.select())  # a stream left after its first batch
                next(records, None)
                records.close()  # type: ignore[attr-defined]
            steps.append(selections)
    if hasattr(a, "search"):
        steps.append(lambda: a.search("天气", field="any", limit=5))
        steps.append(lambda: a.search("%_*\"", field="title", limit=5))
        if hasattr(store, "messages") and hasattr(store.messages, "search"):
            steps.append(lambda: store.messages.search("hello", limit=5))
    if hasattr(store, "layout") and hasattr(nk, "measure_text"):
        steps.append(lambda: nk.measure_text("天气 weather 😀 " * 5, max_width=300))
        # a small cache, so that a full cache is part of the cycle rather than growth
        lay = store.layout(width=375, cache_bytes=64 * 1024)

        def layout() -> None:
            b = a.create(title="measured", content="天气 weather 😀 " * 8)
            lay.article_height(b.id)
            lay.prefetch([b.id, state["a"].id], threads=2)  # worker threads, each with its own Pango font map
            rows = lay.rows([b.id, state["a"].id])
            rows.offset_of(1)
            rows.close()
            a.delete(b.id)
        steps.insert(1, layout)
    return steps


def calls_per_cycle(steps: List[Callable[[], Any]]) -> int:
    """Runs one cycle with every ``_ffi.nk_*`` function wrapped in a counter; returns the library calls made."""
    from noteskit import _ffi

    count = 0
    originals = {name: getattr(_ffi, name) for name in dir(_ffi) if name.startswith("nk_") and callable(getattr(_ffi, name))}

    def counting(function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            nonlocal count
            count += 1
            return function(*args)
        return wrapper

    try:
        for name, function in originals.items():
            setattr(_ffi, name, counting(function))
        for step in steps:
            step()
    finally:
        for name, function in originals.items():
            setattr(_ffi, name, function)
    return count


def session(calls: int, path: Path) -> Dict[str, Any]:
    """Runs at least `calls` library calls; returns the resident size after warm-up and at the end (MB)."""
    with nk.Store.open(path) as store:
        steps = _steps(store)
        per_cycle = calls_per_cycle(steps)
        done = per_cycle
        warm = None
        cycles = 0
        reopened = 0
        while done < calls:
            for step in steps:
                step()
            done += per_cycle
            cycles += 1
            if warm is None and done >= calls // 10:
                warm = rss_mb()
            if cycles % 1000 == 0:  # handles come and go too
                with nk.Store.memory() as other:
                    other.articles.create(title="t", content="c")
                done += 3
                reopened += 1
        end = rss_mb()
    return {"calls": done, "calls_per_cycle": per_cycle, "after_warmup_mb": warm or end, "end_mb": end,
            "growth_mb": end - (warm or end), "stores_opened_and_closed": reopened}


def run_rss(calls: int = 1_000_000, limit_mb: float = 10.0) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nk-leaks-") as tmp:
        figures = session(calls, Path(tmp) / "leaks.db")
    assert figures["growth_mb"] < limit_mb, f"RSS grew {figures['growth_mb']:.1f} MB after warm-up"
    return figures


VALGRIND_SESSION = """
import sys, tempfile, pathlib
from stress import leaks
with tempfile.TemporaryDirectory() as tmp:
    leaks.session(int(sys.argv[1]), pathlib.Path(tmp) / "v.db")
"""

# A deliberate leak (owned results never freed), to prove the valgrind check can see one.
VALGRIND_CONTROL = """
import sys
from ctypes import byref, c_void_p
from noteskit import _ffi
out = c_void_p()
_ffi.nk_store_open_memory(byref(out))
for _ in range(int(sys.argv[1])):
    _ffi.nk_article_create(out.value, b"t", b"c", byref(c_void_p()))
_ffi.nk_store_close(out.value)
"""

SUPPRESSIONS = Path(__file__).with_name("valgrind.supp")

# A frame in the library: its file name when valgrind has no symbols, else a Swift symbol (NotesKit,
# NotesCAPI and the Swift runtime linked into the library) or an export.
_OURS = re.compile(r"libNotesCAPI\.so|\$s\d*(?:NotesKit|NotesCAPI)|\bswift_|\bnk_\w+ \(")


def valgrind(script: str, calls: int) -> Dict[str, Any]:
    """Runs `script` under valgrind's memcheck; returns the library's definite leaks and invalid accesses."""
    env = child_env()
    env["PYTHONMALLOC"] = "malloc"  # so Python's own allocations are plain mallocs valgrind understands
    command = ["valgrind", "--leak-check=full", "--show-leak-kinds=definite", "--num-callers=40",
               f"--suppressions={SUPPRESSIONS}", sys.executable, "-c", script, str(calls)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, cwd=REPO, timeout=3600)
    assert out.returncode == 0, out.stderr[-3000:]
    records = re.split(r"\n==\d+== \n", out.stderr)
    summary = re.search(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", out.stderr)
    suppressed = re.search(r"suppressed: ([\d,]+) bytes in ([\d,]+) blocks", out.stderr)
    return {
        "suppressed_bytes": int(suppressed.group(1).replace(",", "")) if suppressed else 0,
        "leaks": [r for r in records if "definitely lost in" in r and _OURS.search(r)],
        "invalid": [r for r in records if re.search(r"Invalid (?:read|write|free)|uninitialised", r) and _OURS.search(r)],
        "definite_bytes_all": int(summary.group(1).replace(",", "")) if summary else 0,
    }


def run_valgrind(calls: int = 3_000, control: bool = True) -> Dict[str, Any]:
    """A short session under valgrind: no definite leak and no invalid access with the library on its
    stack. With `control`, also a session three times as long (the suppressed one-time Pango and
    fontconfig allocations must not grow with it) and a deliberate leak (which must be seen)."""
    found = valgrind(VALGRIND_SESSION, calls)
    figures: Dict[str, Any] = {
        "calls": calls,
        "definite_leaks_in_library": len(found["leaks"]),
        "invalid_accesses_in_library": len(found["invalid"]),
        "definite_bytes_all": found["definite_bytes_all"],
        "suppressed_bytes": found["suppressed_bytes"],
    }
    assert not found["leaks"], "definite leaks in libNotesCAPI.so:\n" + "\n\n".join(found["leaks"][:3])
    assert not found["invalid"], "invalid memory accesses in libNotesCAPI.so:\n" + "\n\n".join(found["invalid"][:3])
    if control:
        longer = valgrind(VALGRIND_SESSION, calls * 3)
        assert not longer["leaks"] and not longer["invalid"], "\n\n".join((longer["leaks"] + longer["invalid"])[:3])
        figures["suppressed_bytes_3x_calls"] = longer["suppressed_bytes"]
        assert longer["suppressed_bytes"] <= found["suppressed_bytes"] + 4096, \
            f"suppressed (Pango/fontconfig) leaks grow with calls: {found['suppressed_bytes']} -> {longer['suppressed_bytes']} bytes"
        seen = valgrind(VALGRIND_CONTROL, 10)["leaks"]
        assert seen, "the valgrind check did not see a deliberate leak: it cannot be trusted"
        figures["control_leak_seen"] = True
    return figures


def run(calls: int = 1_000_000, valgrind_calls: int = 3_000) -> Dict[str, Any]:
    figures = {f"rss_{k}": v for k, v in run_rss(calls).items()}
    figures.update({f"valgrind_{k}": v for k, v in run_valgrind(valgrind_calls).items()})
    return figures


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--valgrind-calls", type=int, default=3_000)
    args = parser.parse_args()
    show("leaks", run(args.calls, args.valgrind_calls))
