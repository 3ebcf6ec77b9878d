"""Layout: text measured with Pango, article rows and chat bubbles, cached heights, row offsets,
pictures, and the keyboard and search-panel interaction models.

>>> import noteskit as nk
>>> nk.measure_text("今天天气真好", max_width=300).line_count
1
>>> with nk.Store.memory() as store:
...     a = store.articles.create(title="2026-11-29", content="今天天气真好")
...     with store.layout(width=375) as lay:
...         lay.article_height(a.id) == lay.article_height(a.id)
True
"""
from __future__ import annotations

import json
import os
from ctypes import byref, c_int32, c_int64, c_void_p
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Union

from . import _ffi
from ._handle import _Handle
from .errors import InvalidArgumentError, ValidationError

if TYPE_CHECKING:
    from .store import Store

PathLike = Union[str, "os.PathLike[str]"]


def _core_numbers(kind: str) -> Dict[str, Any]:
    """A style's defaults as the library's table gives them (``nk_style_resolve`` with no fields)."""
    defaults: Dict[str, Any] = _ffi.call_json(_ffi.nk_style_resolve, kind.encode(), None)
    del defaults["fingerprint"]
    return defaults


_ARTICLE_ROW = _core_numbers("article_row")
_BUBBLE = _core_numbers("bubble")
_INTERACTION: Dict[str, Dict[str, float]] = _ffi.call_json(_ffi.nk_interaction_constants)

#: The font the library measures with unless told otherwise (WenQuanYi Micro Hei, the CJK font).
DEFAULT_FONT: str = _BUBBLE["font"]


# ---- Measuring ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TextMetrics:
    """Pango's pixel metrics of a text laid out at a maximum width (``pango_layout_get_pixel_size``).

    ``unknown_glyphs`` counts characters no pinned font can draw (they show as boxes).

    >>> import noteskit as nk
    >>> nk.measure_text("hello world", max_width=60, font="DejaVu Sans", size=17)
    TextMetrics(width=47, height=40, line_count=2, unknown_glyphs=0)
    """

    width: int
    height: int
    line_count: int
    unknown_glyphs: int


def measure_text(text: str, max_width: float, font: str = DEFAULT_FONT, size: float = 17) -> TextMetrics:
    """Measures ``text`` wrapped at ``max_width`` pixels, as the apps measured their labels.

    Pango (FT2 backend) at 72 dpi, so ``size=17`` is 17 px (17 pt on iOS); wrapping at word
    boundaries, inside a word only when it does not fit (``PANGO_WRAP_WORD_CHAR``); fonts pinned to
    WenQuanYi Micro Hei and DejaVu Sans (``font`` is one of them). About 100 µs for 150 characters.
    A text over 3 000 characters is laid out a few lines at a time and the lines added up, so every
    text up to the content limit gets the answer an unbounded Pango would give (Pango's own 32-bit
    sums overflow past about 2**31 / 1024 px of one unbroken run), in time linear in its length.

    Raises :class:`ValidationError` for a NUL character, text over 1 000 000 characters, a
    ``max_width`` or ``size`` that is not a finite number in range; :class:`FontError` for a font
    that is not pinned or not installed (the message names the Debian package).

    >>> measure_text("hello world", max_width=60, font="DejaVu Sans", size=17).line_count
    2
    """
    data = _ffi.call_json(_ffi.nk_measure_text, _ffi.text(text, "text"), _ffi.number(max_width, "max_width"),
                          _ffi.text(font, "font"), _ffi.number(size, "size"))
    return TextMetrics(data["width"], data["height"], data["line_count"], data["unknown_glyphs"])


@dataclass(frozen=True)
class FontConfiguration:
    """The pinned font setup. NotesKit builds its fontconfig configuration in code from ``files``
    (found in ``directory``: ``$NOTESKIT_FONT_DIR``, else the copies inside the installed package,
    else the Debian font folders) and reads no fontconfig file; ``fontconfig`` is the same
    configuration as XML, for other programs (``FONTCONFIG_FILE``) to see exactly these fonts.
    Measured at ``dpi`` with Pango language ``language``; fontconfig's cache is kept in
    ``cache_directory`` (owner-only; None when there is no cache folder).

    >>> import noteskit as nk
    >>> config = nk.font_configuration()
    >>> (config.families, config.dpi, [f.rsplit("/", 1)[1] for f in config.files])
    (['WenQuanYi Micro Hei', 'DejaVu Sans'], 72, ['wqy-microhei.ttc', 'DejaVuSans.ttf'])
    """

    fontconfig: str
    families: List[str]
    directory: str
    files: List[str]
    cache_directory: Optional[str]
    dpi: float
    language: str


def font_configuration() -> FontConfiguration:
    """The fonts, resolution and language every measurement uses (:class:`FontError` if a font is missing).

    >>> import noteskit as nk
    >>> nk.font_configuration().families[0]
    'WenQuanYi Micro Hei'
    """
    data = _ffi.call_json(_ffi.nk_font_configuration)
    return FontConfiguration(data["fontconfig"], data["families"], data["directory"], data["files"],
                             data["cache_directory"], data["dpi"], data["language"])


# ---- Styles -------------------------------------------------------------------------------------

def _finite(value: Any, field: str) -> float:
    """A number bound for JSON (which has no NaN or infinity: refused here, as the library would)."""
    number = _ffi.number(value, field)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValidationError(f"{field} must be a finite number, got {number}", field=field)
    return number


class _Style:
    """Immutable style: checked by the library when made; ``fingerprint`` identifies its numbers."""

    _kind = ""
    fingerprint: str

    def __post_init__(self) -> None:
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.init}  # type: ignore[arg-type]
        for name, value in values.items():
            if isinstance(value, float):
                _finite(value, name)
        resolved = _ffi.call_json(_ffi.nk_style_resolve, self._kind.encode(), json.dumps(values).encode())
        for name, value in resolved.items():
            object.__setattr__(self, name, value)

    def _json(self) -> bytes:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self) if f.init}).encode()  # type: ignore[arg-type]


@dataclass(frozen=True)
class ArticleRowStyle(_Style):
    """The numbers of an article row in the notes list; the defaults are the notes app's own cell.

    A row is ``top_padding``, the title box (one line, ellipsized, ``title_left`` from the left and
    ``title_right`` from the right, ``title_height`` tall or, when that is None, as tall as its
    line), ``title_spacing``, the content view (``content_left``/``content_right`` from the sides)
    with the whole content wrapped at the view's width less ``content_padding`` on each side and
    ``content_inset_top``/``content_inset_bottom`` around it, ``bottom_padding``, and
    ``extra_height``; the ``separator`` is drawn over the row's bottom::

        height = top_padding + (title_height or title.height) + title_spacing
               + content_inset_top + content.height + content_inset_bottom + bottom_padding + extra_height

    The app's cell: title 14 in a box 21 tall, 8 from the top, 14 left, 4 right; content 13 in a text
    view 8 from the left and ``width - 16`` wide, right under the title, with UIKit's insets (8 top
    and bottom, 5 on each side: the text wraps at ``width - 26``), 5 from the bottom; a 0.5
    separator; + 1. So a row is ``8 + 21 + (text height at width - 26) + 16 + 5 + 1``.
    :meth:`two_labels` is the simpler style NotesKit used before.

    >>> style = ArticleRowStyle()
    >>> (style.title_height, style.content_size, style.fingerprint != ArticleRowStyle(separator=1).fingerprint)
    (21, 13, True)
    """

    _kind = "article_row"

    title_font: str = _ARTICLE_ROW["title_font"]
    title_size: float = _ARTICLE_ROW["title_size"]
    title_height: Optional[float] = _ARTICLE_ROW["title_height"]
    top_padding: float = _ARTICLE_ROW["top_padding"]
    title_left: float = _ARTICLE_ROW["title_left"]
    title_right: float = _ARTICLE_ROW["title_right"]
    title_spacing: float = _ARTICLE_ROW["title_spacing"]
    content_font: str = _ARTICLE_ROW["content_font"]
    content_size: float = _ARTICLE_ROW["content_size"]
    content_left: float = _ARTICLE_ROW["content_left"]
    content_right: float = _ARTICLE_ROW["content_right"]
    content_inset_top: float = _ARTICLE_ROW["content_inset_top"]
    content_inset_bottom: float = _ARTICLE_ROW["content_inset_bottom"]
    content_padding: float = _ARTICLE_ROW["content_padding"]
    bottom_padding: float = _ARTICLE_ROW["bottom_padding"]
    separator: float = _ARTICLE_ROW["separator"]
    extra_height: float = _ARTICLE_ROW["extra_height"]
    fingerprint: str = field(init=False, repr=False, compare=False, default="")

    @classmethod
    def two_labels(cls, **changes: Any) -> "ArticleRowStyle":
        """The named alternative: two labels 8 from each side, a measured title at 17, the content at
        15 wrapped at ``width - 16``, 8 above, 4 between, 8 below, a 1-pixel separator; ``changes``
        override any field. A row is ``8 + title + 4 + content + 8 + 1``.

        >>> style = ArticleRowStyle.two_labels()
        >>> (style.title_size, style.title_height, style.content_size, style.content_padding, style.separator)
        (17, None, 15, 0, 1)
        """
        resolved = _ffi.call_json(_ffi.nk_style_resolve, b"article_row.two_labels", json.dumps(changes).encode())
        resolved.pop("fingerprint", None)
        return cls(**resolved)


@dataclass(frozen=True)
class BubbleStyle(_Style):
    """The numbers of a chat bubble.

    The text wraps at ``min(max_text_width, width - 2*side_margin - 2*inset_side - tail_margin)``::

        bubble.width  = text.width + 2 * inset_side + tail_margin
        bubble.height = text.height + inset_top + inset_bottom
        bubble.x      = width - side_margin - bubble.width if from_me else side_margin
        row_height    = row_margin_top + bubble.height + row_margin_bottom

    ``max_text_height`` caps the text's height (None, the default: no cap); the chat demo measured
    its labels within ``MAX_WIDTH_OF_TEXT x 999``, so ``BubbleStyle(max_text_height=999)``
    reproduces it (lines past the cap are not drawn).

    Defaults (NotesKit's own: the chat demo's text gives no numbers but the 999 cap): 16-pixel text at most 240 wide, label insets 10 (top, bottom) and
    12 (sides) plus 6 on the tail's side, bubbles 10 from the screen edge, rows 5 apart above and below.

    >>> import noteskit as nk
    >>> roomy = nk.BubbleStyle(max_text_width=300)
    >>> (roomy.max_text_width, roomy.fingerprint != nk.BubbleStyle().fingerprint)
    (300, True)
    """

    _kind = "bubble"

    font: str = _BUBBLE["font"]
    size: float = _BUBBLE["size"]
    max_text_width: float = _BUBBLE["max_text_width"]
    max_text_height: Optional[float] = _BUBBLE["max_text_height"]
    inset_top: float = _BUBBLE["inset_top"]
    inset_bottom: float = _BUBBLE["inset_bottom"]
    inset_side: float = _BUBBLE["inset_side"]
    tail_margin: float = _BUBBLE["tail_margin"]
    side_margin: float = _BUBBLE["side_margin"]
    row_margin_top: float = _BUBBLE["row_margin_top"]
    row_margin_bottom: float = _BUBBLE["row_margin_bottom"]
    fingerprint: str = field(init=False, repr=False, compare=False, default="")


# ---- Layouts ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bubble:
    """A chat bubble's frame in its row: ``x`` from the left edge (the bubble is right-aligned when
    ``from_me``), its size, the measured text's size inside it, and the height of the whole row.
    The bubble's top is the style's ``row_margin_top``.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store, store.layout(width=375) as lay:
    ...     conv = store.conversations.create("Alice")
    ...     mine = lay.bubble(conv.send("hello").id)
    ...     (mine.from_me, mine.x + mine.width == 375 - lay.bubble_style.side_margin)
    (True, True)
    """

    x: float
    width: float
    height: float
    text_width: float
    text_height: float
    from_me: bool
    row_height: float

    def __post_init__(self) -> None:
        for name in ("x", "width", "height", "text_width", "text_height", "row_height"):
            object.__setattr__(self, name, float(getattr(self, name)))


@dataclass(frozen=True)
class LayoutStats:
    """The height cache of a layout: lookups that hit and missed, entries, memory held (bytes),
    its bound, entries evicted by the bound and dropped because the row changed.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store, store.layout(width=375) as lay:
    ...     a = store.articles.create(title="t", content="今天天气真好")
    ...     _ = lay.article_height(a.id); _ = lay.article_height(a.id)
    ...     stats = lay.stats()
    ...     (stats.misses, stats.hits, stats.entries)
    (1, 1, 1)
    """

    hits: int
    misses: int
    entries: int
    bytes: int
    capacity_bytes: int
    evictions: int
    invalidations: int


@dataclass(frozen=True)
class Picture:
    """A PNG written by :meth:`Layout.render_articles` or :meth:`Layout.render_conversation`; a
    notebook shows it as the picture.

    >>> import os, tempfile, noteskit as nk
    >>> with nk.Store.memory() as store, store.layout(width=375) as lay:
    ...     a = store.articles.create(title="周末", content="今天天气真好")
    ...     picture = lay.render_articles([a.id], os.path.join(tempfile.mkdtemp(), "rows.png"))
    ...     (picture.width, picture.rows, picture._repr_png_()[:4])
    (375, 1, b'\x89PNG')
    """

    path: str
    width: int
    height: int
    rows: int

    def _repr_png_(self) -> bytes:
        """The PNG itself, so that a notebook cell holding a picture shows it."""
        with open(self.path, "rb") as f:
            return f.read()


def _ids(ids: Iterable[int], field: str = "ids") -> bytes:
    if isinstance(ids, (str, bytes)):
        raise InvalidArgumentError(f"{field} must be an iterable of int ids, got {type(ids).__name__}", field=field)
    try:
        return json.dumps(list(ids)).encode()
    except TypeError as e:
        raise InvalidArgumentError(f"{field} must be an iterable of int ids: {e}", field=field) from None


def _kind(kind: str) -> bytes:
    return _ffi.text(kind, "kind")


class Layout(_Handle):
    """Row heights and bubbles of a store at one width, measured with Pango and cached.

    Made by :meth:`Store.layout`. The cache is keyed by (article or message, id, revision, width,
    style fingerprint) and follows the store's change feed, so an edit through any handle is seen:
    an edited article is measured again once, an unchanged one never, and inserting rows above
    never shifts a height. Safe to use from many threads. Close it (or use ``with``) to free the cache.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store, store.layout(width=375) as lay:
    ...     a = store.articles.create(title="周末", content="今天天气真好")
    ...     before = lay.article_height(a.id)
    ...     _ = store.articles.update(a.id, content="今天天气真好。" * 20)
    ...     lay.article_height(a.id) > before     # the edit is seen: measured again
    True
    """

    def __init__(self, store: "Store", width: float, article_style: Optional[ArticleRowStyle] = None,
                 bubble_style: Optional[BubbleStyle] = None, estimated_height: float = 150,
                 cache_bytes: Optional[int] = None) -> None:
        self.store = store
        self.article_style = article_style if article_style is not None else ArticleRowStyle()
        self.bubble_style = bubble_style if bubble_style is not None else BubbleStyle()
        if not isinstance(self.article_style, ArticleRowStyle):
            raise InvalidArgumentError("article_style must be an ArticleRowStyle", field="article_style")
        if not isinstance(self.bubble_style, BubbleStyle):
            raise InvalidArgumentError("bubble_style must be a BubbleStyle", field="bubble_style")
        out = c_void_p()
        _ffi.check(_ffi.nk_layout_open(store.handle, _ffi.number(width, "width"), self.article_style._json(),
                                       self.bubble_style._json(), _ffi.number(estimated_height, "estimated_height"),
                                       0 if cache_bytes is None else _ffi.integer(cache_bytes, "cache_bytes"), byref(out)))
        self._own(out.value or 0, _ffi.nk_layout_close)
        self.width = float(width)
        self.estimated_height = float(estimated_height)

    _what = "layout"

    def __repr__(self) -> str:
        return f"<noteskit.Layout width={self.width:g} ({'closed' if self._handle is None else 'open'})>"

    # ---- Articles -------------------------------------------------------------------------------

    def article_height(self, id: int) -> float:
        """The height of article ``id``'s row: cached, or measured now and cached. :class:`NotFoundError` if none."""
        return _ffi.call_double(_ffi.nk_layout_article_height, self.handle, _ffi.integer(id, "id"))

    def article_heights(self, ids: Iterable[int]) -> List[float]:
        """The heights of many rows in one call, in order; O(1) each when cached."""
        return list(map(float, _ffi.call_json(_ffi.nk_layout_article_heights, self.handle, _ids(ids))))

    # ---- Bubbles --------------------------------------------------------------------------------

    def bubble(self, message_id: int) -> Bubble:
        """The bubble of message ``message_id``: cached, or measured now and cached.
        :class:`NotFoundError` if there is none."""
        return Bubble(**_ffi.call_json(_ffi.nk_layout_bubble, self.handle, _ffi.integer(message_id, "message_id")))

    def bubbles(self, message_ids: Iterable[int]) -> List[Bubble]:
        """The bubbles of many messages in one call, in order; O(1) each when cached."""
        return [Bubble(**b) for b in _ffi.call_json(_ffi.nk_layout_bubbles, self.handle, _ids(message_ids, "message_ids"))]

    def prefetch(self, ids: Iterable[int], threads: Optional[int] = None, kind: str = "article") -> int:
        """Measures and caches the rows of ``ids`` not cached yet, on ``threads`` threads (all cores by
        default), each with its own Pango font map. Returns how many rows were measured.

        ``kind`` is ``"article"`` or ``"message"``. The GIL is released meanwhile.
        """
        wanted = 0 if threads is None else max(0, min(_ffi.integer(threads, "threads"), 2 ** 31 - 1))
        count = c_int64()
        _ffi.check(_ffi.nk_layout_prefetch(self.handle, _kind(kind), _ids(ids), wanted, byref(count)))
        return count.value

    def stats(self) -> LayoutStats:
        """Hits, misses, entries and bytes of the height cache."""
        return LayoutStats(**_ffi.call_json(_ffi.nk_layout_stats, self.handle))

    # ---- Row offsets and pictures ---------------------------------------------------------------

    def rows(self, ids: Iterable[int], kind: str = "article") -> "Rows":
        """Row offsets of an ordered list (each id once): see :class:`Rows`. Measures nothing."""
        out = c_void_p()
        id_list = list(ids) if not isinstance(ids, (str, bytes)) else ids
        _ffi.check(_ffi.nk_layout_rows(self.handle, _kind(kind), _ids(id_list), byref(out)))
        return Rows(self, out.value or 0, list(id_list))

    def render_articles(self, ids: Iterable[int], path: PathLike) -> Picture:
        """Draws the rows of ``ids`` into a PNG at ``path`` at exactly the computed frames (measured
        title and content rects tinted behind their text, separators at the row bottoms)."""
        data = _ffi.call_json(_ffi.nk_layout_render_articles, self.handle, _ids(ids), _ffi.text(os.fspath(path), "path"))
        return Picture(**data)

    def render_conversation(self, conversation_id: int, path: PathLike) -> Picture:
        """Draws conversation ``conversation_id`` into a PNG at ``path`` as the chat showed it: oldest
        at the top, each bubble at exactly its computed frame (green on the right when sent by me,
        white on the left otherwise). A history taller than a picture can be (32 000 px) is drawn
        from its newest messages that fit; ``Picture.rows`` says how many."""
        data = _ffi.call_json(_ffi.nk_layout_render_conversation, self.handle, _ffi.integer(conversation_id, "conversation_id"),
                              _ffi.text(os.fspath(path), "path"))
        return Picture(**data)


class Rows(_Handle):
    """Where each row of an ordered list sits: O(log n) queries over a sum tree of heights.

    Measured rows count with their height, the others with the layout's ``estimated_height``. The
    list updates in place when the layout measures one of its rows (any call, any thread) or the
    store says one changed.

    >>> import noteskit as nk
    >>> with nk.Store.memory() as store, store.layout(width=375) as lay:
    ...     ids = [a.id for a in store.articles.create_many([{"title": "t", "content": "c"}] * 3)]
    ...     rows = lay.rows(ids)
    ...     (rows.total_height, rows.row_at(160), list(rows.visible(100, 100)))
    (450.0, 1, [0, 1])
    """

    def __init__(self, layout: Layout, handle: int, ids: List[int]) -> None:
        self.layout = layout
        self.ids = ids
        self._own(handle, _ffi.nk_rows_close)

    _what = "row list"

    def __len__(self) -> int:
        return len(self.ids)

    def _index(self, row: int, upper: int) -> int:
        row = _ffi.integer(row, "row")
        if not 0 <= row <= upper:
            raise IndexError(f"row {row} is out of range 0..{upper}")
        return row

    @property
    def total_height(self) -> float:
        """The height of all the rows: measured ones as measured, the others estimated."""
        return _ffi.call_double(_ffi.nk_rows_total_height, self.handle)

    def offset_of(self, row: int) -> float:
        """The offset of the top of ``row``; ``offset_of(len(rows))`` is the total height."""
        return _ffi.call_double(_ffi.nk_rows_offset_of, self.handle, self._index(row, len(self.ids)))

    def height_of(self, row: int) -> float:
        """The current height of ``row``: measured, or the estimate."""
        return _ffi.call_double(_ffi.nk_rows_height_of, self.handle, self._index(row, len(self.ids) - 1))

    def is_measured(self, row: int) -> bool:
        """Whether ``row`` has been measured (otherwise it counts as the estimated height)."""
        out = c_int32()
        _ffi.check(_ffi.nk_rows_is_measured(self.handle, self._index(row, len(self.ids) - 1), byref(out)))
        return bool(out.value)

    def row_at(self, y: float) -> Optional[int]:
        """The row whose span contains offset ``y``, or None above the first row and below the last."""
        out = c_int64()
        _ffi.check(_ffi.nk_rows_row_at(self.handle, _ffi.number(y, "y"), byref(out)))
        return None if out.value < 0 else out.value

    def visible(self, offset: float, viewport_height: float) -> range:
        """The rows that intersect the viewport ``[offset, offset + viewport_height)``."""
        first, stop = c_int64(), c_int64()
        _ffi.check(_ffi.nk_rows_visible(self.handle, _ffi.number(offset, "offset"),
                                        _ffi.number(viewport_height, "viewport_height"), byref(first), byref(stop)))
        return range(first.value, stop.value)


# ---- Interaction models -------------------------------------------------------------------------


class _Model:
    """An interaction model: its state as the library returns it, each event applied by the library."""

    _export: Any = None

    def __init__(self) -> None:
        self._state: Dict[str, Any] = _ffi.call_json(self._export, None, b'{"event": "hide"}')

    def _apply(self, event: str, **numbers: float) -> None:
        """Applies ``event`` with its numbers (checked finite here: JSON has no NaN or infinity)."""
        payload = {"event": event, **{name: _finite(value, name) for name, value in numbers.items()}}
        self._state = _ffi.call_json(self._export, json.dumps(self._state).encode(), json.dumps(payload).encode())


def _reading(name: str, convert: Any, doc: str) -> Any:
    """A read-only property: ``name`` of the model's state, as ``convert`` makes it."""
    return property(lambda self: convert(self._state[name]), doc=doc)


class KeyboardModel(_Model):
    """The keyboard as the apps' editor and chat handled it.

    ``show(height)`` (repeated: only the height changes) and ``hide()``; while shown the chat moves
    up by the keyboard height (``chat_offset``) and the editor's bottom inset is ``height + 5``;
    hidden, the offset is 0 and the inset is back to 46. (The search panel hears the keyboard
    itself, and only while shown: :meth:`SearchPanel.keyboard_will_show`.)

    >>> kb = KeyboardModel(); kb.show(336); kb.show(336)
    >>> (kb.editor_bottom_inset, kb.chat_offset)
    (341.0, -336.0)
    """

    editor_gap_above_keyboard: float = float(_INTERACTION["keyboard"]["editor_gap_above_keyboard"])
    editor_resting_inset: float = float(_INTERACTION["keyboard"]["editor_resting_inset"])
    _export = _ffi.nk_keyboard_apply

    def show(self, keyboard_height: float) -> None:
        """The keyboard appeared (or changed its frame) with this height."""
        self._apply("show", keyboard_height=keyboard_height)

    def hide(self) -> None:
        """The keyboard went away: offsets back to 0, the editor's inset back to 46, no mask."""
        self._apply("hide")

    shown = _reading("shown", bool, "Whether the keyboard is up.")
    keyboard_height = _reading("keyboard_height", float,
                               "The keyboard's height while shown, 0 when hidden.")
    editor_bottom_inset = _reading("editor_bottom_inset", float,
                                   "The article editor's bottom inset: keyboard + 5 while shown, else 46.")
    chat_offset = _reading("chat_offset", float,
                           "How far the chat view moves: -keyboard while shown, else 0.")

    def __repr__(self) -> str:
        return f"<noteskit.KeyboardModel {'shown ' + format(self.keyboard_height, 'g') if self.shown else 'hidden'}>"


class SearchPanel(_Model):
    """The notes app's search panel, as its list controller moved it.

    ``top_offset`` is the panel's top edge relative to the screen's bottom edge, in screen
    coordinates (negative: above it): ``-50`` hidden (a 50-point strip shows), ``-155`` shown
    (105 more). ``drag(translation)`` takes the pan gesture's **total** translation since the drag
    began (negative is up): the panel follows from where it last came to rest, unclamped, and
    the search field's keyboard is dismissed. ``end_drag()`` snaps to ``"shown"`` when at least
    91 of the 105 points are revealed, else ``"hidden"``. ``show()``/``hide()`` and keyboard events
    asking for a move while dragging are ignored. Only while shown does the panel follow the
    keyboard: ``keyboard_will_show(h)`` puts it right above it (``-(155 + h)``) with one tap mask
    under it (however often it comes), ``keyboard_will_hide()`` removes the mask and sends it back
    to hidden.

    >>> panel = SearchPanel(); panel.drag(-60); panel.drag(-95)
    >>> panel.top_offset
    -145.0
    >>> panel.end_drag(), panel.top_offset
    ('shown', -155.0)
    >>> panel.keyboard_will_show(336); panel.keyboard_will_show(336)
    >>> panel.top_offset, panel.mask_count
    (-491.0, 1)
    >>> panel.keyboard_will_hide()
    >>> panel.state, panel.top_offset, panel.mask_count
    ('hidden', -50.0, 0)
    """

    height: float = float(_INTERACTION["search_panel"]["height"])
    strip: float = float(_INTERACTION["search_panel"]["strip"])
    snap_threshold: float = float(_INTERACTION["search_panel"]["snap_threshold"])
    _export = _ffi.nk_search_panel_apply

    def drag(self, translation: float) -> None:
        """The pan gesture changed: ``translation`` is its total since the drag began (negative: up)."""
        self._apply("drag", translation=translation)

    def end_drag(self) -> str:
        """The finger lifted: snaps to ``"shown"`` (at least 91 revealed) or ``"hidden"``; returns the state."""
        self._apply("end_drag")
        return str(self._state["state"])

    def show(self) -> None:
        """Opens the panel (ignored while dragging)."""
        self._apply("show")

    def hide(self) -> None:
        """Closes the panel (ignored while dragging)."""
        self._apply("hide")

    def keyboard_will_show(self, keyboard_height: float) -> None:
        """The keyboard will show (or change its frame) with this height; a shown panel moves above it."""
        self._apply("keyboard_will_show", keyboard_height=keyboard_height)

    def keyboard_will_hide(self) -> None:
        """The keyboard will hide; a shown panel drops its mask and goes back to hidden."""
        self._apply("keyboard_will_hide")

    state = _reading("state", str,
                     '``"shown"`` or ``"hidden"``: where it rests (during a drag: where it rested).')
    top_offset = _reading("top_offset", float,
                          "The panel's top relative to the screen's bottom: -50 hidden, -155 shown.")
    revealed = _reading("revealed", float,
                        "How much of the panel shows above the 50-point strip: 0 hidden, 105 shown.")
    dragging = _reading("dragging", bool, "Whether a drag is in progress.")
    keyboard_shown = _reading("keyboard_shown", bool,
                              "Whether the search field's keyboard is up (a drag dismisses it).")
    mask_count = _reading("mask_count", int,
                          "Tap masks under the panel: 1 while shown over the keyboard, else 0 — never 3.")

    def __repr__(self) -> str:
        return f"<noteskit.SearchPanel {self.state}, top {self.top_offset:g}>"
