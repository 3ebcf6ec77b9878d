"""The library names the options a failed call should be given; each caller reads them in its own
words: Python as keyword arguments (``format="markdown"``), the command line as flags
(``--format markdown``). The same failure, seen from both."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import noteskit as nk

SCRIPT = Path(sys.executable).parent / "noteskit"


def command_line_error(*args: str, db: Path) -> str:
    done = subprocess.run([str(SCRIPT), "--db", str(db), *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def python_error(call) -> nk.NotesError:
    with pytest.raises(nk.NotesError) as e:
        call()
    return e.value


def no_core_words(message: str) -> None:
    """The core's own spelling (`format: .markdown`) never reaches a caller of Python or the shell."""
    assert "`" not in message and ": ." not in message


def folder(tmp_path: Path) -> Path:
    (tmp_path / "backup").mkdir()
    return tmp_path / "backup"


def unknown_extension(tmp_path: Path) -> Path:
    (tmp_path / "notes.backup").write_text("{}", encoding="utf-8")
    return tmp_path / "notes.backup"


def ambiguous_dates(tmp_path: Path) -> Path:
    path = tmp_path / "chat.txt"
    path.write_text("01/02/24, 10:00 - Alice: hi\n03/04/24, 10:00 - Bob: hello\n", encoding="utf-8")
    return path


def unknown_column(tmp_path: Path) -> Path:
    (tmp_path / "export.csv").write_text("title,content,tags\r\nTrip,Pack the tent,travel\r\n", encoding="utf-8")
    return tmp_path / "export.csv"


# (what fails, the call from Python, from the shell, what Python reads, what the shell reads)
CASES = [
    (folder, lambda s, p: s.export(p), ["export"],
     ['format="markdown"', 'format="csv"'], ["--format markdown", "--format csv"]),
    (unknown_extension, lambda s, p: s.import_(p), ["import"], ["pass format= one of json"], ["pass --format one of json"]),
    (ambiguous_dates, lambda s, p: s.import_(p, format="whatsapp"), ["import", "--format", "whatsapp"],
     ['pass date_order="dmy" or date_order="mdy"'], ["pass --date-order dmy or --date-order mdy"]),
    (unknown_column, lambda s, p: s.import_(p), ["import"],
     ['unknown_columns="ignore"', "columns="], ["--ignore-unknown-columns", "--column HEADER=NAME"]),
]


@pytest.mark.parametrize("make, call, command, python_words, shell_words", CASES,
                         ids=["folder needs a format", "unknown extension", "ambiguous dates", "unknown column"])
def test_the_same_failure_reads_in_pythons_words_and_in_the_shells(tmp_path, make, call, command, python_words,
                                                                   shell_words):
    path = make(tmp_path)
    db = tmp_path / "notes.db"
    with nk.Store.open(db) as store:
        error = python_error(lambda: call(store, path))
    shell = command_line_error(command[0], str(path), *command[1:], db=db)
    assert all(words in str(error) for words in python_words), str(error)
    assert all(words in shell for words in shell_words), shell
    assert '="' not in shell
    no_core_words(str(error))
    no_core_words(shell)


def test_writing_to_a_read_only_store_says_how_to_open_it_in_python(tmp_path):
    db = tmp_path / "notes.db"
    nk.Store.open(db).close()
    with nk.Store.open(db, read_only=True) as store:
        error = python_error(lambda: store.articles.create(title="t", content="c"))
    assert isinstance(error, nk.ReadOnlyError)
    assert "open it without read_only=True" in str(error) and error.message == str(error)
    no_core_words(str(error))
