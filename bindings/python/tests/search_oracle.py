"""A plain-Python statement of what search matches, for the tests to compare the library against.

Search compares *keys*: the text in NFC, then each code point replaced by its simple case folding
(unless case-sensitive). A query matches where its key is a substring of the text's key; spans are
every non-overlapping match, leftmost first, mapped back to code-point offsets into the stored text.
NFC is applied segment by segment (a segment starts at a code point with combining class 0 and
NFC_Quick_Check=Yes); a segment NFC leaves alone maps 1:1, one it changes is normalized step by step
(canonical decomposition of each code point, canonical ordering, canonical composition), each key
code point keeping the stored code points it came from, so a span covers just what matched. Spans
that would share a stored code point (only inside a reordered run of marks) are joined into one.

Python's ``unicodedata`` is Unicode 14; normalization and case folding are stable for assigned
code points, so the tests only draw code points assigned in Unicode 14.
"""
from __future__ import annotations

import functools
import unicodedata
from typing import Dict, List, Sequence, Tuple


def _composes_with_previous() -> set:
    """NFC_Quick_Check=Maybe: second halves of primary composites, and Hangul vowels/trailing consonants."""
    found = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2 and unicodedata.normalize("NFC", chr(cp)) == chr(cp):
                found.add(int(parts[1], 16))
    return found


_MAYBE = _composes_with_previous()


def is_boundary(c: str) -> bool:
    """Combining class 0 and NFC_Quick_Check=Yes: a normalization segment starts here."""
    return unicodedata.combining(c) == 0 and ord(c) not in _MAYBE and unicodedata.normalize("NFC", c) == c


def fold(c: str) -> str:
    """Simple case folding of one code point (CaseFolding.txt C + S)."""
    f = c.casefold()
    if len(f) == 1:
        return f
    lower = c.lower()
    return lower if len(lower) == 1 else c


@functools.lru_cache(maxsize=65536)
def key(text: str, fold_case: bool) -> Tuple[str, List[int], List[int]]:
    """The search key of ``text`` and, per key code point, the original [start, end) it came from."""
    out: List[str] = []
    starts: List[int] = []
    ends: List[int] = []
    segments = []
    start = 0
    for i, c in enumerate(text):
        if i > 0 and is_boundary(c):
            segments.append((start, i))
            start = i
    if text:
        segments.append((start, len(text)))
    for a, b in segments:
        segment = text[a:b]
        normalized = unicodedata.normalize("NFC", segment)
        if normalized == segment:
            traced = [(c, a + k, a + k + 1) for k, c in enumerate(segment)]
        else:
            traced = _trace_nfc(segment, a)
            if "".join(c for c, _, _ in traced) != normalized:
                traced = [(c, a, b) for c in normalized]
        for c, s, e in traced:
            out.append(fold(c) if fold_case else c)
            starts.append(s)
            ends.append(e)
    return "".join(out), starts, ends


def _trace_nfc(segment: str, start: int) -> List[Tuple[str, int, int]]:
    """NFC of ``segment`` as UAX #15 defines it, each result code point with the [start, end) of the
    stored code points it was made of."""
    pieces = [[d, unicodedata.combining(d), start + k, start + k + 1]
              for k, c in enumerate(segment) for d in unicodedata.normalize("NFD", c)]
    for i in range(1, len(pieces)):  # canonical ordering
        j = i
        while j > 0 and pieces[j][1] != 0 and pieces[j - 1][1] > pieces[j][1]:
            pieces[j], pieces[j - 1] = pieces[j - 1], pieces[j]
            j -= 1
    out: List[list] = []
    starter = None
    for p in pieces:  # canonical composition
        if starter is not None:
            blocked = len(out) - 1 > starter and (out[-1][1] == 0 or out[-1][1] >= p[1])
            pair = unicodedata.normalize("NFC", out[starter][0] + p[0])
            if not blocked and len(pair) == 1:
                s = out[starter]
                out[starter] = [pair, s[1], min(s[2], p[2]), max(s[3], p[3])]
                continue
        if p[1] == 0:
            starter = len(out)
        out.append(p)
    return [(c, s, e) for c, _, s, e in out]


def spans(text: str, query: str, case_sensitive: bool) -> List[Tuple[int, int]]:
    """Every non-overlapping match of ``query`` in ``text``, leftmost first, as code-point offsets."""
    q, _, _ = key(query, not case_sensitive)
    if not q:
        return []
    k, starts, ends = key(text, not case_sensitive)
    found: List[Tuple[int, int]] = []
    i = k.find(q)
    while i >= 0:
        s, e = min(starts[i:i + len(q)]), max(ends[i:i + len(q)])
        while found and s < found[-1][1]:
            ps, pe = found.pop()
            s, e = min(s, ps), max(e, pe)
        found.append((s, e))
        i = k.find(q, i + len(q))
    return found


FIELDS = {"any": ("title", "content"), "title": ("title",), "content": ("content",)}


def search(articles: Sequence, query: str, field: str = "any",
           case_sensitive: bool = False) -> List[Tuple[int, Dict[str, List[Tuple[int, int]]]]]:
    """(article id, spans) of every hit, newest first (created_at, then id, descending)."""
    hits = []
    for a in sorted(articles, key=lambda a: (a.created_at, a.id), reverse=True):
        found = {name: spans(getattr(a, name), query, case_sensitive) for name in FIELDS[field]}
        q, _, _ = key(query, not case_sensitive)
        if not q or any(found.values()):
            hits.append((a.id, found))
    return hits


def search_messages(messages: Sequence, query: str, conversation=None,
                    case_sensitive: bool = False) -> List[Tuple[int, Dict[str, List[Tuple[int, int]]]]]:
    """(message id, spans) of every hit, newest first (sent_at, then id, descending)."""
    q, _, _ = key(query, not case_sensitive)
    hits = []
    for m in sorted(messages, key=lambda m: (m.sent_at, m.id), reverse=True):
        if conversation is not None and m.conversation_id != conversation:
            continue
        found = spans(m.content, query, case_sensitive)
        if not q or found:
            hits.append((m.id, {"content": found}))
    return hits
