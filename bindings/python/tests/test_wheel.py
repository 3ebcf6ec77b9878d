"""The wheel a user gets from ``pip install ./bindings/python``: self-contained and tagged for any Python 3.

Builds the wheel through the package's build hook (the Swift release build is reused when it is up
to date), installs it into a fresh virtual environment without the project's site packages, and runs
it with an empty environment (``env -i``): no PATH, no LD_LIBRARY_PATH, so no Swift toolchain.
"""
from __future__ import annotations

import json
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import noteskit as nk

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO / "bindings/python")],
                   check=True)
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A new virtual environment (no system site packages) with only the wheel installed, offline."""
    env = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    subprocess.run([str(env / "bin/python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                   check=True)
    return env


def run_bare(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs ``command`` with an empty environment, as ``env -i`` does."""
    return subprocess.run(["env", "-i", *command], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_wheel_is_tagged_for_any_python_3_on_linux_and_holds_the_library(wheel: Path) -> None:
    assert wheel.name == f"noteskit-{nk.__version__}-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        tags = z.read(f"noteskit-{nk.__version__}.dist-info/WHEEL").decode()
        entry_points = z.read(f"noteskit-{nk.__version__}.dist-info/entry_points.txt").decode()
    assert {"noteskit/libNotesCAPI.so", "noteskit/py.typed", "noteskit/__init__.py", "noteskit/cli.py"} <= names
    assert "Root-Is-Purelib: false" in tags and "Tag: py3-none-linux_x86_64" in tags
    assert "noteskit = noteskit.cli:main" in entry_points


def test_the_installed_package_loads_its_own_library_with_no_swift_toolchain_in_reach(fresh_env: Path,
                                                                                          tmp_path: Path) -> None:
    script = (
        "import json, noteskit as nk\n"
        "with nk.Store.open('notes.db') as s:\n"
        "    a = s.articles.create(title='周末', content='今天天气真好')\n"
        "    print(json.dumps({'library': str(nk.LIBRARY_PATH), 'title': s.articles.get(a.id).title}))\n"
    )
    done = run_bare([str(fresh_env / "bin/python"), "-c", script], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["title"] == "周末"
    library = Path(result["library"])
    assert library.name == "libNotesCAPI.so" and library.parent.name == "noteskit"
    assert library.is_relative_to(fresh_env)


MEASURE = (
    "import json, os, stat, noteskit as nk\n"
    "texts = ['今天天气真好，我们去公园散步吧。Hello world!' * 5, 'x' * 300, '😀🎉 emoji', 'שלום עולם hello']\n"
    "config = nk.font_configuration()\n"
    "cache = config.cache_directory\n"
    "print(json.dumps({'metrics': [list(vars(nk.measure_text(t, w, font=f, size=s)).values())\n"
    "                              for t in texts for w in (37, 240) for f, s in (('WenQuanYi Micro Hei', 17), ('DejaVu Sans', 13))],\n"
    "                  'directory': config.directory, 'files': config.files, 'cache': cache,\n"
    "                  'cache_mode': None if cache is None else stat.S_IMODE(os.stat(cache).st_mode)}))\n"
)


def test_the_installed_wheel_measures_with_its_own_fonts_as_the_development_tree_does(fresh_env: Path, tmp_path: Path) -> None:
    """No font package, no fontconfig file, no home: the wheel's fonts and a configuration built in code."""
    home = tmp_path / "home"
    home.mkdir()
    bare = run_bare([str(fresh_env / "bin/python"), "-c", MEASURE], cwd=tmp_path)  # env -i: no HOME at all
    assert bare.returncode == 0, bare.stderr
    installed = subprocess.run(["env", "-i", f"HOME={home}", "FONTCONFIG_FILE=/nonexistent", str(fresh_env / "bin/python"),
                                "-c", MEASURE], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    assert installed.stderr == ""  # fontconfig never looked for a configuration file (it would complain)
    development = subprocess.run([sys.executable, "-c", MEASURE], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                                 env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO / "bindings/python/src"),
                                      "NOTESKIT_LIBRARY": str(REPO / ".build/release/libNotesCAPI.so")})
    assert development.returncode == 0, development.stderr
    wheel_run, dev_run, bare_run = (json.loads(r.stdout) for r in (installed, development, bare))
    assert wheel_run["metrics"] == dev_run["metrics"] == bare_run["metrics"]
    assert dev_run["directory"] == "/usr/share/fonts/truetype"
    package = next(fresh_env.glob("lib/python3*/site-packages/noteskit"))
    assert wheel_run["files"] == [str(package / "fonts/wqy/wqy-microhei.ttc"), str(package / "fonts/dejavu/DejaVuSans.ttf")]
    assert wheel_run["cache"] == str(home / ".cache/noteskit/fontconfig") and wheel_run["cache_mode"] == 0o700
    assert stat.S_IMODE((home / ".cache/noteskit").stat().st_mode) == 0o700


def test_the_wheel_carries_the_fonts_with_their_licence_texts(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        wqy_licence = z.read("noteskit/fonts/wqy/COPYRIGHT").decode()
        apache = z.read("noteskit/fonts/wqy/LICENSE-Apache-2.0").decode()
        dejavu_licence = z.read("noteskit/fonts/dejavu/COPYRIGHT").decode()
        metadata = z.read(f"noteskit-{nk.__version__}.dist-info/METADATA").decode()
    assert {"noteskit/fonts/wqy/wqy-microhei.ttc", "noteskit/fonts/dejavu/DejaVuSans.ttf"} <= names
    assert "WenQuanYi" in wqy_licence and "Apache-2.0" in wqy_licence
    assert "Apache License" in apache and "Version 2.0" in apache
    assert "Bitstream" in dejavu_licence and "Permission is hereby granted" in dejavu_licence
    assert "Apache-2.0" in metadata and "Bitstream-Vera" in metadata


def test_the_installed_library_needs_no_swift_runtime(fresh_env: Path) -> None:
    (library,) = fresh_env.glob("lib/python3*/site-packages/noteskit/libNotesCAPI.so")
    ldd = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    assert "libswift" not in ldd
    assert "not found" not in ldd


def test_the_installed_command_line_runs_with_an_empty_environment(fresh_env: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "notes.db")
    added = run_bare([str(fresh_env / "bin/noteskit"), "--db", db, "add", "--title", "周末", "--content", "去公园散步"],
                     cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    listed = run_bare([str(fresh_env / "bin/noteskit"), "--db", db, "list"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "周末" in listed.stdout


def test_without_tqdm_the_import_reports_progress_in_plain_lines(fresh_env: Path, tmp_path: Path) -> None:
    sample = REPO / "examples" / "data" / "sample.json"
    done = run_bare([str(fresh_env / "bin/python"), "-m", "noteskit", "--db", str(tmp_path / "n.db"), "import", str(sample)],
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "62 created" in done.stdout
    assert done.stderr.strip().splitlines()[-1].endswith("(100%)")
