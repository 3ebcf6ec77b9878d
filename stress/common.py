"""Helpers shared by the stress checks: memory figures, temporary folders, subprocess runs."""
from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, Dict

REPO = Path(__file__).resolve().parents[1]
PYTHON_SRC = REPO / "bindings" / "python" / "src"


def rss_mb() -> float:
    """This process's resident set size in MB (from /proc, so it is the current figure, not the peak)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a store file, read with Python's own sqlite3."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return "; ".join(row[0] for row in db.execute("PRAGMA integrity_check"))
    finally:
        db.close()


def child_env() -> Dict[str, str]:
    """The environment for a child Python: the package importable without the venv's help."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_SRC), str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def show(name: str, figures: Dict[str, Any]) -> None:
    """Prints one check's figures on one line."""
    text = ", ".join(f"{k}={_fmt(v)}" for k, v in figures.items())
    print(f"{name}: {text}", flush=True)
    sys.stdout.flush()


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:_}"
    return str(value)
