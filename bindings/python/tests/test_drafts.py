"""Drafts: explicit save, discard, crash survival and conflicts (design §4, Notes)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

import noteskit as nk


def test_a_new_draft_is_titled_with_todays_local_date(store):
    d = store.articles.new_draft()
    assert d.title == time.strftime("%Y-%m-%d") and d.content == ""
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", d.title)


def test_the_default_title_follows_the_local_time_zone(tmp_path):
    # 23:30 UTC is already tomorrow in Tokyo and still today in Honolulu.
    script = "import noteskit as nk\nwith nk.Store.memory() as s: print(s.articles.new_draft().title)"
    titles = {}
    for tz in ("Asia/Tokyo", "Pacific/Honolulu"):
        out = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TZ": tz}, capture_output=True,
                             text=True, check=True)
        titles[tz] = out.stdout.strip()
        expected = subprocess.run(["date", "+%Y-%m-%d"], env={**os.environ, "TZ": tz}, capture_output=True,
                                  text=True).stdout.strip()
        assert titles[tz] == expected


def test_saving_a_draft_creates_the_article_and_lists_no_unsaved_draft(store):
    d = store.articles.new_draft(title="Notes")
    d.content = "written in the editor"
    a = d.save()
    assert (a.title, a.content, a.revision) == ("Notes", "written in the editor", 1)
    assert store.articles.drafts() == [] and store.articles.get(a.id) == a


def test_saving_a_draft_with_empty_content_is_refused_and_keeps_the_draft(store):
    d = store.articles.new_draft()
    with pytest.raises(nk.ValidationError) as e:
        d.save()
    assert e.value.field == "content"
    assert store.articles.count() == 0 and [x.id for x in store.articles.drafts()] == [d.id]


def test_leaving_an_editor_without_saving_writes_nothing(store):
    a = store.articles.create(title="t", content="saved text")
    seq = store.last_change_seq()
    d = store.articles.edit(a.id)
    d.content = "typed but never saved"
    d.discard()
    assert store.articles.get(a.id) == a and store.last_change_seq() == seq
    assert store.articles.drafts() == []


def test_editing_saves_the_next_revision(store):
    a = store.articles.create(title="t", content="c")
    d = store.articles.edit(a.id)
    assert (d.article_id, d.base_revision, d.title, d.content) == (a.id, 1, "t", "c")
    d.title = "t2"
    b = d.save()
    assert (b.id, b.revision, b.title) == (a.id, 2, "t2")


def test_saving_a_draft_whose_article_changed_is_a_conflict_and_keeps_the_draft(store):
    a = store.articles.create(title="t", content="c")
    d = store.articles.edit(a.id)
    d.content = "mine"
    store.articles.update(a.id, content="theirs")
    with pytest.raises(nk.ConflictError, match="kept"):
        d.save()
    assert store.articles.get(a.id).content == "theirs"
    assert store.articles.draft(d.id).content == "mine"


def test_saving_a_draft_whose_article_was_deleted_is_a_conflict(store):
    a = store.articles.create(title="t", content="c")
    d = store.articles.edit(a.id)
    d.content = "typed before the delete"
    store.articles.delete(a.id)
    with pytest.raises(nk.ConflictError, match="deleted"):
        d.save()
    assert len(store.articles.drafts()) == 1


def test_after_the_first_save_the_editor_stays_on_the_saved_article(store):
    # The app's editor, after saving a new article, is bound to it: later saves update it.
    d = store.articles.new_draft(title="周末")
    d.content = "去公园"
    a = d.save()
    assert (d.article_id, d.base_revision) == (a.id, 1)
    d.content = "去公园散步"
    assert [x.id for x in store.articles.drafts()] == [d.id]  # unsaved changes again
    b = d.save()
    assert (b.id, b.revision, b.content) == (a.id, 2, "去公园散步")
    assert store.articles.count() == 1 and store.articles.drafts() == []
    assert d.save() == b  # nothing changed: same revision
    assert store.articles.draft(d.id).base_revision == 2


def test_only_drafts_with_unsaved_changes_are_listed(store):
    a = store.articles.create(title="t", content="c")
    opened = store.articles.edit(a.id)  # opened, nothing typed
    saved = store.articles.new_draft(title="s", content="x")
    saved.save()
    new = store.articles.new_draft()  # a new article's draft is unsaved from the start
    assert [d.id for d in store.articles.drafts()] == [new.id]
    store.articles.update(a.id, content="changed elsewhere")  # not the drafts' own changes
    store.articles.update(saved.article_id, content="changed elsewhere too")
    assert [d.id for d in store.articles.drafts()] == [new.id]
    opened.title = "typed"
    assert [d.id for d in store.articles.drafts()] == [opened.id, new.id]


def test_a_save_after_the_article_changed_elsewhere_conflicts_and_keeps_the_draft(store):
    d = store.articles.new_draft(title="t", content="v1")
    a = d.save()
    store.articles.update(a.id, content="changed elsewhere")
    d.content = "mine"
    with pytest.raises(nk.ConflictError) as e:
        d.save()
    assert e.value.code == "revision_conflict"
    assert store.articles.get(a.id).content == "changed elsewhere"
    assert store.articles.draft(d.id).content == "mine" and [x.id for x in store.articles.drafts()] == [d.id]


def test_discard_ends_the_editing_session(store):
    d = store.articles.new_draft(content="x")
    a = d.save()
    d.content = "typed after saving, then back"
    d.discard()
    assert store.articles.get(a.id).content == "x"
    with pytest.raises(nk.NotFoundError):
        d.save()
    with pytest.raises(nk.NotFoundError):
        d.content = "late"
    with pytest.raises(nk.NotFoundError):
        store.articles.draft(d.id)


def test_a_crash_after_the_first_save_loses_nothing_typed_since(db_path):
    script = f"""
import os, noteskit as nk
s = nk.Store.open({str(db_path)!r})
d = s.articles.new_draft(title="crash", content="saved")
d.save()
d.content = "typed after the save"
os.kill(os.getpid(), 9)
"""
    assert subprocess.run([sys.executable, "-c", script]).returncode == -9
    with nk.Store.open(db_path) as s:
        [d] = s.articles.drafts()
        assert (d.content, s.articles.get(d.article_id).content) == ("typed after the save", "saved")
        assert d.save().revision == 2


def test_an_unsaved_draft_survives_the_process_being_killed(db_path):
    script = f"""
import os, noteskit as nk
s = nk.Store.open({str(db_path)!r})
d = s.articles.new_draft(title="crash")
d.content = "typed before the crash"
os.kill(os.getpid(), 9)
"""
    proc = subprocess.run([sys.executable, "-c", script])
    assert proc.returncode == -9
    with nk.Store.open(db_path) as s:
        [d] = s.articles.drafts()
        assert (d.title, d.content) == ("crash", "typed before the crash")
        assert d.save().content == "typed before the crash"


def test_draft_text_with_a_nul_or_over_the_limit_is_refused(store):
    d = store.articles.new_draft()
    with pytest.raises(nk.ValidationError):
        d.content = "a\x00b"
    with pytest.raises(nk.ValidationError, match="too long"):
        d.content = "x" * 1_000_001
    assert store.articles.draft(d.id).content == ""
