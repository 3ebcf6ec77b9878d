"""`python -m stress [--quick] [check ...]`: runs the long reliability checks and prints their figures.

Each check runs in its own Python process (a crash there is reported, not fatal to the run; the
memory figures are that process's own). The last lines are a Markdown table of every check.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

from .common import REPO, _fmt, child_env, show

# check -> (full-size arguments, --quick arguments)
CHECKS: Dict[str, Tuple[Dict[str, Any], Dict[str, Any]]] = {
    "threads": ({"threads": 8, "ops": 10_000}, {"threads": 8, "ops": 500}),
    "processes": ({"processes": 4, "ops": 5_000}, {"processes": 4, "ops": 200}),
    "kill9": ({"kills": 50}, {"kills": 5}),
    "abi_sweep": ({"big_mb": 100, "storm_rounds": 200}, {"big_mb": 16, "storm_rounds": 10}),
    "fuzz": ({"inputs": 1_000_000}, {"inputs": 30_000}),
    "leaks": ({"calls": 1_000_000, "valgrind_calls": 3_000}, {"calls": 50_000, "valgrind_calls": 300}),
    "broken_files": ({"rounds": 200, "full_rounds": 5}, {"rounds": 20, "full_rounds": 1}),
    "powercut": ({"random_points": 60}, {"random_points": 2, "max_points": 6, "sizes": {"import": 2_000}}),
}

BOOT = "import json, sys; from stress import {name} as m; print('@@' + json.dumps(m.run(**json.loads(sys.argv[1]))), flush=True)"


def run_check(name: str, args: Dict[str, Any]) -> Tuple[bool, Dict[str, Any], float]:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", BOOT.format(name=name), json.dumps(args)], cwd=REPO, env=child_env(),
                         capture_output=True, text=True)
    seconds = time.monotonic() - started
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return out.returncode == 0, json.loads(line[2:]), seconds
    why = "\n".join((out.stderr or out.stdout).strip().splitlines()[-25:])
    return False, {"failure": f"exit {out.returncode}", "detail": why}, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of every check")
    parser.add_argument("checks", nargs="*", choices=[[], *CHECKS], metavar="check", help=", ".join(CHECKS))
    options = parser.parse_args()
    names = options.checks or list(CHECKS)
    rows: List[Tuple[str, bool, Dict[str, Any], float]] = []
    for name in names:
        args = CHECKS[name][1 if options.quick else 0]
        print(f"-- {name} {json.dumps(args)}", flush=True)
        ok, figures, seconds = run_check(name, args)
        if ok:
            show(name, figures)
        else:
            print(f"{name}: FAILED ({figures['failure']})\n{figures['detail']}", flush=True)
        rows.append((name, ok, figures, seconds))
    print("\n| check | result | figures | time |\n|---|---|---|---|")
    for name, ok, figures, seconds in rows:
        text = ", ".join(f"{k}={_fmt(v)}" for k, v in figures.items() if k != "detail")
        print(f"| {name} | {'ok' if ok else 'FAILED'} | {text} | {seconds:.0f} s |")
    return 0 if all(ok for _, ok, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
