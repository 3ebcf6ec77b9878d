"""One search over articles and messages (``store.search``), and snippets of hits (``hit.snippet()``)."""
from __future__ import annotations

import json
from ctypes import byref, c_int64, c_void_p, string_at
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple, Union, cast

from . import _arrow, _ffi
from ._convert import article_hits, message_hits, ms_from_time, page
from .errors import InvalidArgumentError, ValidationError
from .selection import NO_TIME

if TYPE_CHECKING:
    from .models import MessageHit, Page, SearchHit
    from .store import Store

Hit = Union["SearchHit", "MessageHit"]
KINDS = {"articles": _ffi.NK_KIND_ARTICLES, "messages": _ffi.NK_KIND_MESSAGES}


@dataclass(frozen=True)
class Snippet:
    """A one-line excerpt of a hit's text around its first match: ``text``, and ``spans``, the
    ``(start, end)`` code-point offsets of the matches inside it (so ``text[start:end]`` is a match).

    Made by :meth:`SearchHit.snippet` and :meth:`MessageHit.snippet`. ``width`` counts characters
    as a reader sees them (grapheme clusters: an emoji ZWJ sequence, a flag, a letter with its
    combining marks, a CJK character are one each, and are never cut); an "…" marks each end where
    the text was cut, on top of the width. Line breaks and tabs show as spaces.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     _ = store.articles.create(title="Trip", content="We packed early. " * 5 + "The 天气 was fine. " + "Then home. " * 5)
    ...     s = store.articles.search("天气")[0].snippet(width=20)
    >>> s
    Snippet(text='…rly. The 天气 was fine…', spans=[(10, 12)])
    >>> s.text[10:12]
    '天气'
    """

    text: str
    spans: List[Tuple[int, int]]

    def __str__(self) -> str:
        return self.text


def snippet(text: str, spans: Iterable[Sequence[int]], width: int) -> Snippet:
    """The snippet of ``text`` around the first of ``spans`` (a hit's code-point offsets), computed
    by the library (see :class:`Snippet`). ``width=0`` is the empty snippet; a negative width is a
    :class:`ValidationError`; a width smaller than the match shows the match's first ``width``
    characters, then "…"."""
    if type(width) is not int:  # bool and float are refused as well
        raise InvalidArgumentError(f"width must be an int, got {type(width).__name__}", field="width")
    if width < 0:
        raise ValidationError(f"width must be 0 or more characters, got {width}", field="width")
    flat = [int(v) for span in spans for v in (span[0], span[1])]
    pairs = (c_int64 * len(flat))(*flat) if flat else None
    out = c_void_p()
    _ffi.check(_ffi.nk_snippet(_ffi.text(text, "text"), pairs, len(flat) // 2, min(width, 2 ** 31 - 1), byref(out)))
    data = _ffi.take_json(out.value)
    return Snippet(data["text"], [(s, e) for s, e in data["spans"]])


def kinds_code(kinds: Union[str, Sequence[str]]) -> int:
    """``kinds=`` as the library takes it: a bit for ``"articles"``, one for ``"messages"``."""
    names = (kinds,) if isinstance(kinds, str) else kinds
    try:
        names = tuple(names)
    except TypeError:
        raise InvalidArgumentError(f"kinds must be a tuple of \"articles\" and/or \"messages\", got {type(kinds).__name__}",
                                   field="kinds") from None
    code = 0
    for name in names:
        if name not in KINDS:
            raise ValidationError(f"kinds must name \"articles\" and/or \"messages\", got {name!r}", field="kinds")
        code |= KINDS[name]
    if not code:
        raise ValidationError("kinds must name at least one of \"articles\" and \"messages\"", field="kinds")
    return code


BOTH = ("articles", "messages")
_ARTICLE, _MESSAGE = b"am"  # the order's letters (bytes: read as ints)
_MEMORY = _arrow.MEMORY


def search(store: "Store", query: str, kinds: Union[str, Sequence[str]] = BOTH,
           since: Optional[datetime] = None, until: Optional[datetime] = None, limit: int = 20,
           after: Optional[str] = None) -> "Page[Hit]":
    """See :meth:`noteskit.Store.search`."""
    code = _ffi.NK_KIND_ARTICLES | _ffi.NK_KIND_MESSAGES if type(kinds) is tuple and kinds == BOTH else kinds_code(kinds)
    start = NO_TIME if since is None else ms_from_time(since, "since")
    end = NO_TIME if until is None else ms_from_time(until, "until")
    # The message batch comes in a second ArrowArray/ArrowSchema pair, whose pointer takes the order.
    messages_out, out = _arrow._out_second, _arrow._out
    messages_out.cursor.value = out.cursor.value = None
    if _ffi.nk_store_search(store.handle, _ffi.text(query, "query"), code, start, end, _ffi.integer(limit, "limit"),
                            _ffi.optional_text(after, "after"), messages_out.cursor_ref, *messages_out.refs, *out.page_refs):
        raise _ffi.last_error()
    order_pointer, cursor_pointer = messages_out.cursor.value, out.cursor.value
    try:
        try:
            message_columns, n_messages = _arrow._take(messages_out)
        finally:
            article_columns, n_articles = _arrow._take(out)
        # (the order matters on a page of both kinds only; it has a letter per hit: read in place)
        letters = _MEMORY[order_pointer:order_pointer + n_articles + n_messages].tobytes() \
            if order_pointer and n_articles and n_messages else b""
        next_cursor = string_at(cursor_pointer).decode() if cursor_pointer else None
    finally:
        if order_pointer:
            _ffi.nk_free(order_pointer)
        if cursor_pointer:
            _ffi.nk_free(cursor_pointer)
    articles, messages = article_hits(article_columns, n_articles), message_hits(message_columns, n_messages)
    if not letters:  # (one kind's hits: the page's items as they are)
        return page(cast(List[Hit], articles or messages), next_cursor)
    # Each letter says which kind's next hit comes next: its iterator, and next() of it, by C-level maps.
    kinds_in_order = map({_ARTICLE: iter(articles), _MESSAGE: iter(messages)}.__getitem__, letters)
    return page(cast(List[Hit], [*map(next, kinds_in_order)]), next_cursor)


__all__ = ["Snippet", "snippet", "search"]
