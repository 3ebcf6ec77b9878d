"""The ``noteskit`` command line, run as a user runs it: the installed console script, in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import noteskit as nk

SCRIPT = Path(sys.executable).parent / "noteskit"


def noteskit(*args: str, db: Optional[Path] = None, stdin: Optional[str] = None,
             env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess[str]:
    """Runs the console script; ``db`` is passed as ``--db``."""
    command = [str(SCRIPT), *(["--db", str(db)] if db else []), *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def ok(*args: str, db: Optional[Path] = None, stdin: Optional[str] = None) -> str:
    done = noteskit(*args, db=db, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def refused(*args: str, db: Optional[Path] = None, status: int = 1) -> str:
    """Runs a command that must fail cleanly and returns its error message."""
    done = noteskit(*args, db=db)
    assert done.returncode == status, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.strip(), "an error says what went wrong"
    return done.stderr


def json_lines(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_python_dash_m_and_the_console_script_are_the_same_command(db_path: Path) -> None:
    module = subprocess.run([sys.executable, "-m", "noteskit", "--db", str(db_path), "add", "-t", "t", "-c", "c"],
                            capture_output=True, text=True, check=True)
    assert module.stdout.startswith("#1 t")
    assert "t" in ok("list", db=db_path)
    assert ok("--version").strip() == f"noteskit {nk.__version__}"


def test_an_added_article_is_listed_shown_edited_and_deleted(db_path: Path) -> None:
    assert ok("add", "--title", "周末", "--content", "今天天气真好，去公园散步。", db=db_path).startswith("#1 周末")
    ok("add", "-t", "Weekend", "-c", "A walk in the park.", db=db_path)
    rows = ok("list", db=db_path).splitlines()
    assert "Weekend" in rows[0] and "周末" in rows[1]  # newest first

    shown = ok("show", "1", db=db_path)
    assert shown.splitlines()[0] == "周末" and "今天天气真好，去公园散步。" in shown

    assert "revision 2" in ok("edit", "1", "--content", "今天下雨了。", db=db_path)
    with nk.Store.open(db_path) as store:
        article = store.articles.get(1)
        assert (article.title, article.content, article.revision) == ("周末", "今天下雨了。", 2)

    ok("delete", "1", "2", db=db_path)
    assert ok("list", db=db_path) == ""


def test_options_go_before_or_after_the_command_and_json_lines_are_for_scripts(db_path: Path) -> None:
    ok("add", "-t", "one", "-c", "1", "--db", str(db_path))
    (record,) = json_lines(ok("list", "--json", db=db_path))
    assert (record["id"], record["title"], record["content"], record["revision"]) == (1, "one", "1", 1)
    assert record["created_at"].endswith("Z")
    assert json_lines(ok("--json", "show", "1", db=db_path)) == [record]


def test_a_new_article_without_a_title_is_titled_with_todays_date(db_path: Path) -> None:
    ok("add", "--content", "no title given", db=db_path)
    (record,) = json_lines(ok("list", "--json", db=db_path))
    assert len(record["title"]) == 10 and record["title"][4] == "-" and record["title"][7] == "-"


def test_text_can_come_from_standard_input(db_path: Path) -> None:
    body = "第一行\nsecond line\n"
    ok("add", "-t", "piped", "-c", "-", db=db_path, stdin=body)
    ok("edit", "1", "-t", "-", db=db_path, stdin="新标题")
    (record,) = json_lines(ok("show", "1", "--json", db=db_path))
    assert (record["title"], record["content"]) == ("新标题", body)


def test_the_list_pages_with_a_cursor_printed_on_stderr(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        store.articles.create_many([{"title": f"note {i}", "content": "x"} for i in range(5)])
    first = noteskit("list", "--limit", "2", db=db_path)
    assert [line.split()[0] for line in first.stdout.splitlines()] == ["#5", "#4"]
    cursor = first.stderr.split("--after ")[1].split(")")[0]
    second = ok("list", "--limit", "2", "--after", cursor, db=db_path)
    assert [line.split()[0] for line in second.splitlines()] == ["#3", "#2"]
    assert len(ok("list", "--all", db=db_path).splitlines()) == 5


def test_saving_an_empty_title_is_refused_and_leaves_no_article_nor_draft(db_path: Path) -> None:
    assert "title" in refused("add", "--title", "   ", "--content", "x", db=db_path)
    assert "content" in refused("add", "--title", "t", db=db_path)
    with nk.Store.open(db_path) as store:
        assert store.articles.count() == 0
        assert store.articles.drafts() == []


@pytest.mark.parametrize("args", [["show", "42"], ["edit", "42", "-t", "x"], ["delete", "42"]])
def test_a_missing_article_is_an_error_message_not_a_traceback(db_path: Path, args: List[str]) -> None:
    assert "42" in refused(*args, db=db_path)


def test_a_stale_revision_is_a_conflict(db_path: Path) -> None:
    ok("add", "-t", "t", "-c", "c", db=db_path)
    ok("edit", "1", "-c", "changed", db=db_path)
    refused("edit", "1", "-c", "stale", "--revision", "1", db=db_path)
    assert json_lines(ok("show", "1", "--json", db=db_path))[0]["content"] == "changed"


@pytest.mark.parametrize("args", [[], ["show"], ["show", "abc"], ["nonsense"], ["list", "--limit", "many"], ["edit", "1"]])
def test_a_malformed_command_line_exits_2_with_usage(db_path: Path, args: List[str]) -> None:
    refused(*args, db=db_path, status=2)


@pytest.mark.parametrize("limit", ["0", "1001"])
def test_a_limit_out_of_range_is_refused(db_path: Path, limit: str) -> None:
    assert "limit" in refused("list", "--limit", limit, db=db_path)


def test_a_store_that_cannot_be_opened_is_an_error_message(tmp_path: Path) -> None:
    refused("list", db=tmp_path / "missing-folder" / "notes.db")
    not_a_store = tmp_path / "text.db"
    not_a_store.write_text("this is not a database " * 100)
    refused("list", db=not_a_store)


def test_without_db_the_default_store_lives_in_the_users_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = noteskit("add", "-t", "t", "-c", "c", env={"XDG_DATA_HOME": str(data)})
    assert done.returncode == 0, done.stderr
    assert (data / "noteskit" / "notes.db").exists()
    again = noteskit("list", env={"XDG_DATA_HOME": str(data)})
    assert "#1" in again.stdout


def test_a_closed_pipe_is_not_an_error(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        store.articles.create_many([{"title": f"note {i}", "content": "x" * 200} for i in range(1000)])
    done = subprocess.run(f"'{SCRIPT}' --db '{db_path}' list --all | head -1", shell=True, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.startswith("#1000")
    assert "Traceback" not in done.stderr and "Error" not in done.stderr


# ---- With the sample data ------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "data" / "sample.json"


@pytest.fixture
def sample_db(db_path: Path) -> Path:
    """A store holding ``examples/data/sample.json`` (28 articles, 3 conversations, 31 messages), imported by the CLI."""
    ok("import", str(SAMPLE), "--quiet", db=db_path)
    return db_path


def test_import_reads_the_sample_data_once_and_a_second_time_changes_nothing(db_path: Path) -> None:
    first = noteskit("import", str(SAMPLE), db=db_path)
    assert first.returncode == 0, first.stderr
    assert "62 created, 0 updated, 0 skipped" in first.stdout
    assert "import" in first.stderr and "100%" in first.stderr  # the progress bar
    again = json_lines(ok("import", str(SAMPLE), "--json", "--quiet", db=db_path))
    assert [{k: v for k, v in again[0].items() if k != "skips"}] == [{"created": 0, "updated": 0, "skipped": 62, "errors": [],
                                                                      "skipped_links": []}]
    assert {s["reason"] for s in again[0]["skips"]} == {"the store holds it already, unchanged"} and len(again[0]["skips"]) == 62
    assert len(json_lines(ok("list", "--all", "--json", db=db_path))) == 28
    assert [c["title"] for c in json_lines(ok("chat", "list", "--json", db=db_path))] == ["Book club", "妈妈", "Alice"]


@pytest.mark.parametrize("name,format", [("backup.json", None), ("backup.jsonl", None), ("folder", "markdown"),
                                         ("csvs", "csv")])
def test_an_export_imports_into_an_empty_store(sample_db: Path, tmp_path: Path, name: str, format: Optional[str]) -> None:
    target = tmp_path / name
    exported = ok("export", str(target), *(["--format", format] if format else []), db=sample_db)
    assert exported.startswith("exported 28 articles")
    copy = tmp_path / "copy.db"
    ok("import", str(target), "--quiet", *(["--format", format] if format else []), db=copy)
    original = [(a["title"], a["content"], a["created_at"]) for a in json_lines(ok("list", "--all", "--json", db=sample_db))]
    assert [(a["title"], a["content"], a["created_at"])
            for a in json_lines(ok("list", "--all", "--json", db=copy))] == original


def test_a_conversation_exports_as_a_transcript_and_imports_under_a_title(sample_db: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "alice.txt"
    ok("export", str(transcript), "--conversation", "Alice", db=sample_db)
    first = transcript.read_text(encoding="utf-8").splitlines()[0]
    assert first.endswith("Them: Hi! Are you free this weekend? 周末有空吗？")
    copy = tmp_path / "copy.db"
    ok("import", str(transcript), "--conversation", "Alice again", "--quiet", db=copy)
    history = json_lines(ok("chat", "history", "Alice again", "--all", "--json", db=copy))
    assert len(history) == 12 and history[1] == {**history[1], "content": "Saturday afternoon yes. What's up?", "from_me": True}


def test_a_malformed_file_imports_nothing_or_only_the_good_records_when_asked(db_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "article", "title": "good", "content": "kept"}\n{"type": "article", "title": 5}\n',
                   encoding="utf-8")
    message = refused("import", str(bad), db=db_path)
    assert "line 2" in message and "title" in message
    assert ok("list", db=db_path) == ""
    skipped = noteskit("import", str(bad), "--on-error", "skip", "--quiet", db=db_path)
    assert skipped.returncode == 0 and "1 malformed record" in skipped.stdout and "line 2" in skipped.stderr
    assert [a["title"] for a in json_lines(ok("list", "--json", db=db_path))] == ["good"]


@pytest.mark.parametrize("args", [["import", "/no/such/file.json"], ["export", "/no/such/folder/x.json"],
                                  ["export", "no-extension"], ["export", "x.txt", "--conversation", "Nobody"],
                                  ["import", "x.json", "--format", "yaml"]])
def test_exchange_mistakes_are_error_messages(sample_db: Path, args: List[str], tmp_path: Path) -> None:
    args = [str(tmp_path / a) if a in ("no-extension", "x.txt") else a for a in args]
    refused(*args, db=sample_db, status=2 if "yaml" in args else 1)


def test_chat_send_and_receive_add_messages_shown_oldest_first(db_path: Path) -> None:
    ok("chat", "send", "Alice", "周末有空吗？", db=db_path)
    ok("chat", "receive", "Alice", "Saturday, yes.\nWhere?", db=db_path)
    ok("chat", "receive", "Alice", "an old one", "--at", "2026-01-01T10:00:00Z", db=db_path)
    lines = ok("chat", "history", "Alice", db=db_path).splitlines()
    assert lines[0] == "── Alice (#1) ──"
    assert [line.split(maxsplit=3)[2:] for line in lines[1:3]] == [["them", "an old one"], ["me", "周末有空吗？"]]
    assert lines[4].strip() == "Where?"  # a multi-line message continues under its text
    records = json_lines(ok("chat", "history", "1", "--json", db=db_path))
    assert [(m["content"], m["from_me"]) for m in records] == [
        ("an old one", False), ("周末有空吗？", True), ("Saturday, yes.\nWhere?", False)]


def test_a_new_title_starts_a_conversation_and_an_id_names_one(db_path: Path) -> None:
    first = noteskit("chat", "send", "Book club", "hello", db=db_path)
    assert "new conversation #1 Book club" in first.stderr
    ok("chat", "send", "#1", "again", db=db_path)
    ok("chat", "send", "Book club", "and again", db=db_path)
    assert [c["title"] for c in json_lines(ok("chat", "list", "--json", db=db_path))] == ["Book club"]
    assert len(json_lines(ok("chat", "history", "Book club", "--json", db=db_path))) == 3


def test_history_pages_back_from_the_newest_message(sample_db: Path) -> None:
    newest = noteskit("chat", "history", "Alice", "--limit", "5", "--json", db=sample_db)
    page = json_lines(newest.stdout)
    assert [m["content"] for m in page][-1] == "OK 😄 see you Saturday!"
    cursor = newest.stderr.split("--before ")[1].split(")")[0]
    earlier = json_lines(ok("chat", "history", "Alice", "--limit", "5", "--before", cursor, "--json", db=sample_db))
    assert earlier[-1]["sent_at"] < page[0]["sent_at"]
    everything = json_lines(ok("chat", "history", "Alice", "--all", "--json", db=sample_db))
    assert len(everything) == 12 and everything[0]["content"].startswith("Hi! Are you free")
    assert [m["sent_at"] for m in everything] == sorted(m["sent_at"] for m in everything)


def test_an_empty_message_is_refused_and_starts_no_conversation(db_path: Path) -> None:
    assert "content" in refused("chat", "send", "Bob", "   ", db=db_path)
    assert ok("chat", "list", db=db_path) == ""


@pytest.mark.parametrize("args", [["chat", "history", "Nobody"], ["chat", "history", "99"], ["chat", "send", "#99", "x"],
                                  ["chat", "receive", "Alice", "x", "--at", "yesterday"]])
def test_chat_mistakes_are_error_messages(sample_db: Path, args: List[str]) -> None:
    refused(*args, db=sample_db)


def test_two_conversations_with_one_title_must_be_named_by_id(db_path: Path) -> None:
    with nk.Store.open(db_path) as store:
        store.conversations.create("Alice")
        store.conversations.create("Alice")
    assert "#1" in refused("chat", "history", "Alice", db=db_path) and "#2" in refused("chat", "send", "Alice", "x", db=db_path)


def test_heights_are_the_layouts_row_heights_at_the_given_width(sample_db: Path) -> None:
    rows = json_lines(ok("heights", "--width", "320", "--limit", "5", "--json", db=sample_db))
    assert [r["id"] for r in rows] == [28, 27, 26, 25, 24]
    with nk.Store.open(sample_db) as store, store.layout(width=320) as layout:
        assert [r["height"] for r in rows] == layout.article_heights([28, 27, 26, 25, 24])
    narrow = json_lines(ok("heights", "--width", "160", "--ids", "18", "--json", db=sample_db))
    wide = json_lines(ok("heights", "--width", "640", "--ids", "18", "--json", db=sample_db))
    assert narrow[0]["height"] > wide[0]["height"]  # the long walk wraps onto more lines when narrow
    table = noteskit("heights", "--all", db=sample_db)
    assert len(table.stdout.splitlines()) == 28 and "28 rows at width 375" in table.stderr


def test_render_writes_a_png_of_the_rows(sample_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.png"
    (picture,) = json_lines(ok("render", str(out), "--limit", "3", "--width", "300", "--json", db=sample_db))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (picture["width"], picture["rows"]) == (300, 3)


def test_heights_and_render_of_a_conversation_are_its_bubbles(sample_db: Path, tmp_path: Path) -> None:
    rows = json_lines(ok("heights", "--conversation", "Alice", "--all", "--json", db=sample_db))
    with nk.Store.open(sample_db) as store, store.layout(width=375) as layout:
        alice = next(c for c in store.conversations if c.title == "Alice")
        messages = alice.history(limit=100).items
        assert [r["id"] for r in rows] == [m.id for m in messages]
        assert [r["height"] for r in rows] == [b.row_height for b in layout.bubbles([m.id for m in messages])]
    (picture,) = json_lines(ok("render", str(tmp_path / "alice.png"), "--conversation", "Alice", "--json", db=sample_db))
    assert (picture["rows"], picture["width"]) == (12, 375)
    assert (tmp_path / "alice.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args", [["heights", "--width", "0"], ["heights", "--width", "nan"], ["heights", "--ids", "999"],
                                  ["render", "/no/such/folder/out.png"], ["render", "x.png", "--conversation", "Nobody"]])
def test_bad_layout_requests_are_error_messages(sample_db: Path, args: List[str]) -> None:
    refused(*args, db=sample_db)


# ---- Search ----------------------------------------------------------------------------------------

ON, OFF = "\x1b[1;30;43m", "\x1b[0m"


def on_a_terminal(*args: str, env: Optional[Dict[str, str]] = None) -> str:
    """Runs the command with its stdout on a pseudo-terminal, as a person at a terminal runs it."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([str(SCRIPT), *args], stdout=follower, stderr=subprocess.PIPE,
                               env={**os.environ, "TERM": "xterm", **(env or {})})
    os.close(follower)
    chunks = []
    while True:  # read while it writes (a full terminal buffer would block it), until it closes
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command exited and the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return b"".join(chunks).decode()


def test_search_finds_articles_newest_first_with_the_matches_highlighted_on_a_terminal(sample_db: Path) -> None:
    screen = on_a_terminal("--db", str(sample_db), "search", "天气")
    rows = screen.splitlines()
    assert [r.split()[0] for r in rows] == ["#22", "#21", "#1"]
    assert f"{ON}天气{OFF}预报" in rows[1] and f"今天{ON}天气{OFF}真好" in rows[2]
    assert ON not in ok("search", "天气", db=sample_db)  # into a pipe or a file: plain text
    assert f"{ON}天气{OFF}" in ok("search", "天气", "--color", "always", db=sample_db)
    assert ON not in on_a_terminal("--db", str(sample_db), "search", "天气", env={"NO_COLOR": "1"})


def test_search_hits_carry_their_spans_for_scripts(sample_db: Path) -> None:
    hits = json_lines(ok("search", "ALICE", "--json", db=sample_db))
    assert [h["title"] for h in hits] == ["Ideas for the trip"]
    start, end = hits[0]["spans"]["content"][0]
    assert hits[0]["content"][start:end] == "Alice"
    assert json_lines(ok("search", "ALICE", "--case-sensitive", "--json", db=sample_db)) == []
    assert [h["title"] for h in json_lines(ok("search", "咖啡", "--field", "title", "--json", db=sample_db))] == ["咖啡"]


def test_search_of_messages_names_their_conversation(sample_db: Path) -> None:
    lines = ok("search", "天气", "--messages", "--color", "never", db=sample_db).splitlines()
    assert len(lines) == 2 and all("Alice" in line and "  me  " in line for line in lines)
    only_mum = json_lines(ok("search", "车", "--conversation", "妈妈", "--json", db=sample_db))
    assert only_mum and {m["conversation_id"] for m in only_mum} == {2}


def test_an_empty_query_lists_everything_in_pages(sample_db: Path) -> None:
    first = noteskit("search", "", "--limit", "20", "--json", db=sample_db)
    cursor = first.stderr.split("--after ")[1].split(")")[0]
    rest = json_lines(ok("search", "", "--limit", "20", "--after", cursor, "--json", db=sample_db))
    assert [h["id"] for h in json_lines(first.stdout) + rest] == list(range(28, 0, -1))


@pytest.mark.parametrize("query", ["%", "_", "*", "\\", "'", '"', "NEAR(", "🌈"])
def test_search_queries_are_literal(sample_db: Path, query: str) -> None:
    hits = json_lines(ok("search", query, "--json", db=sample_db))
    everything = json_lines(ok("list", "--all", "--json", db=sample_db))
    expected = [a["id"] for a in everything if query.casefold() in (a["title"] + "\n" + a["content"]).casefold()]
    assert [h["id"] for h in hits] == expected


@pytest.mark.parametrize("args", [["search", "x", "--limit", "0"], ["search", "x", "--after", "forged"],
                                  ["search", "x", "--conversation", "Nobody"], ["search", "x" * 10_001]])
def test_search_mistakes_are_error_messages(sample_db: Path, args: List[str]) -> None:
    refused(*args, db=sample_db)


def test_import_takes_the_chat_and_csv_options(tmp_path: Path, db_path: Path) -> None:
    data = Path(__file__).parent / "data"
    ok("import", str(data / "_chat.txt"), "--format", "whatsapp", "--me", "Carol", "--tz", "Europe/Berlin", "--quiet", db=db_path)
    history = ok("chat", "history", "_chat", db=db_path)
    assert "Alice  Happy new year" in history and "  me  新年快乐" in history
    excel = tmp_path / "excel.csv"
    excel.write_bytes("Titel;Inhalt;Farbe\r\nMüll;trennen;grün\r\n".encode("cp1252"))
    ok("import", str(excel), "--encoding", "cp1252", "--column", "Titel=title", "--column", "Inhalt=content",
       "--ignore-unknown-columns", "--quiet", db=db_path)
    assert [a["title"] for a in json_lines(ok("list", "--json", db=db_path))] == ["Müll"]
