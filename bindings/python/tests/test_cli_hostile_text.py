"""Issue 12, items 3 and 5: stored control characters never reach the terminal raw; numeric
conversation titles, invalid UTF-8 arguments, impossible revisions and folder formats get the
right words on the command line."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import noteskit as nk

from test_cli import SCRIPT, json_lines, ok, on_a_terminal, refused

EVIL_TITLE = "title\x1b]0;pwned\x07"             # sets the window title
EVIL_CONTENT = "a\x1b[2Jb\x9b8m hidden"            # clears the screen; C1 CSI: hidden text
RAW = ("\x1b", "\x07", "\x9b")


def seeded(db: Path) -> None:
    with nk.Store.open(db) as store:
        store.articles.create(title=EVIL_TITLE, content=EVIL_CONTENT + "\nline two\tand a tab")
        conv = store.conversations.create("chat\x1bc")
        conv.send("message \x1b[31mred")


def test_stored_control_characters_are_shown_visibly_in_plain_output(db_path: Path) -> None:
    seeded(db_path)
    outputs = [ok("list", db=db_path), ok("show", "1", db=db_path), ok("search", "hidden", db=db_path),
               ok("search", "red", "--messages", db=db_path), ok("chat", "history", "1", db=db_path),
               ok("chat", "list", db=db_path)]
    for out in outputs:
        assert not any(c in out for c in RAW), out
    shown = outputs[1]
    assert "title\\x1b]0;pwned\\x07" in shown and "a\\x1b[2Jb\\x9b8m hidden" in shown
    assert "line two\tand a tab" in shown  # newline and tab are text, kept as they are
    assert "message \\x1b[31mred" in outputs[4] and "chat\\x1bc" in outputs[5]


def test_stored_control_characters_are_shown_visibly_on_a_terminal(db_path: Path) -> None:
    seeded(db_path)
    for args in (["list"], ["show", "1"], ["search", "hidden"], ["chat", "history", "1"]):
        screen = on_a_terminal("--db", str(db_path), *args)
        assert "\x07" not in screen and "\x9b" not in screen
        stripped = screen.replace("\x1b[1;30;43m", "").replace("\x1b[0m", "")  # only our own highlighting is raw
        assert "\x1b" not in stripped, screen


def test_json_output_keeps_the_text_exact(db_path: Path) -> None:
    seeded(db_path)
    [article] = json_lines(ok("show", "1", "--json", db=db_path))
    assert article["title"] == EVIL_TITLE and article["content"].startswith(EVIL_CONTENT)


def test_a_numeric_title_names_a_conversation_when_no_id_is_that_number(db_path: Path) -> None:
    ok("chat", "send", "2024", "新年快乐", db=db_path)     # no conversation 2024: a new one titled "2024"
    ok("chat", "send", "2024", "again", db=db_path)        # found by its title now
    [conv] = json_lines(ok("chat", "list", "--json", db=db_path))
    assert conv["title"] == "2024"
    assert len(json_lines(ok("chat", "history", "2024", "--json", db=db_path))) == 2
    ok("chat", "send", "1", "by id", db=db_path)           # an id that exists is the id
    assert len(json_lines(ok("chat", "history", "#1", "--json", db=db_path))) == 3
    assert "does not exist" in refused("chat", "history", "#2024", db=db_path)


def test_invalid_utf8_in_an_argument_is_called_invalid_utf8(db_path: Path) -> None:
    done = subprocess.run([os.fsencode(SCRIPT), b"--db", os.fsencode(db_path), b"add", b"-t", b"caf\xe9", b"-c", b"x"],
                          capture_output=True, timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 2 and "not valid UTF-8" in err and "\\xe9" in err and "surrogate" not in err


def test_a_revision_the_article_never_had_is_not_called_a_change(db_path: Path) -> None:
    ok("add", "-t", "t", "-c", "c", db=db_path)
    err = refused("edit", "1", "-c", "x", "--revision", "5", db=db_path)
    assert "never had revision 5" in err and "changed since" not in err
    ok("edit", "1", "-c", "c2", db=db_path)
    assert "changed since it was read" in refused("edit", "1", "-c", "x", "--revision", "1", db=db_path)


def test_folder_errors_name_the_command_line_option(db_path: Path, tmp_path: Path) -> None:
    ok("add", "-t", "t", "-c", "c", db=db_path)
    folder = tmp_path / "vault"
    folder.mkdir()
    for args in (["export", str(folder)], ["import", str(folder)]):
        err = refused(*args, db=db_path)
        assert "--format markdown" in err and 'format="' not in err
    assert json.loads(ok("export", str(tmp_path / "md"), "--format", "markdown", "--json", db=db_path))["files"] == 1
