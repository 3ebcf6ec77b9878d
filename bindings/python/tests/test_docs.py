"""Every public name is documented with an example, and every example in the package runs."""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import List

import pytest

import noteskit as nk


def public_objects() -> List[object]:
    return [getattr(nk, name) for name in nk.__all__ if inspect.isclass(getattr(nk, name)) or callable(getattr(nk, name))]


def modules() -> List[ModuleType]:
    folder = Path(nk.__file__).parent
    names = [m.name for m in pkgutil.iter_modules(nk.__path__)
             if (folder / f"{m.name}.py").exists() and m.name != "__main__"]  # not the .so; __main__ runs the CLI
    return [nk, *(importlib.import_module(f"noteskit.{name}") for name in names)]


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    missing = [getattr(obj, "__name__", repr(obj)) for obj in public_objects() if ">>>" not in (obj.__doc__ or "")]
    assert not missing, "no docstring example: " + ", ".join(missing)


def test_every_public_method_and_property_has_a_docstring() -> None:
    missing = []
    for cls in (obj for obj in public_objects() if inspect.isclass(obj) and not issubclass(obj, BaseException)):
        for name, member in vars(cls).items():
            if name.startswith("_") or not (inspect.isfunction(member) or isinstance(member, (property, classmethod))):
                continue
            if not (member.__doc__ or "").strip():
                missing.append(f"{cls.__name__}.{name}")
    assert not missing, "no docstring: " + ", ".join(missing)


@pytest.mark.parametrize("module", modules(), ids=lambda m: m.__name__)
def test_the_examples_in_the_docstrings_run(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
