"""Imports, create_many, insert_many and sends share one insert path (issue 11, item 5): records
go into the store in batches, their search postings are built on a second thread while the
transaction goes on, and the result is the same as writing them one at a time.

Every check here compares with an oracle (a scan in Python, or the index rebuilt from the rows).
"""
from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk

import search_oracle as oracle

BASE = datetime(2026, 3, 1, tzinfo=timezone.utc)
WORDS = ["weather", "公园", "散步", "Straße", "rain", "今天", "fox", "ÉCOLE", "麒麟", "tea"]


def text(i: int, n: int = 6) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] + str((i + k) % 13) for k in range(n))


def varints(data: bytes):
    value = shift = 0
    for b in data:
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            yield value
            value = shift = 0


def postings(path, through=None):
    """Every gram of both indexes with its ids (blocks: first id and gaps; tail: plain ids),
    whatever rows they are split into, up to each kind's indexed-through id (or ``through``'s);
    each gram's document frequency must be its number of ids."""
    db = sqlite3.connect(path)
    db.text_factory = bytes
    if through is None:
        through = {kind: db.execute("SELECT value FROM meta WHERE key = ?", (f"{kind}_search_through",)).fetchone()[0]
                   for kind in ("article", "message")}
    out = {}
    for kind in ("article", "message"):
        ids = {}
        for gram, data in db.execute(f"SELECT gram, ids FROM {kind}_blocks ORDER BY gram, first"):
            last = 0
            for gap in varints(bytes(data)):
                last += gap
                ids.setdefault(gram, []).append(last)
        for gram, df, tail in db.execute(f"SELECT gram, df, tail FROM {kind}_grams"):
            ids.setdefault(gram, []).extend(varints(bytes(tail)))
            assert df == len(ids[gram]), (kind, gram)
            kept = [i for i in ids[gram] if i <= through[kind]]
            if kept:
                out[(kind, gram)] = kept
    db.close()
    return out, through


def rebuilt_index_equals(store, path) -> bool:
    """The index as the writes left it holds what the index rebuilt from the stored rows holds
    (for the records it has taken in: later ones are pending)."""
    before, through = postings(path)
    store.reindex()
    return postings(path, through)[0] == before


def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "noteskit", "version": 1}) + "\n")
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def article_record(i: int) -> dict:
    when = (BASE + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
    return {"type": "article", "uid": f"00000000-0000-4000-8000-{i:012d}", "title": f"t{i} {WORDS[i % 10]}",
            "content": text(i), "created_at": when, "updated_at": when, "revision": 1 + i % 3}


def test_a_large_import_is_found_by_every_search_and_its_index_equals_a_rebuild(tmp_path):
    path = tmp_path / "s.db"
    source = tmp_path / "a.jsonl"
    write_jsonl(source, [article_record(i) for i in range(5_000)])
    with nk.Store.open(path) as store:
        store.articles.create("before", "weather 今天 pending from an earlier write")  # pending when the import starts
        report = store.import_(source)
        assert report.created == 5_000 and report.skipped == 0
        stored = list(store.articles.iter())
        for q in ("weather", "公园散", "straße", "t4999", "麒"):
            expected = oracle.search(stored, q, "any", False)
            got = [(h.article.id, h.spans) for h in store.articles.search_iter(q)]
            assert got == expected, q
        assert rebuilt_index_equals(store, path)


def test_an_import_stopped_by_a_bad_record_half_way_writes_nothing(tmp_path):
    source = tmp_path / "a.jsonl"
    records = [article_record(i) for i in range(3_000)]
    records[2_100]["title"] = "   "
    write_jsonl(source, records)
    with nk.Store.open(tmp_path / "s.db") as store:
        store.articles.create("kept", "the one article before")
        changes = store.changes(since=0)
        with pytest.raises(nk.FormatError) as e:
            store.import_(source)
        assert e.value.line == 2_102 and e.value.field == "title"
        assert store.articles.count() == 1
        assert store.changes(since=0) == changes
        assert [h.article.title for h in store.articles.search_iter("weather")] == []


def test_reimporting_over_a_batch_with_some_stored_records_counts_each_outcome_in_file_order(tmp_path):
    first = tmp_path / "first.jsonl"
    second = tmp_path / "second.jsonl"
    write_jsonl(first, [article_record(i) for i in range(0, 1_200, 2)])  # every even one stored
    changed = [article_record(i) for i in range(1_200)]
    for r in changed[::3]:
        r["content"] += " edited"
    write_jsonl(second, changed)
    with nk.Store.open(tmp_path / "s.db") as store:
        store.import_(first)
        report = store.import_(second, on_conflict="skip")
        stored_even = len(range(0, 1_200, 2))
        assert report.created == 1_200 - stored_even and report.skipped == stored_even
        assert [s.line for s in report.skips] == sorted(s.line for s in report.skips)
        edited_even = {i for i in range(0, 1_200, 2) if i % 3 == 0}
        reasons = {s.line - 2: s.reason for s in report.skips}
        assert all(('on_conflict="skip"' in reasons[i]) == (i in edited_even) for i in range(0, 1_200, 2))
        assert store.articles.count() == 1_200


def test_messages_imported_in_batches_keep_their_skips_and_the_conversations_activity(tmp_path):
    source = tmp_path / "c.jsonl"
    conv = {"type": "conversation", "uid": "10000000-0000-4000-8000-000000000001", "title": "Alice",
            "created_at": "2026-01-01T00:00:00Z"}
    messages = [{"type": "message", "uid": f"20000000-0000-4000-8000-{i:012d}", "conversation_uid": conv["uid"],
                 "content": text(i, 3), "from_me": i % 2 == 0,
                 "sent_at": (BASE + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")} for i in range(1_500)]
    write_jsonl(source, [conv] + messages)
    with nk.Store.open(tmp_path / "s.db") as store:
        assert store.import_(source).created == 1_501
        (c,) = list(store.conversations)
        assert c.last_activity_at == BASE + timedelta(seconds=1_499)
        history = list(store.messages.select(conversation=c.id))
        assert [m.content for m in history] == [m["content"] for m in messages]
        again = store.import_(source)
        assert again.created == 0 and again.skipped == 1_501
        assert {s.reason for s in again.skips} == {"the store holds it already, unchanged"}


def test_bulk_inserts_and_sends_in_one_store_leave_an_index_equal_to_a_rebuild(tmp_path):
    path = tmp_path / "s.db"
    with nk.Store.open(path) as store:
        conv = store.conversations.create("bulk")
        for i in range(300):
            conv.send(text(i, 2))  # pending, not folded yet
        store.messages.insert_many(conv.id, [{"content": text(i, 4), "from_me": bool(i % 2)} for i in range(7_000)])
        store.articles.create_many([{"title": f"a{i}", "content": text(i)} for i in range(4_500)])
        for i in range(700):
            conv.receive(text(i + 1, 3))
        stored = list(store.messages.select())
        for q in ("weather", "散步", "tea1"):
            expected = oracle.search_messages(stored, q)
            assert [(h.message.id, h.spans) for h in store.messages.search_iter(q)] == expected, q
        assert rebuilt_index_equals(store, path)


def test_a_duplicate_uid_in_a_large_create_many_names_its_record_and_writes_nothing(store):
    existing = store.articles.create("x", "y")
    records = [{"title": f"t{i}", "content": "c"} for i in range(200)]
    records[130]["uid"] = existing.uid
    with pytest.raises(nk.ConflictError) as e:
        store.articles.create_many(records)
    assert e.value.field == "uid" and e.value.line == 130 and e.value.code == "uid_exists"
    records[130]["uid"] = "30000000-0000-4000-8000-000000000000"
    records[170]["uid"] = "30000000-0000-4000-8000-000000000000"
    with pytest.raises(nk.ConflictError) as e:
        store.articles.create_many(records)
    assert e.value.line == 170
    assert store.articles.count() == 1


@pytest.mark.parametrize("bad", ["stored uid", "repeated uid", "blank title"])
def test_a_bad_row_in_the_middle_of_an_arrow_batch_writes_nothing(tmp_path, bad):
    pa = pytest.importorskip("pyarrow")
    path = tmp_path / "s.db"
    with nk.Store.open(path) as store:
        existing = store.articles.create("kept", "weather 公园")
        seq = store.last_change_seq()
        n, middle = 3_000, 1_700
        titles = [f"t{i}" for i in range(n)]
        uids = [None] * n
        if bad == "stored uid":
            uids[middle] = existing.uid
        elif bad == "repeated uid":
            uids[40] = uids[middle] = "30000000-0000-4000-8000-000000000000"
        else:
            titles[middle] = "  "
        table = pa.table({"title": titles, "content": [text(i) for i in range(n)], "uid": pa.array(uids, pa.string())})
        with pytest.raises((nk.ConflictError, nk.ValidationError)) as e:
            store.articles.create_many(table)
        assert e.value.line == middle
        assert store.articles.count() == 1
        assert [h.article.id for h in store.articles.search_iter("weather")] == [existing.id]
        assert store.last_change_seq() == seq
        assert rebuilt_index_equals(store, path)
        # The rows after the failure go in as usual, numbered on from the stored one.
        made = store.articles.create_many(pa.table({"title": titles[:5], "content": [text(i) for i in range(5)]}))
        assert [a.id for a in made] == list(range(existing.id + 1, existing.id + 6))
