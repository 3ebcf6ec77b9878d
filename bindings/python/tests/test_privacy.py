"""Private by default (issue 19): owner-only modes whatever the umask, sharing on purpose with
``mode=``, exports that leave nothing behind, and no symlink tricks.

Every rule runs under umask 022 and 000 and checks the mode bits of what was made: NotesKit must not
rely on the umask for privacy (000 would make a 0666 default world-writable) nor lose a requested
mode to it (022 would turn 0666 into 0644).
"""
from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Dict, Iterator

import pytest

import noteskit as nk
from noteskit.cli import main as cli

TOKEN = "abcdefghijklmnopqrstuvwxyz"  # 26 letters of the temp names' alphabet


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"], autouse=True)
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def modes(folder: Path) -> Dict[str, int]:
    """The mode of everything under ``folder`` (relative path -> bits)."""
    return {str(p.relative_to(folder)): mode(p) for p in sorted(folder.rglob("*"))}


def filled(path: Path, **kwargs: object) -> nk.Store:
    store = nk.Store.open(path, **kwargs)  # type: ignore[arg-type]
    store.articles.create(title="secret", content="my diary")
    conv = store.conversations.create("Alice")
    conv.send("hello")
    return store


# ---- Modes ------------------------------------------------------------------------------------

def test_a_new_store_and_its_wal_and_shm_are_readable_by_the_owner_only(tmp_path):
    with filled(tmp_path / "notes.db") as store:
        store.articles.new_draft(title="unsaved", content="draft text")  # drafts live in the store
        assert modes(tmp_path) == {"notes.db": 0o600, "notes.db-shm": 0o600, "notes.db-wal": 0o600}


@pytest.mark.parametrize("shared", [0o640, 0o644, 0o660, 0o666])
def test_store_open_with_a_mode_shares_the_store_on_purpose_exactly_as_asked(tmp_path, shared):
    with warnings.catch_warnings():
        warnings.simplefilter("error", nk.PrivacyWarning)  # what was asked for is not warned about
        with filled(tmp_path / "notes.db", mode=shared):
            assert modes(tmp_path) == {"notes.db": shared, "notes.db-shm": shared, "notes.db-wal": shared}
        with nk.Store.open(tmp_path / "notes.db", mode=shared) as again:
            assert again.articles.count() == 1


def test_an_existing_readable_store_is_never_chmodded_and_opening_it_warns_once(tmp_path):
    path = tmp_path / "notes.db"
    filled(path).close()
    os.chmod(path, 0o644)
    with pytest.warns(nk.PrivacyWarning) as caught:
        store = nk.Store.open(path)
    with store:
        assert store.articles.count() == 1  # it works
        assert len(caught) == 1 and "notes.db (mode 644)" in str(caught[0].message)
        assert "chmod 600" in str(caught[0].message)
        assert mode(path) == 0o644 and mode(tmp_path / "notes.db-wal") == 0o644  # left as it was
        assert [(Path(f.path).name, f.mode) for f in nk.exposed_files(path)] == [
            ("notes.db", 0o644), ("notes.db-wal", 0o644), ("notes.db-shm", 0o644)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", nk.PrivacyWarning)
        nk.Store.open(path, mode=0o644).close()  # accepted on purpose: no warning
        with pytest.raises(nk.PrivacyWarning):  # a warning turned into an error leaves no store open
            nk.Store.open(path, read_only=True)
    for name in ("notes.db", "notes.db-wal", "notes.db-shm"):  # what the warning says to do
        if (tmp_path / name).exists():
            os.chmod(tmp_path / name, 0o600)
    assert nk.exposed_files(path) == []


def test_a_store_writable_by_others_is_exposed_even_when_sharing_reads(tmp_path):
    path = tmp_path / "notes.db"
    nk.Store.open(path).close()
    os.chmod(path, 0o646)
    assert [(Path(f.path).name, f.mode) for f in nk.exposed_files(path, mode=0o644)] == [("notes.db", 0o646)]
    with pytest.warns(nk.PrivacyWarning, match="mode 646"):
        nk.Store.open(path, mode=0o644).close()


@pytest.mark.parametrize("bad", [0o755, 0o700, 0o400, 0o200, 0o4600, 0o1600, 0o10600, -1])
def test_a_mode_that_is_not_a_plain_file_mode_is_refused_and_creates_nothing(tmp_path, bad):
    with pytest.raises(nk.ValidationError) as error:
        nk.Store.open(tmp_path / "notes.db", mode=bad)
    assert error.value.field == "mode"
    with nk.Store.memory() as store, pytest.raises(nk.ValidationError):
        store.export(tmp_path / "out.json", mode=bad)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("bad", ["644", 6.4, True])
def test_a_mode_that_is_not_an_int_is_an_invalid_argument(tmp_path, bad):
    with pytest.raises(nk.InvalidArgumentError):
        nk.Store.open(tmp_path / "notes.db", mode=bad)
    assert os.listdir(tmp_path) == []


FILE_EXPORTS = [("backup.json", {}), ("backup.jsonl", {}), ("notes.csv", {}), ("alice.txt", {"conversation": 1})]


@pytest.mark.parametrize("name, options", FILE_EXPORTS)
def test_every_exported_file_is_readable_by_the_owner_only(tmp_path, name, options):
    with filled(tmp_path / "notes.db") as store:
        out = tmp_path / "out"
        out.mkdir()
        store.export(out / name, **options)
        assert modes(out) == {name: 0o600}
        store.export(out / name, mode=0o644, **options)  # replacing it: the new file has the new mode
        assert modes(out) == {name: 0o644}


@pytest.mark.parametrize("fmt, files", [("markdown", ["secret.md"]), ("csv", ["articles.csv", "conversations.csv", "messages.csv"])])
def test_an_exported_folder_tree_is_readable_by_the_owner_only(tmp_path, fmt, files):
    with filled(tmp_path / "notes.db") as store:
        store.export(tmp_path / "private", format=fmt)
        assert modes(tmp_path / "private") == {name: 0o600 for name in files}
        assert mode(tmp_path / "private") == 0o700
        (tmp_path / "empty").mkdir(mode=0o777)
        os.chmod(tmp_path / "empty", 0o777)
        store.export(tmp_path / "empty", format=fmt)  # an empty folder given is replaced by a private one
        assert mode(tmp_path / "empty") == 0o700
        for shared, folder in [(0o644, 0o755), (0o640, 0o750), (0o660, 0o770)]:
            target = tmp_path / f"shared-{shared:o}"
            store.export(target, format=fmt, mode=shared)
            assert mode(target) == folder and modes(target) == {name: shared for name in files}


def test_the_default_data_folder_is_made_private_and_an_existing_one_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = nk.default_store_path()
    assert path == tmp_path / "data" / "noteskit" / "notes.db"
    assert mode(tmp_path / "data") == 0o700 and mode(tmp_path / "data" / "noteskit") == 0o700
    os.chmod(tmp_path / "data" / "noteskit", 0o755)
    nk.default_store_path()
    assert mode(tmp_path / "data" / "noteskit") == 0o755


def test_noteskit_doctor_lists_what_other_accounts_can_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert cli(["add", "--title", "t", "--content", "c"]) == 0
    capsys.readouterr()
    assert cli(["doctor"]) == 0
    assert "private" in capsys.readouterr().out
    db = nk.default_store_path()
    os.chmod(db, 0o644)
    os.chmod(db.parent, 0o755)
    assert cli(["list"]) == 0
    assert "noteskit: warning: other accounts can read this store" in capsys.readouterr().err
    with nk.Store.open(db, mode=0o644):  # keeps -wal and -shm there, made with the store's mode
        assert cli(["doctor"]) == 1
        out = capsys.readouterr().out
    assert f"{db}: mode 644" in out and f"{db}-wal: mode 644" in out and f"{db}-shm: mode 644" in out
    assert f"{db.parent}: mode 755" in out
    assert mode(db) == 0o644 and mode(db.parent) == 0o755  # doctor changes nothing
    other = tmp_path / "other.db"
    nk.Store.open(other).close()
    assert cli(["--db", str(other), "doctor"]) == 0


def test_the_command_line_exports_with_a_mode(tmp_path, capsys):
    db = tmp_path / "notes.db"
    filled(db).close()
    assert cli(["--db", str(db), "export", str(tmp_path / "a.json")]) == 0
    assert cli(["--db", str(db), "export", str(tmp_path / "b.json"), "--mode", "644"]) == 0
    assert (mode(tmp_path / "a.json"), mode(tmp_path / "b.json")) == (0o600, 0o644)
    capsys.readouterr()
    assert cli(["--db", str(db), "export", str(tmp_path / "c.json"), "--mode", "755"]) == 1
    assert "never executable" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(["--db", str(db), "export", str(tmp_path / "c.json"), "--mode", "rw-r--r--"])
    assert not (tmp_path / "c.json").exists()


# ---- Exports leave nothing behind ---------------------------------------------------------------

def leftover(folder: Path, prefix: str = ".noteskit-tmp-", token: str = TOKEN, folder_entry: bool = False) -> Path:
    path = folder / (prefix + token)
    if folder_entry:
        path.mkdir()
        (path / "part.md").write_text("half an export")
    else:
        path.write_text("half an export")
    return path


def test_the_next_export_into_a_folder_removes_the_leftovers_of_a_killed_one(tmp_path):
    with filled(tmp_path / "notes.db") as store:
        out = tmp_path / "out"
        out.mkdir()
        leftover(out)
        leftover(out, token="b" * 26, folder_entry=True)
        store.export(out / "backup.json")
        assert sorted(os.listdir(out)) == ["backup.json"]
        leftover(out)
        store.export(out / "vault", format="markdown")
        assert sorted(os.listdir(out)) == ["backup.json", "vault"]


def test_opening_a_store_removes_the_leftovers_in_its_folder_but_a_read_only_open_does_not(tmp_path):
    filled(tmp_path / "notes.db").close()
    stray = leftover(tmp_path)
    nk.Store.open(tmp_path / "notes.db", read_only=True).close()
    assert stray.exists()
    nk.Store.open(tmp_path / "notes.db").close()
    assert not stray.exists()


def test_a_sweep_removes_only_what_is_certainly_a_dead_exports_leftover(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    keep = {
        "other program": out / "notes.json.tmp",
        "other prefix": leftover(out, prefix=".noteskit-"),
        "short token": leftover(out, token="abc"),
        "foreign letters": leftover(out, token="A" * 26),
        "just created": leftover(out, prefix=".noteskit-new-"),  # its writer may be about to lock it
        "folder with a folder": leftover(out, token="c" * 26, folder_entry=True),
        "locked": leftover(out, token="d" * 26),
    }
    (keep["other program"]).write_text("someone else's")
    (keep["folder with a folder"] / "sub").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not NotesKit's")
    link = out / (".noteskit-tmp-" + "e" * 26)
    os.symlink(secret, link)
    live = open(keep["locked"], "rb")  # a live export holds the lock: this process, another description
    fcntl.flock(live, fcntl.LOCK_EX)
    try:
        with nk.Store.memory() as store:
            store.export(out / "backup.json")
        for why, path in keep.items():
            assert path.exists(), why
        assert link.is_symlink() and secret.read_text() == "not NotesKit's"
        assert not (keep["folder with a folder"] / "part.md").exists()  # its files went, the folder stays
    finally:
        live.close()
    with nk.Store.memory() as store:
        store.export(out / "backup.json")
    assert not keep["locked"].exists()  # unlocked: its export is gone


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file owned by another account needs root")
def test_a_leftover_owned_by_another_account_is_left_alone(tmp_path):
    stray = leftover(tmp_path)
    os.chown(stray, 12345, 12345)
    with nk.Store.memory() as store:
        store.export(tmp_path / "backup.json")
    assert stray.exists()


KILLED_EXPORT = r"""
import sys, noteskit as nk
store = nk.Store.open(sys.argv[1])
print("exporting", flush=True)
while True:
    store.export(sys.argv[2], format=sys.argv[3])
    if sys.argv[3] == "markdown":
        import shutil; shutil.rmtree(sys.argv[2])
"""


@pytest.mark.parametrize("fmt, target", [("json", "backup.json"), ("markdown", "vault")])
def test_an_export_killed_midway_leaves_a_private_leftover_the_next_export_removes(tmp_path, fmt, target):
    db = tmp_path / "notes.db"
    with nk.Store.open(db) as store:
        store.articles.create_many({"title": f"t{i}", "content": "x" * 2000} for i in range(3000))
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    found = []
    for attempt in range(20):  # kill until one kill lands mid-export
        child = subprocess.Popen([sys.executable, "-c", KILLED_EXPORT, str(db), str(out / target), fmt],
                                 stdout=subprocess.PIPE, env=env)
        assert child.stdout is not None and child.stdout.readline() == b"exporting\n"
        while child.poll() is None and not [p for p in out.iterdir() if p.name.startswith(".noteskit-tmp-")]:
            pass
        assert child.poll() is None, "the exporting child died on its own"
        child.kill()
        child.wait()
        child.stdout.close()
        found = [p for p in out.iterdir() if p.name.startswith(".noteskit-")]
        if found:
            break
    assert found, "no kill landed mid-export"
    for path in found:  # what a killed export leaves is as private as what it would have written
        assert mode(path) == (0o700 if path.is_dir() else 0o600)
        assert all(mode(p) == 0o600 for p in path.rglob("*"))
    with nk.Store.open(db, read_only=True) as store:
        store.export(out / "again.json")
    assert not [p for p in out.iterdir() if p.name.startswith(".noteskit-")]


# ---- No symlink tricks ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, options", FILE_EXPORTS)
def test_an_export_to_a_symlink_replaces_the_link_and_never_writes_through_it(tmp_path, name, options):
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's file")
    os.chmod(victim, 0o644)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / name)
    with filled(tmp_path / "notes.db") as store:
        store.export(out / name, **options)
    assert victim.read_text() == "someone's file" and mode(victim) == 0o644
    assert not (out / name).is_symlink() and mode(out / name) == 0o600 and "secret" in (out / name).read_text() or \
        "hello" in (out / name).read_text()


def test_an_export_to_a_symlink_to_a_folder_or_to_nowhere_replaces_the_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "to-folder.json")
    os.symlink(tmp_path / "nowhere" / "x", tmp_path / "dangling.json")
    with filled(tmp_path / "notes.db") as store:
        store.export(tmp_path / "to-folder.json")
        store.export(tmp_path / "dangling.json")
    assert os.listdir(elsewhere) == [] and not (tmp_path / "nowhere").exists()
    for name in ("to-folder.json", "dangling.json"):
        assert not (tmp_path / name).is_symlink() and json.loads((tmp_path / name).read_text())["format"] == "noteskit"


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_a_folder_export_to_a_symlinked_folder_replaces_the_link_and_writes_nothing_through_it(tmp_path, fmt):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chmod(elsewhere, 0o755)
    os.symlink(elsewhere, tmp_path / "vault")
    with filled(tmp_path / "notes.db") as store:
        store.export(tmp_path / "vault", format=fmt)
    assert os.listdir(elsewhere) == [] and mode(elsewhere) == 0o755
    assert not (tmp_path / "vault").is_symlink() and mode(tmp_path / "vault") == 0o700
    assert len(os.listdir(tmp_path / "vault")) >= 1


def test_a_markdown_import_skips_and_reports_links_that_lead_outside_the_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("---\ntitle: private\n---\n\nsecret")
    (outside / "more.md").write_text("more secrets")
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "mine.md").write_text("mine")
    (notes / "sub" / "nested.md").write_text("nested")
    os.symlink(outside / "private.md", notes / "link.md")             # a file outside
    os.symlink(outside, notes / "sub" / "folder-link")                # a folder outside
    os.symlink("../../outside/more.md", notes / "sub" / "relative.md")  # relative, climbing out
    os.symlink(tmp_path / "nowhere.md", notes / "dangling.md")        # nowhere
    os.symlink(notes / "mine.md", notes / "inside.md")                # inside: its target is read anyway
    os.symlink(notes / "sub", notes / "inside-folder")                # inside, a folder
    os.symlink(".", notes / "sub" / "itself")                         # inside: the folder itself, no loop
    os.symlink("..", notes / "sub" / "up")                            # inside: the folder imported
    os.symlink(outside / "private.md", notes / "picture.png")         # would not be read anyway
    with nk.Store.memory() as store:
        report = store.import_(notes, format="markdown")
        assert report.created == 2 and report.errors == ()
        assert report.skipped_links == ("dangling.md", "link.md", "sub/folder-link", "sub/relative.md")
        assert sorted(a.title for a in store.articles) == ["mine", "nested"]
        assert "secret" not in json.dumps([a.content for a in store.articles])


def test_a_rendered_picture_of_notes_is_readable_by_the_owner_only_and_replaces_a_link(tmp_path):
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"someone's picture")
    os.symlink(victim, tmp_path / "rows.png")
    with filled(tmp_path / "notes.db") as store, store.layout(width=375) as layout:
        layout.render_articles([1], tmp_path / "rows.png")
        layout.render_conversation(1, tmp_path / "chat.png")
    assert victim.read_bytes() == b"someone's picture" and not (tmp_path / "rows.png").is_symlink()
    assert (mode(tmp_path / "rows.png"), mode(tmp_path / "chat.png")) == (0o600, 0o600)
    assert (tmp_path / "rows.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_line_import_says_which_links_it_did_not_read(tmp_path, capsys):
    (tmp_path / "outside.md").write_text("secret")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.md").write_text("mine")
    os.symlink(tmp_path / "outside.md", notes / "link.md")
    assert cli(["--db", str(tmp_path / "notes.db"), "import", str(notes), "--format", "markdown", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "1 created" in captured.out
    assert f"skipped: link.md is a link leading outside {notes} (not read)" in captured.err


def test_a_store_created_through_a_link_to_nothing_is_private_too(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real/notes.db", tmp_path / "notes.db")  # SQLite follows a store path's link
    with filled(tmp_path / "notes.db"):
        assert (tmp_path / "notes.db").is_symlink()
        assert modes(tmp_path / "real") == {"notes.db": 0o600, "notes.db-shm": 0o600, "notes.db-wal": 0o600}


CACHE_CHILD = r"""
import sys, noteskit as nk
nk.measure_text("今天天气真好 weather", 200)
with nk.Store.memory() as store:
    store.articles.create(title="t", content="今天天气真好")
    with store.layout(width=375) as layout:
        layout.article_height(1)
        layout.render_articles([1], sys.argv[1])
"""


def test_what_the_library_keeps_under_the_users_cache_folder_is_owner_only(tmp_path):
    """Fonts (measuring, rendering) may keep a cache under ``$XDG_CACHE_HOME``: whatever NotesKit
    makes there is owner-only, under the umask this test runs with (the child inherits it)."""
    cache, home = tmp_path / "cache", tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", CACHE_CHILD, str(tmp_path / "rows.png")], env=env, check=True)
    made = [cache, *cache.rglob("*")] if cache.exists() else []
    wrong = {str(p.relative_to(tmp_path)): oct(mode(p)) for p in made
             if mode(p) != (0o700 if p.is_dir() else 0o600) and not p.is_symlink()}
    assert not wrong, f"not owner-only under the cache folder: {wrong}"
    assert mode(tmp_path / "rows.png") == 0o600
