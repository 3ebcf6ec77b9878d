"""Many Python threads on one store at once (ctypes drops the GIL, so they really run in parallel).

Each thread runs a random mix of operations on its own records — create, save a draft, update,
delete, get, page through the whole list, and, where the library has them, send a message, search
and measure — and checks every read against what it knows it wrote:

- a thread's own article reads back exactly as it last saved it (title, content, revision);
- every page is newest first with no row twice, and paging never skips a row this thread owns;
- a search for a token only this thread writes finds exactly this thread's live articles with it;
- a conversation's history is exactly what this thread sent, in order;
- a measured height is a positive number.

At the end the totals are exact: live articles, messages, and the article changes in the feed.
"""
from __future__ import annotations

import random
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import noteskit as nk


@dataclass
class Worker:
    index: int
    rng: random.Random
    articles: Dict[int, tuple] = field(default_factory=dict)  # id -> (title, content, revision, has_token, created_at)
    article_writes: int = 0                                   # creates + real updates + deletes
    sent: List[str] = field(default_factory=list)
    conversation: Any = None
    layout: Any = None
    ops: Dict[str, int] = field(default_factory=dict)

    @property
    def token(self) -> str:
        return f"zq{self.index}token"


def _features(store: nk.Store) -> Dict[str, bool]:
    return {
        "send": hasattr(store, "conversations"),
        "search": hasattr(store.articles, "search"),
        "measure": hasattr(store, "layout"),
    }


def _content(w: Worker, n: int, with_token: bool) -> str:
    words = ["天气", "weather", "%_*", "\"q\"", "😀", "NEAR", "line\nbreak"]
    body = " ".join(w.rng.choice(words) for _ in range(w.rng.randrange(1, 12)))
    return f"{body} {w.token}" if with_token else f"{body} n{n}"


def _check_own(store: nk.Store, w: Worker) -> None:
    if not w.articles:
        return
    id = w.rng.choice(list(w.articles))
    a = store.articles.get(id)
    title, content, revision, _, _ = w.articles[id]
    assert (a.title, a.content, a.revision) == (title, content, revision), (a, w.articles[id])


def _op_create(store: nk.Store, w: Worker, n: int) -> None:
    token = w.rng.random() < 0.5
    a = store.articles.create(title=f"w{w.index}-{n}", content=_content(w, n, token))
    w.articles[a.id] = (a.title, a.content, a.revision, token, a.created_at)
    w.article_writes += 1


def _op_draft(store: nk.Store, w: Worker, n: int) -> None:
    d = store.articles.new_draft(title=f"d{w.index}-{n}")
    token = w.rng.random() < 0.5
    d.content = _content(w, n, token)
    a = d.save()
    w.articles[a.id] = (a.title, a.content, a.revision, token, a.created_at)
    w.article_writes += 1


def _op_update(store: nk.Store, w: Worker, n: int) -> None:
    if not w.articles:
        return _op_create(store, w, n)
    id = w.rng.choice(list(w.articles))
    title, content, revision, _, _ = w.articles[id]
    token = w.rng.random() < 0.5
    a = store.articles.update(id, content=_content(w, n, token), expected_revision=revision)
    w.articles[id] = (a.title, a.content, a.revision, token, a.created_at)
    w.article_writes += a.revision != revision


def _op_delete(store: nk.Store, w: Worker, n: int) -> None:
    if len(w.articles) < 5:
        return _op_create(store, w, n)
    id = w.rng.choice(list(w.articles))
    store.articles.delete(id)
    del w.articles[id]
    w.article_writes += 1
    try:
        store.articles.get(id)
        raise AssertionError(f"article {id} is still there after its delete returned")
    except nk.NotFoundError:
        pass


def _op_page(store: nk.Store, w: Worker, n: int) -> None:
    """Reads up to four pages: newest first, no row twice, none of this thread's rows in range skipped."""
    mine_before = {id: v[4] for id, v in w.articles.items()}
    seen: set = set()
    last: Optional[tuple] = None
    after = None
    for _ in range(4):
        page = store.articles.list(limit=w.rng.choice([7, 50, 200]), after=after)
        for a in page.items:
            key = (a.created_at, a.id)
            assert last is None or key < last, f"page order broken: {key} after {last}"
            assert a.id not in seen, f"article {a.id} seen twice while paging"
            seen.add(a.id)
            last = key
        if not page.has_more:
            last = None  # reached the end: every row was in range
            break
        after = page.next_cursor
    missing = [id for id, created in mine_before.items() if id not in seen and (last is None or (created, id) > last)]
    assert not missing, f"paging skipped this thread's articles {sorted(missing)[:5]}"


def _op_get(store: nk.Store, w: Worker, n: int) -> None:
    _check_own(store, w)
    assert store.articles.count() >= len(w.articles)


def _op_send(store: nk.Store, w: Worker, n: int) -> None:
    text = f"message {n} from {w.index} 😀"
    m = w.conversation.send(text)
    assert m.content == text and m.from_me
    w.sent.append(text)
    if w.rng.random() < 0.1:
        history = [m.content for m in store.messages.history(w.conversation.id, limit=50).items]
        assert history == w.sent[-50:], "the history is not exactly what this thread sent"


def _op_search(store: nk.Store, w: Worker, n: int) -> None:
    expected = {id for id, v in w.articles.items() if v[3]}
    found = set()
    after = None
    while True:
        page = store.articles.search(w.token, field="content", limit=100, after=after)
        for hit in page.items:
            found.add(hit.article.id)
            assert w.token in hit.article.content
        if not page.has_more:
            break
        after = page.next_cursor
    assert found == expected, f"search for {w.token}: {len(found)} hits, expected {len(expected)}"


def _op_measure(store: nk.Store, w: Worker, n: int) -> None:
    if not w.articles:
        return _op_create(store, w, n)
    layout = w.layout  # type: ignore[attr-defined]
    height = layout.article_height(w.rng.choice(list(w.articles)))
    assert height > 0


OPERATIONS: Dict[str, Callable[[nk.Store, Worker, int], None]] = {
    "create": _op_create, "draft": _op_draft, "update": _op_update, "delete": _op_delete,
    "page": _op_page, "get": _op_get, "send": _op_send, "search": _op_search, "measure": _op_measure,
}
WEIGHTS = {"create": 20, "draft": 10, "update": 15, "delete": 5, "page": 2, "get": 20, "send": 15, "search": 6, "measure": 7}


def _worker(store: nk.Store, w: Worker, ops: int, features: Dict[str, bool], errors: List[BaseException]) -> None:
    try:
        names = [n for n in OPERATIONS if features.get(n, True)]
        weights = [WEIGHTS[n] for n in names]
        if features["send"]:
            w.conversation = store.conversations.create(f"thread {w.index}")
        if features["measure"]:
            w.layout = store.layout(width=375)  # type: ignore[attr-defined]
        for n in range(ops):
            name = w.rng.choices(names, weights)[0]
            OPERATIONS[name](store, w, n)
            w.ops[name] = w.ops.get(name, 0) + 1
    except BaseException as e:  # reported by the main thread
        errors.append(e)


def run(threads: int = 8, ops: int = 10_000, seed: int = 8, path: Optional[Path] = None) -> Dict[str, Any]:
    """Runs `threads` workers of `ops` operations each on one store file; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="nk-threads-") as tmp:
        db = path or Path(tmp) / "threads.db"
        with nk.Store.open(db) as store:
            features = _features(store)
            workers = [Worker(i, random.Random(seed * 1000 + i)) for i in range(threads)]
            errors: List[BaseException] = []
            pool = [threading.Thread(target=_worker, args=(store, w, ops, features, errors)) for w in workers]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            if errors:
                raise errors[0]
            live = sum(len(w.articles) for w in workers)
            assert store.articles.count() == live, f"count {store.articles.count()} != {live} live articles"
            for w in workers:
                for id, (title, content, revision, _, _) in w.articles.items():
                    a = store.articles.get(id)
                    assert (a.title, a.content, a.revision) == (title, content, revision)
            feed = 0
            since = 0
            while True:
                changes = store.changes(since=since, limit=1000)
                if not changes:
                    break
                feed += sum(c.entity == "article" for c in changes)
                since = changes[-1].seq
            writes = sum(w.article_writes for w in workers)
            assert feed == writes, f"{feed} article changes in the feed for {writes} writes"
            messages = 0
            if features["send"]:
                for w in workers:
                    history = [m.content for m in _all_history(store, w.conversation.id)]
                    assert history == w.sent, f"thread {w.index}: history differs from what it sent"
                    messages += len(history)
    total: Dict[str, int] = {}
    for w in workers:
        for name, k in w.ops.items():
            total[name] = total.get(name, 0) + k
    return {"threads": threads, "operations": sum(total.values()), "live_articles": live, "article_changes": feed,
            "messages": messages, **{f"op_{k}": v for k, v in sorted(total.items())}, "crashes": 0, "lost_writes": 0}


def _all_history(store: nk.Store, conversation_id: int) -> List[Any]:
    pages = []
    before = None
    while True:
        page = store.messages.history(conversation_id, limit=1000, before=before)
        pages.append(page.items)
        if not page.has_more:
            break
        before = page.next_cursor
    return [m for items in reversed(pages) for m in items]


if __name__ == "__main__":
    import argparse

    from .common import show

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--ops", type=int, default=10_000)
    args = parser.parse_args()
    show("threads", run(args.threads, args.ops))
