"""Records go through pickle (multiprocessing, caches) and copy and come back equal."""
from __future__ import annotations

import copy
import pickle

import pytest

import noteskit as nk


def round_trips(record: object) -> list:
    return [pickle.loads(pickle.dumps(record, protocol)) for protocol in range(pickle.HIGHEST_PROTOCOL + 1)] + [
        copy.copy(record), copy.deepcopy(record)]


def test_articles_and_messages_come_back_equal_from_pickle_and_copy(store: nk.Store) -> None:
    article = store.articles.create(title="Weather 🌦", content="今天天气真好\n" * 50)
    conv = store.conversations.create("Alice")
    mine, theirs = conv.send("see you at 8"), conv.receive("ok 👍")
    imported = store.messages.insert_many(conv.id, [{"content": "from a group", "from_me": False, "sender": "Bob"}])[0]
    for record in (article, store.articles.get(article.id), store.articles.list()[0], mine, theirs, imported,
                   conv.history()[0]):
        for back in round_trips(record):
            assert back == record and type(back) is type(record)
            with pytest.raises(AttributeError):  # still frozen
                back.id = 7  # type: ignore[misc]


def test_search_hits_pages_and_changes_come_back_equal_from_pickle(store: nk.Store) -> None:
    store.articles.create(title="Weather", content="今天天气真好")
    store.conversations.create("Alice").send("good weather")
    for value in (store.articles.search("weather"), store.messages.search("weather"), store.search("weather"),
                  store.changes(since=0)):
        for back in round_trips(value):
            assert back == value


def test_a_pickled_conversation_comes_back_unbound_and_a_copy_stays_bound(store: nk.Store) -> None:
    conv = store.conversations.create("Alice")
    back = pickle.loads(pickle.dumps(conv))
    assert back == conv
    with pytest.raises(nk.InvalidArgumentError, match="not bound to a store"):
        back.send("hello")
    assert store.conversations.get(back.id).send("hello").conversation_id == conv.id
    for same in (copy.copy(conv), copy.deepcopy(conv)):
        assert same.send("again").conversation_id == conv.id
