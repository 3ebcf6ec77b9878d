"""SQL, FTS and path syntax in every string field is literal data."""
from __future__ import annotations

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
