"""The C ABI as declared, as exported and as bound agree with each other."""
from __future__ import annotations

import re
import subprocess

import noteskit as nk
from noteskit import _ffi

from conftest import REPO

HEADER = REPO / "include" / "noteskit.h"
PROTOTYPE = re.compile(r"\b(nk_\w+)\s*\(([^()]*)\)\s*$")


def header_functions() -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    found = {}
    for statement in " ".join(text.split()).split(";"):
        match = PROTOTYPE.search(statement)
        if match and not statement.lstrip().startswith("typedef"):
            params = match.group(2).strip()
            found[match.group(1)] = 0 if params in ("", "void") else params.count(",") + 1
    assert len(found) > 20, "the header parser found too few prototypes"
    return found


def exported_symbols() -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(nk.LIBRARY_PATH)], check=True, capture_output=True, text=True)
    return {line.split()[-1] for line in out.stdout.splitlines() if line.split()[-1].startswith("nk_")}


def test_the_header_declares_exactly_the_functions_the_library_exports():
    assert set(header_functions()) == exported_symbols()


def test_the_python_bindings_declare_every_header_function_with_its_arity():
    for name, arity in header_functions().items():
        function = getattr(_ffi, name)
        assert len(function.argtypes) == arity, name


def test_the_header_abi_version_matches_the_library():
    declared = int(re.search(r"#define NK_ABI_VERSION (\d+)", HEADER.read_text()).group(1))
    assert declared == _ffi.nk_abi_version() == _ffi.ABI_VERSION


def test_status_codes_in_the_header_match_the_python_error_classes():
    codes = dict(re.findall(r"#define (NK_E_\w+) (\d+)", HEADER.read_text()))
    kinds = {cls.kind for cls in nk.NotesError.__subclasses__()} | {
        cls.kind for cls in nk.StorageError.__subclasses__()}
    for name in codes:
        assert name[len("NK_E_"):].lower() in kinds, name


def test_the_library_is_self_contained():
    out = subprocess.run(["ldd", str(nk.LIBRARY_PATH)], check=True, capture_output=True, text=True).stdout
    assert not re.search(r"libswift|libFoundation|libdispatch", out), out


def arrow_declarations(text: str) -> str:
    start = text.index("#ifndef ARROW_C_DATA_INTERFACE")
    end = text.index("#endif  // ARROW_C_STREAM_INTERFACE")
    return text[start:end]


def test_the_header_declares_the_arrow_structs_exactly_as_the_library_is_built_with():
    built_with = (REPO / "Sources" / "CArrow" / "arrow_c_abi.h").read_text()
    assert arrow_declarations(HEADER.read_text()) == arrow_declarations(built_with)
