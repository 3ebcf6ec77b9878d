"""The build hook of the ``noteskit`` wheel: it builds the Swift library and puts it inside the package.

``pip install ./bindings/python`` (and ``pip wheel ./bindings/python``) runs, at the root of the
checkout::

    swift build -c release --product NotesCAPI -Xswiftc -static-stdlib

then copies ``.build/release/libNotesCAPI.so`` to ``noteskit/libNotesCAPI.so`` in the wheel. The
build is incremental: when ``make lib`` already built an up-to-date library, SwiftPM only checks it
(about a second). The Swift runtime is linked in (``-static-stdlib``), so the installed package
needs no Swift toolchain.

The wheel is tagged ``py3-none-<platform>`` (``py3-none-linux_x86_64`` here): the library is loaded
with ctypes, it is not a CPython extension, so one wheel serves every Python 3 on that platform.

The two font files every measurement uses travel in the wheel, with their licence texts, copied
from the Debian packages the build machine has (``make deps``): ``noteskit/fonts/wqy/`` holds
``wqy-microhei.ttc`` (fonts-wqy-microhei; Apache-2.0 or GPL-3+ with the font exception, shipped
under Apache-2.0: its Debian copyright file and the Apache-2.0 text), ``noteskit/fonts/dejavu/``
holds ``DejaVuSans.ttf`` (fonts-dejavu-core; the Bitstream Vera licence, in its copyright file).
The library finds them beside itself, so the installed package needs no font package.

Environment: ``NOTESKIT_SWIFT`` names the ``swift`` executable (default: the one on the PATH).
An editable install (``pip install -e``) builds nothing; the package then finds the checkout's
``.build/release`` library.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
from setuptools.command.build_py import build_py as _build_py

LIBRARY_NAME = "libNotesCAPI.so"
# (file on the build machine, where it goes inside the package, the Debian package that has it)
FONT_FILES = [
    ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "fonts/wqy/wqy-microhei.ttc", "fonts-wqy-microhei"),
    ("/usr/share/doc/fonts-wqy-microhei/copyright", "fonts/wqy/COPYRIGHT", "fonts-wqy-microhei"),
    ("/usr/share/common-licenses/Apache-2.0", "fonts/wqy/LICENSE-Apache-2.0", "base-files"),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "fonts/dejavu/DejaVuSans.ttf", "fonts-dejavu-core"),
    ("/usr/share/doc/fonts-dejavu-core/copyright", "fonts/dejavu/COPYRIGHT", "fonts-dejavu-core"),
]
SWIFT_BUILD = ["build", "-c", "release", "--product", "NotesCAPI", "-Xswiftc", "-static-stdlib"]


def checkout_root() -> Path:
    """The folder holding ``Package.swift`` above this file: the wheel is built from a checkout."""
    here = Path(__file__).resolve().parent
    for folder in (here, *here.parents):
        if (folder / "Package.swift").exists():
            return folder
    raise SystemExit(
        f"noteskit: no Package.swift above {here}. The wheel is built from a NotesKit checkout "
        "(pip install ./bindings/python), not from an sdist, because it compiles the Swift library."
    )


def build_library() -> Path:
    """Runs the release build of ``libNotesCAPI.so`` (a no-op when it is up to date) and returns its path."""
    root = checkout_root()
    swift = os.environ.get("NOTESKIT_SWIFT") or shutil.which("swift")
    if not swift:
        raise SystemExit("noteskit: `swift` is not on the PATH (set NOTESKIT_SWIFT to the Swift 6 executable)")
    print(f"noteskit: {swift} {' '.join(SWIFT_BUILD)}  (in {root})", flush=True)
    result = subprocess.run([swift, *SWIFT_BUILD], cwd=root)
    if result.returncode != 0:
        raise SystemExit(f"noteskit: swift build failed with exit code {result.returncode}")
    library = root / ".build" / "release" / LIBRARY_NAME
    if not library.exists():
        raise SystemExit(f"noteskit: swift build succeeded but {library} is missing")
    return library


def font_files() -> list[tuple[Path, str]]:
    """The fonts and their licence texts (source, destination in the package); all must exist."""
    missing = [f"{source} ({package})" for source, _, package in FONT_FILES if not Path(source).is_file()]
    if missing:
        raise SystemExit(f"noteskit: the wheel carries its fonts, but these files are missing: {', '.join(missing)}; "
                         "install the packages with `apt-get install fonts-wqy-microhei fonts-dejavu-core` (`make deps`)")
    return [(Path(source), target) for source, target, _ in FONT_FILES]


class build_py(_build_py):
    """``build_py`` plus the Swift library and the fonts copied into the built package."""

    def run(self) -> None:
        package = Path(self.build_lib) / "noteskit"
        if not self.editable_mode:
            shutil.rmtree(package, ignore_errors=True)  # no stale module from an earlier build in the wheel
        super().run()
        if self.editable_mode:
            return
        library = build_library()
        self.copy_file(str(library), str(package / LIBRARY_NAME), preserve_mode=True)
        for source, target in font_files():
            self.mkpath(str((package / target).parent))
            self.copy_file(str(source), str(package / target), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not self.editable_mode:
            package = Path(self.build_lib) / "noteskit"
            outputs.append(str(package / LIBRARY_NAME))
            outputs += [str(package / target) for _, target, _ in FONT_FILES]
        return outputs


class NativeDistribution(Distribution):
    """A distribution that holds a native library: installed into platlib, its wheel is not pure."""

    def has_ext_modules(self) -> bool:
        return True


class bdist_wheel(_bdist_wheel):
    """A platform wheel (it holds a native library) for any Python 3: ``py3-none-<platform>``."""

    def get_tag(self) -> tuple[str, str, str]:
        _python, _abi, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=NativeDistribution, cmdclass={"build_py": build_py, "bdist_wheel": bdist_wheel})
