"""Private by default: who may read a store and what NotesKit writes.

A store NotesKit creates (with its ``-wal`` and ``-shm`` files), every export and the default data
folder are readable by their owner only (files 0600, folders 0700), whatever the umask.
``Store.open(path, mode=0o640)`` and ``store.export(path, mode=0o644)`` share on purpose. An
existing store is never chmodded: opening one that other accounts can read works, and says so once
with a :class:`PrivacyWarning`; :func:`exposed_files` (and ``noteskit doctor``) lists such files.

>>> import os, stat, tempfile, noteskit as nk
>>> path = os.path.join(tempfile.mkdtemp(), "notes.db")
>>> with nk.Store.open(path) as store:
...     oct(stat.S_IMODE(os.stat(path).st_mode))
'0o600'
>>> nk.exposed_files(path)
[]
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

from . import _ffi
from .errors import InvalidArgumentError, ValidationError

#: Files NotesKit creates: read and write for the owner only.
PRIVATE_FILE = 0o600
#: Folders NotesKit creates: the owner only lists and enters them.
PRIVATE_FOLDER = 0o700


class PrivacyWarning(UserWarning):
    """A store other accounts can read was opened: its files' modes allow more than the store's ``mode``.

    Nothing was changed (an existing store is never chmodded). Make it private with ``chmod 600`` on
    the files named, or accept it by opening with that ``mode=``; ``noteskit doctor`` lists such
    files. Silence it like any warning: ``warnings.simplefilter("ignore", nk.PrivacyWarning)``.

    >>> import os, tempfile, warnings, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.db")
    >>> nk.Store.open(path).close(); os.chmod(path, 0o644)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     nk.Store.open(path).close()
    >>> [w.category.__name__ for w in caught]
    ['PrivacyWarning']
    """


@dataclass(frozen=True)
class ExposedFile:
    """A file other accounts can read (or write): its path and permission bits (``0o644``).

    >>> import noteskit as nk
    >>> print(nk.ExposedFile("/home/me/notes.db", 0o644))
    /home/me/notes.db (mode 644)
    """

    path: str
    mode: int

    def __str__(self) -> str:
        return f"{self.path} (mode {self.mode:o})"


def file_mode(mode: Any) -> int:
    """``mode`` as the C calls take it: 0 for the default (owner-only), else the given bits."""
    if mode is None:
        return 0
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise InvalidArgumentError(f"mode must be an int such as 0o640, got {type(mode).__name__}", field="mode")
    if not 0 < mode <= 0o7777:
        raise ValidationError(f"mode must be a file mode such as 0o640 (0o600 to 0o666), got {mode:#o}", field="mode")
    return mode


def exposed_files(path: "os.PathLike[str] | str", mode: Optional[int] = None) -> List[ExposedFile]:
    """The files of the store at ``path`` (the store, its ``-wal`` and ``-shm``) other accounts can
    read or write beyond what ``mode`` (default: owner-only, 0o600) allows. Missing files are left
    out; nothing is changed.

    >>> import os, tempfile, noteskit as nk
    >>> path = os.path.join(tempfile.mkdtemp(), "shared.db")
    >>> with nk.Store.open(path, mode=0o640):
    ...     [(os.path.basename(f.path), oct(f.mode)) for f in nk.exposed_files(path)]
    [('shared.db', '0o640'), ('shared.db-wal', '0o640'), ('shared.db-shm', '0o640')]
    >>> nk.exposed_files(path, mode=0o640)
    []
    """
    rows = _ffi.call_json(_ffi.nk_exposed_files, _ffi.text(os.fspath(path), "path"), file_mode(mode))
    return [ExposedFile(r["path"], r["mode"]) for r in rows]


def warn_if_exposed(path: str, mode: Optional[int], stacklevel: int) -> None:
    """One :class:`PrivacyWarning` naming the store's files other accounts can read, if any."""
    if path == ":memory:":
        return
    files = exposed_files(path, mode)
    if files:
        names = ", ".join(str(f) for f in files)
        allowed = PRIVATE_FILE if mode is None else mode
        paths = " ".join(f.path for f in files)
        warnings.warn(f"other accounts can read this store: {names}; NotesKit leaves existing files as they are. "
                      f"Make them private with `chmod {allowed:o} {paths}`, or open with "
                      f"mode=0o{files[0].mode & 0o666:o} to accept it", PrivacyWarning, stacklevel=stacklevel + 1)


def exposed_folder(path: "os.PathLike[str] | str") -> Optional[ExposedFile]:
    """``path`` when it is a folder other accounts may list or enter (mode beyond 0o700), else None."""
    try:
        bits = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None
    return ExposedFile(os.fspath(path), bits) if bits & 0o077 else None


def make_private_folder(path: Path) -> None:
    """Creates ``path`` and its missing parents as 0o700 folders, whatever the umask; an existing
    folder is left as it is."""
    missing = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_FOLDER)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE_FOLDER)
