"""The ``noteskit`` command line (also ``python -m noteskit``).

Every command works on one store: ``--db PATH``, by default the embedded store of
:func:`noteskit.default_store_path` (``$XDG_DATA_HOME/noteskit/notes.db``). A mistake (a bad id,
an empty title, a missing file) prints ``noteskit: error: ...`` on stderr and exits with status 1
(2 for a malformed command line), never with a traceback. ``--json`` prints records as JSON lines
for scripts.

>>> from noteskit.cli import main
>>> main(["--db", ":memory:", "add", "--title", "周末", "--content", "去公园散步"])
#1 周末 (revision 1)
0
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import sys
import unicodedata
import warnings
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, TextIO, Tuple

from . import __version__
from ._display import highlight
from .errors import NotesError, NotFoundError, ValidationError
from .models import Article, Conversation, Message, MessageHit
from .privacy import PrivacyWarning, exposed_files, exposed_folder, file_mode
from .store import Store, default_store_path

Handler = Callable[[Store, argparse.Namespace], None]


class UsageError(Exception):
    """A command-line mistake found after parsing (exit status 2, like argparse's own)."""


# ---- Output -------------------------------------------------------------------------------------

def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


def record_dict(record: Any) -> dict[str, Any]:
    """A record dataclass as a JSON-ready dict (datetimes as ISO-8601 UTC text; private fields left out).

    >>> import noteskit as nk
    >>> from noteskit.cli import record_dict
    >>> with nk.Store.memory() as store:
    ...     sorted(record_dict(store.articles.create(title="t", content="c")))
    ['content', 'created_at', 'id', 'revision', 'title', 'uid', 'updated_at']
    """
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record) if not f.name.startswith("_")}


def print_json(records: Iterable[Any], out: TextIO) -> None:
    for record in records:
        out.write(json.dumps(record_dict(record), ensure_ascii=False) + "\n")


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` safe to print: C0 and C1 control characters other than newline and tab (and DEL)
    shown as ``\\xNN``, so a stored note cannot write terminal escapes (``--json`` keeps the text exact).

    >>> print(visible("a\\x1b]0;pwned\\x07b\\x9b2J\\nc"))
    a\\x1b]0;pwned\\x07b\\x9b2J
    c
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def local_time(value: datetime) -> str:
    """A UTC time as the local ``YYYY-MM-DD HH:MM`` a person reads."""
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


def columns(char: str) -> int:
    """How many terminal columns a character takes: 2 for wide (CJK) characters, 0 for combining marks."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` terminal columns with an ellipsis (CJK characters count 2).

    >>> one_line("今天天气真好，去公园散步", 10), one_line("a  b\\nc", 10)
    ('今天天气…', 'a b c')
    """
    flat = " ".join(text.split())
    if sum(map(columns, flat)) <= width:
        return flat
    out, used = [], 0
    for char in flat:
        if used + columns(char) > width - 1:
            break
        out.append(char)
        used += columns(char)
    return "".join(out) + "…"


def article_row(article: Article) -> str:
    return (f"#{article.id:<5} {local_time(article.created_at)}  {one_line(visible(article.title), 40)}"
            f"  · {one_line(visible(article.content), 50)}")


def more_hint(command: str, cursor: Optional[str]) -> None:
    """Tells (on stderr, so stdout stays the list) how to get the next page."""
    if cursor:
        print(f"(more: noteskit {command} --after {cursor})", file=sys.stderr)


COLOUR_CHOICES = ("auto", "always", "never")
_MATCH_ON, _MATCH_OFF = "\x1b[1;30;43m", "\x1b[0m"  # bold black on yellow, as grep --color and less do


def use_colour(choice: str, stream: TextIO) -> bool:
    """``--color``: ``always``, ``never``, or ``auto`` (a terminal, and ``NO_COLOR`` unset).

    >>> import io
    >>> use_colour("auto", io.StringIO()), use_colour("always", io.StringIO())
    (False, True)
    """
    if choice == "auto":
        return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    return choice == "always"


def marked(text: str, spans: Iterable[Sequence[int]], colour: bool) -> str:
    """``text`` with the matches highlighted for a terminal (or left plain without colour), its
    control characters made :func:`visible`.

    >>> marked("今天天气真好", [(2, 4)], colour=True) == "今天\x1b[1;30;43m天气\x1b[0m真好"
    True
    """
    return highlight(text, spans, _MATCH_ON, _MATCH_OFF, escape=visible) if colour else visible(text)


class Progress:
    """An import's ``progress(done, total)`` callback (``unit``: bytes of a file, or files of a folder):
    a tqdm bar on stderr when tqdm is installed (``pip install 'noteskit[cli]'``), otherwise a plain
    line at most every 10 %, and nothing when ``quiet``.

    >>> with Progress("import", quiet=True) as progress:
    ...     progress(5, 10)
    True
    """

    def __init__(self, label: str, quiet: bool = False, unit: str = "B") -> None:
        self.label, self.quiet, self.unit = label, quiet, unit
        self._bar: Any = None
        self._percent = -10

    def __call__(self, done: int, total: int) -> bool:
        if self.quiet:
            return True
        if self._bar is None:
            try:
                from tqdm import tqdm
            except ImportError:
                percent = done * 100 // total if total else 100
                if percent >= self._percent + 10 or (done == total and percent != self._percent):
                    print(f"{self.label}: {done}/{total} ({percent}%)", file=sys.stderr)
                    self._percent = percent
                return True
            self._bar = tqdm(total=total, desc=self.label, unit=self.unit, unit_scale=self.unit == "B", file=sys.stderr)
        if self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self._bar.n)
        return True

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


# ---- Input --------------------------------------------------------------------------------------

def read_text(value: Optional[str]) -> Optional[str]:
    """An option's text, or standard input for ``-``."""
    if value == "-":
        return sys.stdin.read()
    return value


# ---- Commands: articles -------------------------------------------------------------------------

def cmd_add(store: Store, args: argparse.Namespace) -> None:
    """Saves a new article through a draft, as the app's editor does: the title defaults to today's date."""
    draft = store.articles.new_draft(title=read_text(args.title), content=read_text(args.content) or "")
    try:
        article = draft.save()
    finally:
        draft.discard()  # the command is the whole editing session; a refused save leaves nothing either
    if args.json:
        print_json([article], sys.stdout)
    else:
        print(f"#{article.id} {visible(article.title)} (revision {article.revision})")


def cmd_list(store: Store, args: argparse.Namespace) -> None:
    if args.all:
        articles: Iterable[Article] = store.articles.iter()
        cursor = None
    else:
        page = store.articles.list(limit=args.limit, after=args.after)
        articles, cursor = page.items, page.next_cursor
    if args.json:
        print_json(articles, sys.stdout)
    else:
        for article in articles:
            print(article_row(article))
    more_hint("list", cursor)


def cmd_show(store: Store, args: argparse.Namespace) -> None:
    article = store.articles.get(args.id)
    if args.json:
        print_json([article], sys.stdout)
        return
    print(visible(article.title))
    print(f"#{article.id} · revision {article.revision} · created {local_time(article.created_at)}"
          f" · updated {local_time(article.updated_at)}")
    print()
    print(visible(article.content))


def cmd_edit(store: Store, args: argparse.Namespace) -> None:
    title, content = read_text(args.title), read_text(args.content)
    if title is None and content is None:
        raise UsageError("edit: give --title and/or --content")
    article = store.articles.update(args.id, title=title, content=content, expected_revision=args.revision)
    if args.json:
        print_json([article], sys.stdout)
    else:
        print(f"#{article.id} {visible(article.title)} (revision {article.revision})")


def cmd_delete(store: Store, args: argparse.Namespace) -> None:
    for id in args.ids:
        store.articles.delete(id)
        if not args.json:
            print(f"deleted #{id}")


# ---- Commands: chat -----------------------------------------------------------------------------

class CommandError(Exception):
    """A user mistake the command line finds itself (exit status 1, like a library error)."""


def find_conversation(store: Store, name: str) -> Optional[Conversation]:
    """The conversation named on the command line: ``#12`` is an id; ``12`` is the conversation with
    that id if there is one, else a title (so a conversation titled ``2024`` can be named); anything
    else is a title.

    A title names the one conversation with exactly that title (None when there is none); several
    with that title is an error asking for the id. An unknown ``#id`` is :class:`NotFoundError`.
    """
    if name.startswith("#") and name[1:].isdigit():
        return store.conversations.get(int(name[1:]))
    if name.isdigit() and name.isascii():
        try:
            return store.conversations.get(int(name))
        except NotFoundError:
            pass
    matches = [c for c in store.conversations.iter() if c.title == name]
    if len(matches) > 1:
        raise CommandError(f"{len(matches)} conversations are titled {name!r} "
                           f"({', '.join(f'#{c.id}' for c in matches)}): name one by its id")
    return matches[0] if matches else None


def existing_conversation(store: Store, name: str) -> Conversation:
    conversation = find_conversation(store, name)
    if conversation is None:
        raise CommandError(f"no conversation is titled {name!r} (noteskit chat list shows them)")
    return conversation


def message_line(message: Message, colour: bool = False, spans: Sequence[Sequence[int]] = ()) -> str:
    """One message as a chat shows it on a terminal: time, who, text (continuation lines indented)."""
    who = "me" if message.from_me else message.sender or "them"
    text = marked(message.content, spans, colour).replace("\n", "\n" + " " * 24)
    return f"{local_time(message.sent_at)}  {who:>4}  {text}"


def cmd_chat_send(store: Store, args: argparse.Namespace) -> None:
    """``chat send`` and ``chat receive``; a title no conversation has starts a new conversation."""
    text = read_text(args.text) or ""
    conversation = find_conversation(store, args.conversation)
    new = conversation is None
    if conversation is None:
        conversation = store.conversations.create(args.conversation)
    try:
        message = conversation.send(text) if args.chat_command == "send" else conversation.receive(text, sent_at=args.at)
    except NotesError:
        if new:
            conversation.delete()  # a refused message leaves no new, empty conversation behind
        raise
    if new:
        print(f"new conversation #{conversation.id} {visible(conversation.title)}", file=sys.stderr)
    if args.json:
        print_json([message], sys.stdout)
    else:
        print(message_line(message))


def cmd_chat_history(store: Store, args: argparse.Namespace) -> None:
    cursor: Optional[str] = None
    if args.all:
        conversation, messages = _conversation_messages(store, args.conversation, 0, all=True)
    else:
        conversation = existing_conversation(store, args.conversation)
        page = conversation.history(limit=args.limit, before=args.before)
        messages, cursor = page.items, page.next_cursor
    if args.json:
        print_json(messages, sys.stdout)
    else:
        print(f"── {visible(conversation.title)} (#{conversation.id}) ──")
        for message in messages:
            print(message_line(message))
    if cursor:
        print(f"(earlier: noteskit chat history {conversation.id} --before {cursor})", file=sys.stderr)


def cmd_chat_list(store: Store, args: argparse.Namespace) -> None:
    conversations = store.conversations.iter()
    if args.json:
        print_json(conversations, sys.stdout)
        return
    for conversation in conversations:
        print(f"#{conversation.id:<5} {local_time(conversation.last_activity_at)}  {visible(conversation.title)}")


# ---- Commands: search ---------------------------------------------------------------------------

def cmd_search(store: Store, args: argparse.Namespace) -> None:
    """Articles (or messages) containing the query, newest first, the matches highlighted on a terminal."""
    colour = use_colour(args.color, sys.stdout)
    if args.everything:
        if args.messages or args.conversation or args.case_sensitive or args.field != "any":
            raise CommandError("--everything searches articles (any field) and messages of every conversation, "
                               "case-insensitively: leave out --messages, --conversation, --field and --case-sensitive")
        cursor = _search_everything(store, args, colour)
    elif args.messages or args.conversation:
        conversation = existing_conversation(store, args.conversation) if args.conversation else None
        message_hits = store.messages.search(args.query, conversation=conversation.id if conversation else None,
                                             case_sensitive=args.case_sensitive, limit=args.limit, after=args.after)
        titles = {conversation.id: conversation.title} if conversation else {}
        for hit in message_hits:
            if args.json:
                print(json.dumps({**record_dict(hit.message), "spans": hit.spans}, ensure_ascii=False))
                continue
            cid = hit.message.conversation_id
            if cid not in titles:
                titles[cid] = store.conversations.get(cid).title
            print(f"#{hit.message.id:<5} {one_line(visible(titles[cid]), 12):<12}  "
                  + message_line(hit.message, colour, hit.spans.get("content", ())))
        cursor = message_hits.next_cursor
    else:
        article_hits = store.articles.search(args.query, field=args.field, case_sensitive=args.case_sensitive,
                                             limit=args.limit, after=args.after)
        for found in article_hits:
            article = found.article
            if args.json:
                print(json.dumps({**record_dict(article), "spans": found.spans}, ensure_ascii=False))
                continue
            cut = found.snippet(60, field="content")
            print(f"#{article.id:<5} {local_time(article.created_at)}  "
                  f"{marked(article.title, found.spans.get('title', ()), colour)}  · {marked(cut.text, cut.spans, colour)}")
        cursor = article_hits.next_cursor
    if cursor:
        print(f"(more: the same search with --after {cursor})", file=sys.stderr)


def _search_everything(store: Store, args: argparse.Namespace, colour: bool) -> Optional[str]:
    """``search --everything``: one page of :meth:`Store.search`, each hit a line with its snippet."""
    page = store.search(args.query, limit=args.limit, after=args.after)
    titles: Dict[int, str] = {}
    for hit in page:
        if args.json:
            print(json.dumps({"kind": hit.kind, **record_dict(hit.record), "spans": hit.spans}, ensure_ascii=False))
            continue
        cut = hit.snippet(60)
        if isinstance(hit, MessageHit):
            message = hit.message
            cid = message.conversation_id
            if cid not in titles:
                titles[cid] = store.conversations.get(cid).title
            who = "me" if message.from_me else message.sender or "them"
            print(f"message #{message.id:<5} {local_time(message.sent_at)}  {one_line(visible(titles[cid]), 12)}, "
                  f"{visible(who)}: {marked(cut.text, cut.spans, colour)}")
        else:
            article = hit.article
            print(f"article #{article.id:<5} {local_time(article.created_at)}  "
                  f"{marked(article.title, hit.spans.get('title', ()), colour)}  · {marked(cut.text, cut.spans, colour)}")
    return page.next_cursor


# ---- Commands: export and import ----------------------------------------------------------------

def _transcript_options(store: Store, args: argparse.Namespace, importing: bool) -> Dict[str, Any]:
    """``--conversation`` for a transcript: an id, or (importing) a title found or created by the library."""
    if not args.conversation:
        return {}
    if importing:
        found = find_conversation(store, args.conversation)
        return {"conversation": found.id} if found else {"title": args.conversation}
    return {"conversation": existing_conversation(store, args.conversation).id}


# The options the library names in its messages, where this command line spells them otherwise
# than --kebab-name VALUE.
_FLAGS = {"columns": "--column HEADER=NAME", "unknownColumns": "--ignore-unknown-columns"}


def command_line_option(name: str, value: Any) -> str:
    """An option the library names, as this command line spells it: ``--format markdown``."""
    if name in _FLAGS:
        return _FLAGS[name]
    flag = "--" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()
    return flag if value is None or isinstance(value, bool) else f"{flag} {shlex.quote(value)}"


def said(error: BaseException) -> str:
    """An error's message in the command line's words, safe to print."""
    return visible(error._worded(command_line_option) if isinstance(error, NotesError) else str(error))


def cmd_export(store: Store, args: argparse.Namespace) -> None:
    """Writes the store (or one conversation as a transcript) to a file or folder."""
    conversation = _transcript_options(store, args, importing=False).get("conversation")
    report = store.export(args.path, args.format, table=args.table, conversation=conversation, mode=args.mode,
                          excel=args.excel)
    if args.json:
        print(json.dumps(record_dict(report)))
    else:
        print(f"exported {report.articles} articles, {report.drafts} drafts, {report.conversations} conversations "
              f"and {report.messages} messages to {args.path} ({report.files} file{'s' if report.files != 1 else ''})")


def cmd_doctor(args: argparse.Namespace) -> int:
    """Lists the store's files (and the default data folder) other accounts can read; changes nothing.

    Exit status 1 when it lists anything, so that a script can check.
    """
    found: List[str] = []
    if args.db != ":memory:":
        found += [f"{f.path}: mode {f.mode:o}, readable by other accounts; private: chmod 600 {f.path}"
                  for f in exposed_files(args.db)]
        if args.default_db:
            folder = exposed_folder(os.path.dirname(args.db))
            if folder:
                found.append(f"{folder.path}: mode {folder.mode:o}, other accounts can list it; "
                             f"private: chmod 700 {folder.path}")
    for line in found:
        print(line)
    if not found:
        print(f"{args.db}: private (only its owner can read it)" if os.path.exists(args.db) else f"{args.db}: no store yet")
    return 1 if found else 0


def cmd_import(store: Store, args: argparse.Namespace) -> None:
    """Imports a file or folder in one transaction, with a progress bar on stderr."""
    parquet = args.format == "parquet" or (args.format is None and args.path.lower().endswith(".parquet"))
    unit = "file" if os.path.isdir(args.path) else "row" if parquet else "B"
    with Progress("import", quiet=args.quiet, unit=unit) as progress:
        columns = dict(c.split("=", 1) for c in args.column if "=" in c) or None
        if len(columns or ()) != len(args.column):
            raise SystemExit("noteskit import: --column takes HEADER=NAME, e.g. --column Title=title")
        delimiter = "\t" if args.delimiter in ("\\t", "tab") else args.delimiter
        report = store.import_(args.path, args.format, on_conflict=args.on_conflict, on_error=args.on_error,
                               progress=progress, me=args.me, tz=args.tz, encoding=args.encoding, delimiter=delimiter,
                               columns=columns, unknown_columns="ignore" if args.ignore_unknown_columns else "refuse",
                               date_order=args.date_order, table=args.table, **_transcript_options(store, args, importing=True))
    for error in report.errors:
        print(f"skipped: {said(error)}", file=sys.stderr)
    for link in report.skipped_links:
        print(f"skipped: {link} is a link leading outside {args.path} (not read)", file=sys.stderr)
    if args.json:
        print(json.dumps({**{k: v for k, v in record_dict(report).items() if k not in ("errors", "skips")},
                          "errors": [e._worded(command_line_option) for e in report.errors],
                          "skips": [record_dict(k) for k in report.skips]}, ensure_ascii=False))
    else:
        print(f"imported {args.path}: {report.created} created, {report.updated} updated, {report.skipped} skipped"
              + (f", {len(report.errors)} malformed records left out" if report.errors else ""))


# ---- Commands: layout ---------------------------------------------------------------------------

def _article_ids(store: Store, args: argparse.Namespace) -> List[int]:
    """The ids named by ``--ids``, or the newest ``--limit`` articles (every one with ``--all``)."""
    if args.ids:
        return list(args.ids)
    if args.all:
        return [a.id for a in store.articles.iter()]
    return [a.id for a in store.articles.list(limit=args.limit)]


def _conversation_messages(store: Store, name: str, limit: int, all: bool) -> Tuple[Conversation, List[Message]]:
    """A conversation's newest ``limit`` messages (all with ``all``), oldest first."""
    conversation = existing_conversation(store, name)
    if not all:
        return conversation, conversation.history(limit=limit).items
    pages: List[List[Message]] = []
    before: Optional[str] = None
    while True:
        page = conversation.history(limit=1000, before=before)
        pages.append(page.items)
        if page.next_cursor is None:
            return conversation, [m for items in reversed(pages) for m in items]
        before = page.next_cursor


def cmd_heights(store: Store, args: argparse.Namespace) -> None:
    """Each row's height at ``--width`` as the apps sized it (article rows, or bubbles with ``--conversation``)."""
    with store.layout(width=args.width) as layout:
        if args.conversation:
            _, messages = _conversation_messages(store, args.conversation, args.limit, args.all)
            ids = [m.id for m in messages]
            layout.prefetch(ids, kind="message")
            heights = [b.row_height for b in layout.bubbles(ids)]
            labels = {m.id: ("me: " if m.from_me else "them: ") + m.content for m in messages}
        else:
            ids = _article_ids(store, args)
            layout.prefetch(ids)
            heights = layout.article_heights(ids)
            labels = {id: store.articles.get(id).title for id in ids} if len(ids) <= 1000 else {}
    if args.json:
        for id, height in zip(ids, heights):
            print(json.dumps({"id": id, "height": height, "width": args.width}))
        return
    for id, height in zip(ids, heights):
        print(f"#{id:<5} {height:8.1f}  {one_line(visible(labels.get(id, '')), 50)}")
    if heights:
        ordered = sorted(heights)
        print(f"{len(heights)} rows at width {args.width:g}: total {sum(heights):.1f}, min {ordered[0]:.1f}, "
              f"median {ordered[len(ordered) // 2]:.1f}, max {ordered[-1]:.1f}", file=sys.stderr)


def cmd_render(store: Store, args: argparse.Namespace) -> None:
    """Draws article rows, or a conversation's bubbles, into a PNG at exactly the frames the layout computed."""
    with store.layout(width=args.width) as layout:
        if args.conversation:
            picture = layout.render_conversation(existing_conversation(store, args.conversation).id, args.output)
        else:
            picture = layout.render_articles(_article_ids(store, args), args.output)
    if args.json:
        print(json.dumps(record_dict(picture)))
    else:
        print(f"wrote {picture.path} ({picture.width}×{picture.height} px, {picture.rows} rows)")


def cmd_admin_add_user(store: Store, args: argparse.Namespace) -> None:
    """Creates a PostgreSQL login role that may use the store and sees only its own rows."""
    if args.no_password:
        password = None
    elif args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        import getpass

        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            raise ValidationError("the two passwords differ; nothing was created", field="password")
    else:
        raise ValidationError("give --password-stdin (the password on standard input) or --no-password", field="password")
    store.create_user(args.name, password=password)
    if args.json:
        print(json.dumps({"user": args.name, "password": password is not None}))
    else:
        print(f"created user {args.name}" + ("" if password is not None else " (no password)"))


# ---- The parser ---------------------------------------------------------------------------------

def _common() -> argparse.ArgumentParser:
    """Options every command takes, before or after its name (``noteskit --db x list`` or ``noteskit list --db x``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS,
                        help="the store file (default: $XDG_DATA_HOME/noteskit/notes.db; ':memory:' for a throwaway store), "
                             "or a store on PostgreSQL: postgresql://user:password@host:port/dbname")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print records as JSON lines")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The ``noteskit`` argument parser, one sub-command per action."""
    common = _common()
    parser = argparse.ArgumentParser(prog="noteskit", parents=[common],
                                     description="NotesKit from the command line: notes, chat, search, layout.")
    parser.add_argument("--version", action="version", version=f"noteskit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, parents=[common], help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    text_help = "text, or - to read it from standard input"
    add = command("add", cmd_add, "save a new article")
    add.add_argument("-t", "--title", help=f"title (default: today's date, YYYY-MM-DD); {text_help}")
    add.add_argument("-c", "--content", help=f"content; {text_help}")

    listing = command("list", cmd_list, "list articles, newest first")
    listing.add_argument("-n", "--limit", type=int, default=20, help="articles per page, 1 to 1000 (default: 20)")
    listing.add_argument("--after", metavar="CURSOR", help="the cursor printed after the previous page")
    listing.add_argument("--all", action="store_true", help="every article, all pages")

    show = command("show", cmd_show, "show one article in full")
    show.add_argument("id", type=int)

    edit = command("edit", cmd_edit, "change an article's title and/or content")
    edit.add_argument("id", type=int)
    edit.add_argument("-t", "--title", help=f"new title; {text_help}")
    edit.add_argument("-c", "--content", help=f"new content; {text_help}")
    edit.add_argument("--revision", type=int, help="refuse (conflict) unless the article is still at this revision")

    delete = command("delete", cmd_delete, "delete articles (and what is derived from them)")
    delete.add_argument("ids", metavar="id", type=int, nargs="+")

    search = command("search", cmd_search, "find articles (or messages) containing a text, matches highlighted")
    search.add_argument("query", help="literal text: every character is itself (quotes, %%, *, emoji, CJK); '' lists all")
    search.add_argument("--field", choices=("any", "title", "content"), default="any", help="where to look (default: any)")
    search.add_argument("-s", "--case-sensitive", action="store_true", help="match case exactly (default: ignore case)")
    search.add_argument("-m", "--messages", action="store_true", help="search chat messages instead of articles")
    search.add_argument("-e", "--everything", action="store_true",
                        help="search articles and messages together, newest first, one snippet a hit")
    search.add_argument("--conversation", metavar="CONVERSATION", help="search the messages of one conversation")
    search.add_argument("-n", "--limit", type=int, default=20, help="hits per page, 1 to 1000 (default: 20)")
    search.add_argument("--after", metavar="CURSOR", help="the cursor printed after the previous page")
    search.add_argument("--color", choices=COLOUR_CHOICES, default="auto",
                        help="highlight matches: auto (on a terminal, unless NO_COLOR is set), always, never")

    chat = commands.add_parser("chat", parents=[common], help="conversations: send, receive, history, list",
                               description="Conversations and their messages. CONVERSATION is an id (12 or #12) "
                                           "or a title; send and receive start a conversation with a new title.")
    chat_commands = chat.add_subparsers(dest="chat_command", metavar="ACTION", required=True)

    def chat_command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = chat_commands.add_parser(name, parents=[common], help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    send = chat_command("send", cmd_chat_send, "add a message sent by me")
    receive = chat_command("receive", cmd_chat_send, "add a message I received")
    for sub in (send, receive):
        sub.add_argument("conversation", metavar="CONVERSATION")
        sub.add_argument("text", help=text_help)
    receive.add_argument("--at", metavar="TIME", help="when it was sent, ISO-8601 (default: now)")
    send.set_defaults(at=None)
    history = chat_command("history", cmd_chat_history, "a conversation's messages, oldest at the top")
    history.add_argument("conversation", metavar="CONVERSATION")
    history.add_argument("-n", "--limit", type=int, default=50, help="the newest N messages (default: 50)")
    history.add_argument("--before", metavar="CURSOR", help="the cursor printed after the previous page: earlier messages")
    history.add_argument("--all", action="store_true", help="the whole conversation")
    chat_command("list", cmd_chat_list, "conversations, most recent activity first")

    formats = ("json", "jsonl", "csv", "markdown", "transcript", "parquet")
    export = command("export", cmd_export, "write the store to a file or folder (a lossless .json backup by default)")
    export.add_argument("path", help="the file (.json, .jsonl, .csv, .txt, .parquet) or a new folder (with --format)")
    export.add_argument("-f", "--format", choices=formats, help="default: from the file's extension")
    export.add_argument("--conversation", metavar="CONVERSATION", help="the conversation of a transcript (id or title)")
    export.add_argument("--table", choices=("articles", "conversations", "messages"),
                        help="which table a single .csv or .parquet file holds (default: articles)")
    export.add_argument("--excel", action="store_true", help="CSV for Excel: a UTF-8 byte order mark first (CRLF line ends)")
    export.add_argument("--mode", type=_octal_mode, metavar="OCTAL",
                        help="permissions of what is written, e.g. 640 or 644 (default: 600, the owner only; "
                             "a folder also gets x where r is given)")

    import_ = command("import", cmd_import, "import a file or folder in one transaction (again: nothing changes)")
    import_.add_argument("path", help="the file or folder to import")
    import_.add_argument("-f", "--format", choices=formats + ("telegram", "whatsapp"),
                         help="default: from the file's extension (and a Telegram or WhatsApp export from its content)")
    import_.add_argument("--on-conflict", choices=("skip", "replace", "newer"), default="skip",
                         help="what a record whose uid is already stored does (default: skip)")
    import_.add_argument("--on-error", choices=("raise", "skip"), default="raise",
                         help="raise: a malformed record imports nothing (default); skip: leave it out and go on")
    import_.add_argument("--conversation", metavar="CONVERSATION",
                         help="a transcript's conversation: an id, or a title (found or started)")
    import_.add_argument("--me", help="Telegram, WhatsApp: your name in the chat (or Telegram id), whose messages are yours")
    import_.add_argument("--tz", help="the time zone of dates and times without one (default: UTC), e.g. Europe/Berlin or +08:00")
    import_.add_argument("--encoding", help="CSV: the file's encoding (default: UTF-8), e.g. gb18030, cp1252, utf-16")
    import_.add_argument("--delimiter", help="CSV: the field delimiter (default: sniffed: , ; or tab)")
    import_.add_argument("--column", action="append", default=[], metavar="HEADER=NAME",
                         help="CSV: read the column HEADER as NotesKit's NAME (title, content, created_at, ...); repeatable")
    import_.add_argument("--ignore-unknown-columns", action="store_true", help="CSV: drop columns NotesKit does not know")
    import_.add_argument("--date-order", choices=("dmy", "mdy"), help="WhatsApp: day or month first, when no day is above 12")
    import_.add_argument("--table", choices=("articles", "conversations", "messages"),
                         help="Parquet: the table the file holds, when neither its metadata nor its columns tell")
    import_.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    def article_selection(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("-w", "--width", type=float, default=375, help="the list's width in pixels (default: 375)")
        sub.add_argument("-n", "--limit", type=int, default=20, help="the newest N articles or messages (default: 20)")
        sub.add_argument("--all", action="store_true", help="every article (or message)")
        sub.add_argument("--ids", type=int, nargs="+", metavar="ID", help="these articles, in this order")
        sub.add_argument("--conversation", metavar="CONVERSATION",
                         help="a conversation's bubbles instead of article rows (an id or a title)")

    heights = command("heights", cmd_heights, "row heights of articles (or of a conversation's bubbles), measured with Pango")
    article_selection(heights)

    admin = commands.add_parser("admin", parents=[common], help="a store on PostgreSQL: add users",
                                description="Administration of a store on a PostgreSQL server (--db postgresql://...).")
    admin_commands = admin.add_subparsers(dest="admin_command", metavar="ACTION", required=True)
    add_user = admin_commands.add_parser("add-user", parents=[common], help="create a login role that sees only its own rows",
                                         description="Creates a PostgreSQL login role that may use the store and sees "
                                                     "and changes only its own rows. Needs the store's administrator.")
    add_user.set_defaults(handler=cmd_admin_add_user)
    add_user.add_argument("name", help="the new role's name")
    secret = add_user.add_mutually_exclusive_group()
    secret.add_argument("--password-stdin", action="store_true", help="read the password from the first line of standard input")
    secret.add_argument("--no-password", action="store_true",
                        help="no password: the role logs in only where the server trusts it (peer authentication)")

    doctor = commands.add_parser("doctor", parents=[common], help="list the store's files other accounts can read",
                                 description="Lists the store's files (the store, its -wal and -shm, and the default "
                                             "data folder) that other accounts can read. Changes nothing; exit status 1 "
                                             "when it lists anything.")
    doctor.set_defaults(handler=None)

    render = command("render", cmd_render, "draw article rows (or a conversation) into a PNG")
    render.add_argument("output", metavar="OUT.png", help="the PNG file to write")
    article_selection(render)
    return parser


def _octal_mode(text: str) -> int:
    try:
        return file_mode(int(text, 8))
    except (ValueError, NotesError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a file mode such as 600, 640 or 644") from None


def open_store(path: str) -> Store:
    if path == ":memory:":
        return Store.memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        store = Store.open(path)
    for warning in caught:
        print(f"noteskit: warning: {warning.message}", file=sys.stderr)
    return store


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one ``noteskit`` command and returns its exit status (0, 1 for an error, 2 for a usage mistake).

    >>> from noteskit.cli import main
    >>> main(["--db", ":memory:", "list"])
    0
    """
    parser = build_parser()
    for n, arg in enumerate(sys.argv[1:] if argv is None else argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # Python decoded undecodable bytes as lone surrogates
            try:
                raw = arg.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raw = arg.encode("utf-8", "backslashreplace")
            print(f"noteskit: error: argument {n} is not valid UTF-8 text: {raw!r}", file=sys.stderr)
            return 2
    args = parser.parse_args(argv)
    db = getattr(args, "db", None)
    args.db = str(default_store_path()) if db is None else db
    args.default_db = db is None
    args.json = getattr(args, "json", False)
    try:
        if args.handler is None:
            return cmd_doctor(args)
        with open_store(args.db) as store:
            args.handler(store, args)
        sys.stdout.flush()
    except UsageError as e:
        print(f"noteskit: error: {visible(str(e))}", file=sys.stderr)
        return 2
    except (NotesError, CommandError) as e:
        print(f"noteskit: error: {said(e)}", file=sys.stderr)
        return 1
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # `noteskit list | head`: the reader left; not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(f"noteskit: error: {e.strerror or e}{f': {e.filename}' if e.filename else ''}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("noteskit: interrupted", file=sys.stderr)
        return 130
    return 0
