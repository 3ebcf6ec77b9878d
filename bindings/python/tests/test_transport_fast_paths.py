"""The fast paths of the read transport give exactly what the plain paths give.

Pages and selections are decoded column by column (records filled slot by slot, short batches row by
row, integer columns unpacked with cached ``struct`` formats up to 1 024 rows and by a memory cast
beyond, all-null columns at once, a never-edited article's two times one object); ``get`` decodes a
packed row. Whatever path a record takes, it must equal the record read any other way, for hostile
text too.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import noteskit as nk

UTC = timezone.utc
HOSTILE = [
    "plain ascii",
    "今天天气真好，我们去公园散步",
    "👨‍👩‍👧 family, ❤️ and 🦄",
    "e\u0301 combining, \u200b zero width, \u202e right-to-left override",
    "\x01\x1b[31m controls \x7f \x85 \u2028 line separator",
    "\uffff and \U0010ffff at the edges",
    "x" * 1_000_000,                       # 1 MB body
    "长" * 350_000,                         # 1 MB of CJK
    "'; DROP TABLE articles; -- %_\\*",
    "  leading and trailing spaces  ",
]


def as_fields(record: object) -> tuple:
    return tuple(getattr(record, name) for name in record.__slots__)  # type: ignore[attr-defined]


@pytest.fixture()
def store(tmp_path):
    with nk.Store.open(tmp_path / "fast.db") as s:
        yield s


def test_a_page_of_any_size_equals_the_articles_read_one_by_one(store):
    base = datetime(2024, 1, 1, tzinfo=UTC)
    made = store.articles.create_many([{"title": f"{k} {t[:50]}", "content": t, "created_at": base + timedelta(minutes=k)}
                                       for k, t in enumerate(HOSTILE * 2)])
    for limit in (1, 2, 3, 4, 5, 20):
        page = store.articles.list(limit=limit)
        assert len(page) == limit
        assert [as_fields(a) for a in page] == [as_fields(store.articles.get(a.id)) for a in page]
        assert all(type(a) is nk.Article for a in page)
    everything = list(store.articles.iter(batch_size=7))
    assert sorted(as_fields(a) for a in everything) == sorted(as_fields(a) for a in made)


def test_edited_and_unedited_articles_on_one_page_keep_their_own_times(store):
    made = store.articles.create_many([{"title": f"t{k}", "content": "c"} for k in range(6)])
    edited = store.articles.update(made[2].id, content="changed")
    assert edited.updated_at >= edited.created_at
    page = store.articles.list(limit=20).items
    by_id = {a.id: a for a in page}
    for a in made:
        got = by_id[a.id]
        assert got == store.articles.get(a.id)
        if a.id != edited.id:
            assert got.updated_at == got.created_at == a.created_at
    assert by_id[edited.id].updated_at == edited.updated_at
    assert by_id[edited.id].revision == 2


def test_history_pages_with_no_some_and_all_senders_equal_the_messages_read_one_by_one(store):
    conv = store.conversations.create("senders")
    base = datetime(2024, 1, 1, tzinfo=UTC)
    rows = []
    for k, text in enumerate(HOSTILE * 3):
        # the newest 8 (the first three pages) have no sender, the older ones every other one
        sender = None if k >= len(HOSTILE) * 3 - 8 else ("Ann 🦄" if k % 2 else None)
        rows.append({"content": text, "from_me": k % 3 == 0, "sent_at": base + timedelta(seconds=k), "sender": sender})
    store.messages.insert_many(conv.id, rows)
    cursor = None
    seen = []
    for limit in (4, 3, 1, 50):
        page = store.messages.history(conv.id, limit=limit, before=cursor)
        assert [as_fields(m) for m in page] == [as_fields(store.messages.get(m.id)) for m in page]
        seen.extend(page.items)
        cursor = page.next_cursor
    assert [m.sender for m in sorted(seen, key=lambda m: m.id)] == [r["sender"] for r in rows]
    assert [m.content for m in sorted(seen, key=lambda m: m.id)] == [r["content"] for r in rows]


def test_a_selection_of_more_than_a_thousand_rows_equals_the_history_walked_back(store):
    conv = store.conversations.create("long")
    base = datetime(2024, 1, 1, tzinfo=UTC)
    store.messages.insert_many(conv.id, [{"content": f"m{k} 天气 🦄", "from_me": k % 2 == 0,
                                          "sent_at": base + timedelta(seconds=k)} for k in range(2_500)])
    walked = []
    cursor = None
    while True:
        page = store.messages.history(conv.id, limit=1000, before=cursor)
        walked[:0] = page.items
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [as_fields(m) for m in store.messages.select(conversation=conv.id)] == [as_fields(m) for m in walked]


def test_search_pages_carry_the_same_articles_as_get(store):
    store.articles.create_many([{"title": f"天气 {k}", "content": t} for k, t in enumerate(HOSTILE)])
    for limit in (1, 3, 20):
        hits = store.articles.search("天气", limit=limit)
        assert [as_fields(h.article) for h in hits] == [as_fields(store.articles.get(h.article.id)) for h in hits]
        assert all(h.spans["title"] == [(0, 2)] for h in hits)


def test_pages_are_ordinary_pages(store):
    store.articles.create_many([{"title": "t", "content": "c"} for _ in range(3)])
    page = store.articles.list(limit=2)
    assert page == nk.Page(page.items, page.next_cursor, True)
    last = store.articles.list(limit=2, after=page.next_cursor)
    assert last == nk.Page(last.items, None, False) and not last.has_more
    assert repr(last).startswith("Page(items=[\n  Article(")  # one item a line (issue 13: readable reprs)


def test_history_of_a_missing_conversation_is_not_found_and_of_an_empty_one_is_an_empty_page(store):
    empty = store.conversations.create("nobody wrote")
    page = store.messages.history(empty.id)
    assert page.items == [] and page.next_cursor is None and not page.has_more
    gone = store.conversations.create("deleted")
    gone.send("hello")
    gone.delete()
    for missing in (gone.id, 10_000):
        with pytest.raises(nk.NotFoundError):
            store.messages.history(missing)


def test_get_gives_the_same_article_whether_its_row_fits_the_reused_buffer_or_not(store):
    from noteskit._arrow import ROW_BUFFER_SIZE

    # A packed article row: 64 bytes of numbers and lengths, the 36-byte uid, the title, the content.
    room = ROW_BUFFER_SIZE - 64 - 36 - len("t".encode())
    contents = ["x" * (room - 1), "x" * room, "x" * (room + 1), "长" * (room // 3), "长" * (room // 3 + 1)] + HOSTILE
    made = store.articles.create_many([{"title": "t", "content": c} for c in contents])
    got = [store.articles.get(a.id) for a in made]      # each get reuses (or outgrows) the same buffer
    assert [as_fields(a) for a in got] == [as_fields(a) for a in made]
    by_page = {a.id: a for a in store.articles.list(limit=len(made)).items}
    assert [as_fields(by_page[a.id]) for a in got] == [as_fields(a) for a in got]
    assert got[0].content == "x" * (room - 1) and got[1].content == "x" * room  # not overwritten by later gets


def test_gets_on_many_threads_at_once_each_get_their_own_article(store):
    from concurrent.futures import ThreadPoolExecutor

    made = store.articles.create_many([{"title": f"t{k}", "content": HOSTILE[k % len(HOSTILE)][:5000] + str(k)}
                                       for k in range(200)])

    def read_all(offset: int) -> list:
        return [as_fields(store.articles.get(made[(k + offset) % len(made)].id)) for k in range(400)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(read_all, range(0, 200, 50)))
    for offset, rows in zip(range(0, 200, 50), results):
        assert rows == [as_fields(made[(k + offset) % len(made)]) for k in range(400)]


def test_get_on_a_closed_store_is_a_closed_error_and_of_a_missing_id_not_found(tmp_path):
    s = nk.Store.open(tmp_path / "closing.db")
    a = s.articles.create(title="t", content="c")
    with pytest.raises(nk.NotFoundError):
        s.articles.get(a.id + 1)
    s.close()
    with pytest.raises(nk.ClosedError):
        s.articles.get(a.id)


def test_uids_come_back_as_the_lowercase_text_they_were_given_whatever_their_digits(store):
    import uuid

    given = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
             "01234567-89ab-cdef-0123-456789ABCDEF", "a9b8c7d6-e5f4-0312-2130-4f5e6d7c8b9a"]
    given += [str(uuid.UUID(int=random_bits)) for random_bits in (1 << 127, (1 << 64) - 1, 0x0F1E2D3C4B5A69788796A5B4C3D2E1F0)]
    made = store.articles.create_many([{"title": f"t{k}", "content": "c", "uid": u} for k, u in enumerate(given)])
    made += store.articles.create_many([{"title": "fresh", "content": "c"} for _ in range(50)])
    expected = [str(uuid.UUID(u)) for u in given] + [a.uid for a in made[len(given):]]
    assert [a.uid for a in made] == expected
    assert [store.articles.get(a.id).uid for a in made] == expected
    by_page = {a.id: a.uid for a in store.articles.list(limit=len(made)).items}
    assert [by_page[a.id] for a in made] == expected
    assert all(str(uuid.UUID(u)) == u for u in expected)
