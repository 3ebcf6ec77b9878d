"""How records look in a notebook (HTML) and on a terminal (ANSI): one place for both.

Records and pages get ``_repr_html_`` from here, so Jupyter shows a page of articles as a table, a
page of messages as a little chat and a page of search hits with the matches highlighted. The
command line highlights matches with :func:`highlight` too.
"""
from __future__ import annotations

import dataclasses
import html
import unicodedata
from datetime import datetime
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple

Span = Tuple[int, int]

_STYLE = ("border-collapse:collapse;font-family:'WenQuanYi Micro Hei','DejaVu Sans',sans-serif;"
          "font-size:13px;text-align:left")
_CELL = "padding:4px 8px;border-bottom:1px solid #ddd;vertical-align:top;text-align:left"
_MARK = "background:#ffe066;color:inherit;padding:0"
CONTENT_LIMIT = 600  # characters of content shown per row in a notebook


def merge_spans(spans: Iterable[Sequence[int]]) -> List[Span]:
    """Sorted, non-overlapping ``(start, end)`` spans (touching or overlapping ones joined; empty ones dropped).

    >>> merge_spans([(5, 7), (0, 2), (1, 3), (7, 8), (9, 9)])
    [(0, 3), (5, 8)]
    """
    merged: List[Span] = []
    for start, end in sorted((int(s[0]), int(s[1])) for s in spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def highlight(text: str, spans: Iterable[Sequence[int]], before: str, after: str,
              escape: Callable[[str], str] = lambda s: s) -> str:
    """``text`` with every span (code-point offsets, as the library reports them) wrapped in ``before``/``after``.

    >>> highlight("今天天气真好", [(2, 4)], "[", "]")
    '今天[天气]真好'
    >>> highlight("a<b", [(1, 2)], "<mark>", "</mark>", escape=html.escape)
    'a<mark>&lt;</mark>b'
    """
    out: List[str] = []
    position = 0
    for start, end in merge_spans(spans):
        start, end = max(start, position), min(end, len(text))
        if start >= end:
            continue
        out += [escape(text[position:start]), before, escape(text[start:end]), after]
        position = end
    out.append(escape(text[position:]))
    return "".join(out)


def _time(value: Optional[datetime]) -> str:
    return "" if value is None else value.astimezone().strftime("%Y-%m-%d %H:%M")


def _text(text: str, spans: Iterable[Sequence[int]] = (), limit: Optional[int] = CONTENT_LIMIT) -> str:
    """Escaped, highlighted text, cut at ``limit`` characters (after the first match when there is one)."""
    spans = merge_spans(spans)
    if limit is not None and len(text) > limit:
        first = spans[0][0] if spans else 0
        begin = max(0, min(first - limit // 4, len(text) - limit))
        cut = text[begin:begin + limit]
        spans = [(s - begin, e - begin) for s, e in spans]
        body = highlight(cut, spans, f'<mark style="{_MARK}">', "</mark>", html.escape)
        return ("…" if begin else "") + body + ("…" if begin + limit < len(text) else "")
    return highlight(text, spans, f'<mark style="{_MARK}">', "</mark>", html.escape)


def _pre(body: str) -> str:
    return f'<div style="white-space:pre-wrap">{body}</div>'


def _article_cells(article: Any, spans: Mapping[str, Sequence[Sequence[int]]]) -> List[str]:
    return [f"#{article.id}", _time(article.created_at),
            f"<b>{_text(article.title, spans.get('title', ()), None)}</b>" + _pre(_text(article.content, spans.get("content", ())))]


def _message_cells(message: Any, spans: Mapping[str, Sequence[Sequence[int]]]) -> List[str]:
    side = "right" if message.from_me else "left"
    colour = "#95ec69" if message.from_me else "#f1f1f1"
    bubble = (f'<div style="text-align:{side}"><span style="display:inline-block;max-width:70%;background:{colour};'
              f'border-radius:8px;padding:4px 10px;text-align:left;white-space:pre-wrap">'
              f'{_text(message.content, spans.get("content", ()))}</span></div>')
    who = "me" if message.from_me else html.escape(getattr(message, "sender", None) or "them")
    return [f"#{message.id}", _time(message.sent_at), who, bubble]


def _row(item: Any) -> List[str]:
    """The cells of one record or search hit (known by its fields, so any record type works)."""
    spans: Mapping[str, Sequence[Sequence[int]]] = getattr(item, "spans", None) or {}
    record = getattr(item, "article", None) or getattr(item, "message", None) or item  # a hit, or a record
    if hasattr(record, "from_me"):
        return _message_cells(record, spans)
    if hasattr(record, "revision") and hasattr(record, "content"):
        return _article_cells(record, spans)
    if hasattr(record, "title"):
        return [f"#{getattr(record, 'id', '')}", _time(getattr(record, "last_activity_at", None)
                                                       or getattr(record, "created_at", None)),
                f"<b>{html.escape(record.title)}</b>"]
    return [html.escape(repr(record))]


def _cell(content: str, last: bool) -> str:
    """A table cell; all but the last (the text) stay on one line."""
    return f'<td style="{_CELL}{"" if last else ";white-space:nowrap"}">{content}</td>'


def html_table(items: Iterable[Any], caption: str = "") -> str:
    """An HTML table of records or search hits, matches highlighted with ``<mark>``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store:
    ...     a = store.articles.create(title="a<b", content="x")
    ...     "a&lt;b" in html_table([a])
    True
    """
    rows = "".join("<tr>" + "".join(_cell(c, last=i == len(cells) - 1) for i, c in enumerate(cells)) + "</tr>"
                   for cells in map(_row, items))
    head = f'<caption style="caption-side:bottom;text-align:left;color:#666">{html.escape(caption)}</caption>' if caption else ""
    return f'<table style="{_STYLE}">{head}{rows}</table>'


def html_page(page: Any) -> str:
    """A :class:`~noteskit.Page` as an HTML table, with how many items it holds and whether more follow."""
    count = len(page.items)
    caption = f"{count} item{'s' if count != 1 else ''}" + (" · more: pass next_cursor as after=" if page.has_more else "")
    return html_table(page.items, caption)


def html_record(record: Any) -> str:
    """One record (or search hit) as a one-row HTML table."""
    return html_table([record])


# ---- repr: records and pages that stay readable in a REPL ------------------------------------------

#: Characters of a text field a record's repr shows; longer text is cut, with its length.
REPR_TEXT_LIMIT = 60
#: Items a page's repr lists, one a line.
REPR_PAGE_ITEMS = 20


def short_text(text: str, limit: int = REPR_TEXT_LIMIT) -> str:
    """The repr of ``text``, cut after about ``limit`` characters (never before a combining mark or
    a joiner, so a character is not split) with "…" and how long it is.

    >>> print(short_text("今天天气真好"))
    '今天天气真好'
    >>> print(short_text("x" * 100, limit=10))
    'xxxxxxxxxx…' (100 characters)
    """
    if len(text) <= limit:
        return repr(text)
    cut = limit
    while cut > 1 and (unicodedata.combining(text[cut]) or text[cut] in "\u200d\ufe0f\ufe0e"
                       or 0x1F3FB <= ord(text[cut]) <= 0x1F3FF or text[cut - 1] == "\u200d"):
        cut -= 1
    return f"{text[:cut] + '…'!r} ({len(text)} characters)"


def record_repr(record: Any) -> str:
    """A record's repr as the dataclass writes it, its text fields cut by :func:`short_text`."""
    fields = ", ".join(f"{f.name}={short_text(v) if isinstance(v, str) else repr(v)}"
                       for f in dataclasses.fields(record) for v in [getattr(record, f.name)])
    return f"{type(record).__name__}({fields})"


def spans_repr(spans: Mapping[str, Sequence[Any]], limit: int = 5) -> str:
    """A hit's spans for its repr: at most ``limit`` per field, then how many more.

    >>> spans_repr({"content": [(i, i + 1) for i in range(8)]})
    "{'content': [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), ... 3 more]}"
    """
    def one(found: Sequence[Any]) -> str:
        shown = ", ".join(map(repr, found[:limit]))
        return f"[{shown}{f', ... {len(found) - limit} more' if len(found) > limit else ''}]"

    return "{" + ", ".join(f"{name!r}: {one(found)}" for name, found in spans.items()) + "}"


def page_repr(page: Any) -> str:
    """A page's repr: one item a line (at most :data:`REPR_PAGE_ITEMS`), then the cursor."""
    items = "".join(f"\n  {item!r}," for item in page.items[:REPR_PAGE_ITEMS])
    more = len(page.items) - REPR_PAGE_ITEMS
    if more > 0:
        items += f"\n  ... {more} more,"
    return f"Page(items=[{items}{chr(10) if items else ''}], next_cursor={page.next_cursor!r}, has_more={page.has_more!r})"


def html_conversation(conversation: Any, png: Optional[bytes]) -> str:
    """A conversation in a notebook: its title and times, and the picture of its chat when it has messages."""
    import base64

    head = (f"<b>{html.escape(conversation.title)}</b> <span style=\"color:#666\">#{conversation.id} · "
            f"started {_time(conversation.created_at)} · last activity {_time(conversation.last_activity_at)}</span>")
    picture = (f'<br><img src="data:image/png;base64,{base64.b64encode(png).decode()}" alt="the conversation as the chat '
               f'app drew it">' if png else '<br><i style="color:#666">no messages yet</i>')
    return f'<div style="{_STYLE}">{head}{picture}</div>'
