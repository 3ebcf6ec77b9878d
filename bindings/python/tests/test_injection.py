"""SQL, FTS and path syntax in every string field is literal data."""
from __future__ import annotations

import os

import pytest

import noteskit as nk

HOSTILE = [
    "'; DROP TABLE articles; --", "\" OR 1=1 --", "Robert'); DELETE FROM drafts;--", "%", "_", "%_%", "*", "\\",
    "\\%", "a*", "NEAR(a b, 2)", "a AND b OR NOT c", "title:secret", "^start", "\"unterminated", "{col1 col2}: x",
    "' || (SELECT uid FROM articles LIMIT 1) || '", "../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini",
    "$(rm -rf /)", "`id`", "%s%s%n", "{}", "[]", "null", "\u202etxt.exe", "😀", "天气",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_sql_and_fts_syntax_in_titles_and_contents_is_stored_literally(store, text):
    a = store.articles.create(title=text, content=f"{text} body {text}")
    assert store.articles.get(a.id).title == text
    assert store.articles.get(a.id).content == f"{text} body {text}"
    updated = store.articles.update(a.id, title=f"x{text}")
    assert updated.title == f"x{text}"
    d = store.articles.new_draft(title=text, content=text)
    assert store.articles.draft(d.id).content == text
    d.title = text + text
    assert d.save().title == text + text
    assert store.articles.count() == 2
    many = store.articles.create_many([{"title": text, "content": text}])
    assert store.articles.get(many[0].id).content == text
    assert store.articles.count() == 3


def test_syntax_in_cursors_and_store_paths_is_refused_or_literal(tmp_path):
    with nk.Store.memory() as store:
        store.articles.create(title="t", content="c")
        for text in HOSTILE:
            with pytest.raises(nk.ValidationError):
                store.articles.list(after=text)
    # a store path with quotes and SQL in it is just a file name
    name = "x'; DROP TABLE articles; --.db"
    with nk.Store.open(tmp_path / name) as s:
        s.articles.create(title="t", content="c")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == [name]


TRAVERSAL_TITLES = [
    "../../escape", "../escape", "..", ".", "/etc/passwd", "/tmp/absolute", "a/b/c", "a\\b\\c", "C:\\evil",
    "~/home", "-rf", ".hidden", "%2e%2e%2fencoded", "天气/../../x", "\u202eexe.txt", "CON", "nul", "x" * 300,
    "名前" * 120, "same", "same", "trailing dot.", "trailing space ", "tab\there", "line\nbreak",
]


def _needs_exchange(store):
    if not hasattr(store, "import_"):
        pytest.skip("the library has no import/export yet")


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_titles_with_paths_export_only_inside_the_target_folder_and_import_back_literally(tmp_path, store, fmt):
    _needs_exchange(store)
    outer = tmp_path / "outer"
    outer.mkdir()
    target = outer / "notes"
    store.articles.create_many([{"title": t, "content": f"body of {t}"} for t in TRAVERSAL_TITLES])
    store.export(target, format=fmt)
    written = [p for p in tmp_path.rglob("*")]
    assert all(p == outer or p == target or p.parent == target for p in written), \
        [str(p) for p in written if p.parent != target]
    names = [p.name for p in target.iterdir()]
    assert all(len(n.encode()) <= 255 and "/" not in n and n not in (".", "..") for n in names)
    with nk.Store.memory() as other:
        other.import_(target, format=fmt)
        assert sorted(a.title for a in other.articles.iter()) == sorted(TRAVERSAL_TITLES)
        assert sorted(a.content for a in other.articles.iter()) == sorted(f"body of {t}" for t in TRAVERSAL_TITLES)


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_a_target_folder_that_is_a_symlink_is_replaced_and_nothing_is_written_through_it(tmp_path, store, fmt):
    _needs_exchange(store)
    outer, victim = tmp_path / "outer", tmp_path / "victim"
    outer.mkdir()
    victim.mkdir()
    os.symlink(victim, outer / "notes")
    os.symlink(victim, outer / "escape")  # what "../escape" would reach, were names joined naively
    store.articles.create_many([{"title": t, "content": f"body of {t}"} for t in TRAVERSAL_TITLES])
    store.export(outer / "notes", format=fmt)
    assert os.listdir(victim) == [] and (outer / "escape").is_symlink()
    assert not (outer / "notes").is_symlink() and (outer / "notes").is_dir()
    assert sorted(os.listdir(outer)) == ["escape", "notes"]


LINK_TARGETS = ["../../etc/passwd", "/etc/passwd", "../", "../../", "/", "%2e%2e%2fencoded", "~/home", "C:\\evil",
                "天气/../../x", "\u202eexe.txt", "x" * 300]


def test_markdown_links_with_path_syntax_are_skipped_and_reported_never_read_through(tmp_path, store):
    _needs_exchange(store)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "note.md").write_text("mine")
    for n, target in enumerate(LINK_TARGETS):
        os.symlink(target, folder / f"link{n:02}.md")
    report = store.import_(folder, format="markdown")
    assert report.created == 1 and [a.content for a in store.articles.iter()] == ["mine"]
    assert report.skipped_links == tuple(f"link{n:02}.md" for n in range(len(LINK_TARGETS)))


def test_a_markdown_note_whose_front_matter_names_another_place_is_imported_as_data(tmp_path, store):
    _needs_exchange(store)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "note.md").write_text('---\ntitle: "../../../outside"\nuid: "/etc/passwd"\n---\nbody\n')
    before = sorted(p for p in tmp_path.rglob("*"))
    try:
        store.import_(folder, format="markdown")
    except nk.NotesError:
        pass  # a uid that is not a UUID may be refused; either way nothing is written anywhere
    assert sorted(p for p in tmp_path.rglob("*")) == before
    for a in store.articles.iter():
        assert a.title == "../../../outside"


def test_sql_and_fts_syntax_as_search_queries_is_matched_literally(store):
    if not hasattr(store.articles, "search"):
        pytest.skip("the library has no search yet")
    conv = store.conversations.create("injection")
    for text in HOSTILE:
        store.articles.create(title="t", content=f"<{text}>")
        conv.send(f"<{text}>")
    store.articles.create(title="plain", content="nothing special here")
    for text in HOSTILE:
        expected = sorted(f"<{t}>" for t in HOSTILE if text in f"<{t}>")
        hits = [h.article.content for h in store.articles.search(text, field="content", case_sensitive=True, limit=1000)]
        assert sorted(hits) == expected, text
        messages = [h.message.content for h in store.messages.search(text, case_sensitive=True, limit=1000)]
        assert sorted(messages) == expected, text
    assert store.articles.count() == len(HOSTILE) + 1  # nothing was dropped or altered


@pytest.mark.parametrize("text", HOSTILE)
def test_sql_syntax_in_conversation_titles_message_texts_and_senders_is_stored_literally(store, text):
    conv = store.conversations.create(text)
    assert store.conversations.get(conv.id).title == text
    assert [c.id for c in store.conversations.find(text)] == [conv.id]
    assert store.conversations.rename(conv.id, f"x{text}").title == f"x{text}"
    received = store.messages.receive(conv.id, text)
    many = store.messages.insert_many(conv.id, [{"content": f"{text}!", "from_me": False, "sender": text}])
    assert store.messages.get(received.id).content == text
    assert (store.messages.get(many[0].id).content, store.messages.get(many[0].id).sender) == (f"{text}!", text)
    assert [m.id for m in store.messages.history(conv.id)] == [received.id, many[0].id]
    assert store.conversations.count() == 1 and store.messages.count() == 2


def test_sql_syntax_as_a_query_of_the_whole_store_search_is_matched_literally(store):
    for text in HOSTILE:
        store.articles.create(title=f"[{text}]", content="c")
    store.articles.create(title="plain", content="nothing special")
    for text in HOSTILE:
        expected = sorted(f"[{t}]" for t in HOSTILE if text in f"[{t}]")
        found = [h.article.title for h in store.articles.search(text, field="title", case_sensitive=True, limit=1000)]
        assert sorted(found) == expected, text
        everything = store.search(text, kinds="articles", limit=1000)
        assert sorted(h.record.title for h in everything.items) == \
            sorted(f"[{t}]" for t in HOSTILE if text.lower() in f"[{t}]".lower()), text
    assert store.articles.count() == len(HOSTILE) + 1
