"""NotesKit from Python: articles, drafts and chat in a SQLite store, literal search, Pango layout.

>>> import noteskit as nk
>>> with nk.Store.memory() as store:
...     a = store.articles.create(title="2026-11-29", content="今天天气真好")
...     [x.title for x in store.articles.list()]
['2026-11-29']

The shared library is looked for in ``$NOTESKIT_LIBRARY``, then inside this package (where the
wheel puts it), then in the ``.build/release`` folder of the checkout holding this package;
:data:`LIBRARY_PATH` is the one that was loaded. ``noteskit`` (or ``python -m noteskit``) is the
command line, :mod:`noteskit.cli`.
"""
from ._ffi import LIBRARY_PATH
from .errors import (AuthenticationError, BusyError, CancelledError, ClosedError, ConflictError, CorruptStoreError, FontError, FormatError,
                     InternalError, InvalidArgumentError, LibraryError, NotesError, NotFoundError, ReadOnlyError,
                     SchemaError, StorageError, StorageFullError, UnreachableError, ValidationError)
from .articles import Articles, Draft
from .chat import Conversations, Messages
from .exchange import ExportReport, ImportReport, SkippedRecord
from .feed import CompactReport
from .layout import (ArticleRowStyle, Bubble, BubbleStyle, FontConfiguration, KeyboardModel, Layout, LayoutStats, Picture,
                     Rows, SearchPanel, TextMetrics, font_configuration, measure_text)
from .models import Article, Change, Conversation, Message, MessageHit, Page, SearchHit
from .privacy import ExposedFile, PrivacyWarning, exposed_files
from .search import Snippet
from .selection import Selection
from .store import Store, Subscription, default_store_path

__version__ = "0.1.0"


def library_version() -> str:
    """The version of the loaded native library (:data:`LIBRARY_PATH` says which file was loaded).

    >>> import noteskit as nk
    >>> nk.library_version() == nk.__version__
    True
    """
    from . import _ffi

    return bytes(_ffi.nk_version()).decode()


__all__ = [
    "ArticleRowStyle", "Bubble", "BubbleStyle", "FontConfiguration", "KeyboardModel", "Layout", "LayoutStats", "Picture",
    "Rows", "SearchPanel", "TextMetrics", "font_configuration", "measure_text",
    "Article", "Articles", "AuthenticationError", "BusyError", "CancelledError", "Change", "ClosedError", "CompactReport", "ConflictError", "Conversation",
    "Conversations", "CorruptStoreError", "Draft", "ExportReport", "ExposedFile", "FontError", "FormatError", "ImportReport", "InternalError", "InvalidArgumentError",
    "LIBRARY_PATH", "LibraryError", "Message", "MessageHit", "Messages", "NotFoundError", "NotesError", "Page", "PrivacyWarning", "ReadOnlyError", "SchemaError",
    "SearchHit", "Selection", "SkippedRecord", "Snippet", "StorageError", "StorageFullError", "Store", "Subscription", "UnreachableError", "ValidationError", "default_store_path", "exposed_files",
    "library_version",
]
