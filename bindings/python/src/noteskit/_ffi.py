"""Low-level bindings: one ctypes declaration per export of ``include/noteskit.h``.

Each declaration carries its C prototype in a comment. Owned strings come back as ``c_void_p``
(never ``c_char_p``, which would copy and lose the pointer) and are always released with
``nk_free`` by :func:`take_json` / :func:`take_string`. Every status goes through
:func:`check`, which raises the mapped :class:`~noteskit.NotesError` subclass.

The library is found by ``NOTESKIT_LIBRARY``, then the copy inside this package, then the build
folder of a checkout (``.build/release`` above ``bindings/python``).
"""
from __future__ import annotations

import ctypes
import json
import os
from ctypes import CFUNCTYPE, POINTER, byref, c_char_p, c_double, c_int32, c_int64, c_void_p
from pathlib import Path
from typing import Any, List, Optional

from .errors import InvalidArgumentError, LibraryError, NotesError, ValidationError, error_from

ABI_VERSION = 5
LIBRARY_NAME = "libNotesCAPI.so"

c_int32_p = POINTER(c_int32)
c_int64_p = POINTER(c_int64)
c_double_p = POINTER(c_double)
c_void_pp = POINTER(c_void_p)

# The Arrow C Data Interface and C Stream Interface structs (include/noteskit.h, "Arrow").
def _arrow_fields(struct: Any, own: List[Any]) -> None:
    """Gives ``struct`` its fields: its ``own``, then the tail the Arrow C Data Interface gives
    ArrowSchema and ArrowArray alike (children and dictionary of the same struct, the release
    callback and its private data)."""
    struct._fields_ = own + [
        ("children", POINTER(POINTER(struct))),
        ("dictionary", POINTER(struct)),
        ("release", CFUNCTYPE(None, POINTER(struct))),
        ("private_data", c_void_p),
    ]


class ArrowSchema(ctypes.Structure):
    pass


_arrow_fields(ArrowSchema, [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_char_p),
    ("flags", c_int64),
    ("n_children", c_int64),
])


class ArrowArray(ctypes.Structure):
    pass


_arrow_fields(ArrowArray, [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", POINTER(c_void_p)),
])


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    ("get_schema", CFUNCTYPE(ctypes.c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))),
    ("get_next", CFUNCTYPE(ctypes.c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))),
    ("get_last_error", CFUNCTYPE(c_void_p, POINTER(ArrowArrayStream))),
    ("release", CFUNCTYPE(None, POINTER(ArrowArrayStream))),
    ("private_data", c_void_p),
]


ArrowArray_p = POINTER(ArrowArray)
ArrowSchema_p = POINTER(ArrowSchema)
ArrowArrayStream_p = POINTER(ArrowArrayStream)


# typedef void (*nk_change_callback)(void *user_data, const char *changes_json);
nk_change_callback = CFUNCTYPE(None, c_void_p, c_char_p)
# typedef int32_t (*nk_progress_callback)(void *user_data, int64_t done, int64_t total);
nk_progress_callback = CFUNCTYPE(c_int32, c_void_p, c_int64, c_int64)


def library_candidates() -> List[Path]:
    """Where the library is looked for, in order."""
    here = Path(__file__).resolve().parent
    found: List[Path] = []
    env = os.environ.get("NOTESKIT_LIBRARY")
    if env:
        found.append(Path(env))
    found.append(here / LIBRARY_NAME)
    for parent in here.parents:
        if (parent / "Package.swift").exists():
            found.append(parent / ".build" / "release" / LIBRARY_NAME)
            break
    return found


def _load() -> ctypes.CDLL:
    candidates = library_candidates()
    env = os.environ.get("NOTESKIT_LIBRARY")
    if env and not Path(env).exists():
        raise LibraryError(f"NOTESKIT_LIBRARY points to {env}, which does not exist")
    for path in candidates:
        if path.exists():
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                raise LibraryError(f"cannot load {path}: {e}") from None
            break
    else:
        where = ", ".join(str(p) for p in candidates)
        raise LibraryError(f"{LIBRARY_NAME} not found (looked in {where}); run `make lib` or set NOTESKIT_LIBRARY")
    lib.nk_abi_version.argtypes = []
    lib.nk_abi_version.restype = c_int32
    found = lib.nk_abi_version()
    if found != ABI_VERSION:
        raise LibraryError(f"{path} has ABI version {found}, this package needs {ABI_VERSION}; rebuild the library")
    return lib


lib = _load()
LIBRARY_PATH = Path(lib._name)


def _declare(name: str, restype: Any, *argtypes: Any) -> Any:
    function = getattr(lib, name)
    function.argtypes = list(argtypes)
    function.restype = restype
    return function


# ---- Library ------------------------------------------------------------------------------------
# int32_t nk_abi_version(void);
nk_abi_version = _declare("nk_abi_version", c_int32)
# const char *nk_version(void);   (static, not owned)
nk_version = _declare("nk_version", c_char_p)
# void nk_free(void *pointer);
nk_free = _declare("nk_free", None, c_void_p)
# char *nk_last_error(void);   (owned)
nk_last_error = _declare("nk_last_error", c_void_p)
# int32_t nk_arrow_outstanding(int64_t *out_count);
nk_arrow_outstanding = _declare("nk_arrow_outstanding", c_int32, c_int64_p)

# ---- Store --------------------------------------------------------------------------------------
# int32_t nk_store_open(const char *path, int32_t flags, int32_t mode, nk_store **out_store);
nk_store_open = _declare("nk_store_open", c_int32, c_char_p, c_int32, c_int32, c_void_pp)
NK_OPEN_READ_ONLY = 1
NK_OPEN_FAST = 2
# int32_t nk_exposed_files(const char *path, int32_t mode, char **out_json);
nk_exposed_files = _declare("nk_exposed_files", c_int32, c_char_p, c_int32, c_void_pp)
# int32_t nk_store_open_memory(nk_store **out_store);
nk_store_open_memory = _declare("nk_store_open_memory", c_int32, c_void_pp)
# int32_t nk_store_close(nk_store *store);
nk_store_close = _declare("nk_store_close", c_int32, c_void_p)
# int32_t nk_store_changes(nk_store *store, int64_t since, int64_t limit, struct ArrowArray *out_array,
#                          struct ArrowSchema *out_schema);
nk_store_changes = _declare("nk_store_changes", c_int32, c_void_p, c_int64, c_int64, ArrowArray_p, ArrowSchema_p)
# int32_t nk_store_last_change_seq(nk_store *store, int64_t *out_seq);
nk_store_last_change_seq = _declare("nk_store_last_change_seq", c_int32, c_void_p, c_int64_p)
# int32_t nk_store_subscribe(nk_store *store, nk_change_callback callback, void *user_data, int64_t *out_token);
nk_store_subscribe = _declare("nk_store_subscribe", c_int32, c_void_p, nk_change_callback, c_void_p, c_int64_p)
# int32_t nk_store_unsubscribe(nk_store *store, int64_t token);
nk_store_unsubscribe = _declare("nk_store_unsubscribe", c_int32, c_void_p, c_int64)
# int32_t nk_store_create_user(nk_store *store, const char *name, const char *password);
nk_store_create_user = _declare("nk_store_create_user", c_int32, c_void_p, c_char_p, c_char_p)
# int32_t nk_store_set_max_size(nk_store *store, int64_t max_bytes, int64_t *out_max_bytes);
nk_store_set_max_size = _declare("nk_store_set_max_size", c_int32, c_void_p, c_int64, c_int64_p)

# ---- Articles -----------------------------------------------------------------------------------
# int32_t nk_article_create(nk_store *store, const char *title, const char *content, char **out_row);
nk_article_create = _declare("nk_article_create", c_int32, c_void_p, c_char_p, c_char_p, c_void_pp)
# int32_t nk_article_create_many(nk_store *store, struct ArrowArrayStream *records, int32_t flags, void **out_created);
nk_article_create_many = _declare("nk_article_create_many", c_int32, c_void_p, POINTER(ArrowArrayStream), c_int32, c_void_pp)
# int32_t nk_article_get(nk_store *store, int64_t id, void *buffer, int64_t capacity, char **out_row);
nk_article_get = _declare("nk_article_get", c_int32, c_void_p, c_int64, c_void_p, c_int64, c_void_pp)
# The same export again without argtypes, for ``articles.get`` (the hottest call) when its integers
# fit in 32 bits: ctypes then passes a Python int as a C int, which libffi sign-extends into the
# int64_t's register, and a ``byref`` as its pointer, with no converter call per argument (that
# saves 4 000 of a get's 47 000 instructions). A larger int would be cut to 32 bits: callers check.
nk_article_get_int32 = lib["nk_article_get"]
nk_article_get_int32.restype = c_int32
# int32_t nk_article_update(nk_store *store, int64_t id, const char *title, const char *content,
#                           int64_t expected_revision, char **out_row);
nk_article_update = _declare("nk_article_update", c_int32, c_void_p, c_int64, c_char_p, c_char_p, c_int64, c_void_pp)
# int32_t nk_article_delete(nk_store *store, int64_t id);
nk_article_delete = _declare("nk_article_delete", c_int32, c_void_p, c_int64)
# int32_t nk_article_list(nk_store *store, int64_t limit, const char *after, int64_t since_ms, int64_t until_ms, int32_t order,
#                         struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);
nk_article_list = _declare("nk_article_list", c_int32, c_void_p, c_int64, c_char_p, c_int64, c_int64, c_int32, ArrowArray_p,
                           ArrowSchema_p, c_void_pp)
# int32_t nk_article_select(nk_store *store, int64_t since_ms, int64_t until_ms, int32_t order, int32_t threads,
#                           struct ArrowArrayStream *out_stream);
nk_article_select = _declare("nk_article_select", c_int32, c_void_p, c_int64, c_int64, c_int32, c_int32, ArrowArrayStream_p)
# int32_t nk_article_select_count(nk_store *store, int64_t since_ms, int64_t until_ms, int64_t *out_count);
nk_article_select_count = _declare("nk_article_select_count", c_int32, c_void_p, c_int64, c_int64, c_int64_p)

# ---- Drafts -------------------------------------------------------------------------------------
# int32_t nk_draft_new(nk_store *store, const char *title, const char *content, char **out_row);
nk_draft_new = _declare("nk_draft_new", c_int32, c_void_p, c_char_p, c_char_p, c_void_pp)
# int32_t nk_draft_edit(nk_store *store, int64_t article_id, char **out_row);
nk_draft_edit = _declare("nk_draft_edit", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_draft_get(nk_store *store, int64_t id, char **out_row);
nk_draft_get = _declare("nk_draft_get", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_draft_list(nk_store *store, struct ArrowArray *out_array, struct ArrowSchema *out_schema);
nk_draft_list = _declare("nk_draft_list", c_int32, c_void_p, ArrowArray_p, ArrowSchema_p)
# int32_t nk_draft_update(nk_store *store, int64_t id, const char *title, const char *content, char **out_row);
nk_draft_update = _declare("nk_draft_update", c_int32, c_void_p, c_int64, c_char_p, c_char_p, c_void_pp)
# int32_t nk_draft_save(nk_store *store, int64_t id, char **out_row);
nk_draft_save = _declare("nk_draft_save", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_draft_discard(nk_store *store, int64_t id);
nk_draft_discard = _declare("nk_draft_discard", c_int32, c_void_p, c_int64)

# ---- Search -------------------------------------------------------------------------------------
# int32_t nk_article_search(nk_store *store, const char *query, const char *field, int32_t case_sensitive,
#                           int64_t since_ms, int64_t until_ms, int32_t order, int64_t limit, const char *after,
#                           struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);
nk_article_search = _declare("nk_article_search", c_int32, c_void_p, c_char_p, c_char_p, c_int32, c_int64, c_int64, c_int32,
                             c_int64, c_char_p, ArrowArray_p, ArrowSchema_p, c_void_pp)
# int32_t nk_message_search(nk_store *store, const char *query, int64_t conversation_id, int32_t flags,
#                           int64_t since_ms, int64_t until_ms, int64_t limit, const char *after,
#                           struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);
NK_SEARCH_CASE_SENSITIVE = 1
NK_SEARCH_OLDEST_FIRST = 2
nk_message_search = _declare("nk_message_search", c_int32, c_void_p, c_char_p, c_int64, c_int32, c_int64, c_int64, c_int64,
                             c_char_p, ArrowArray_p, ArrowSchema_p, c_void_pp)
# int32_t nk_store_search(nk_store *store, const char *query, int32_t kinds, int64_t since_ms, int64_t until_ms,
#                         int64_t limit, const char *after, char **out_order, struct ArrowArray *out_messages,
#                         struct ArrowSchema *out_messages_schema, struct ArrowArray *out_array,
#                         struct ArrowSchema *out_schema, char **out_cursor);
NK_KIND_ARTICLES = 1
NK_KIND_MESSAGES = 2
nk_store_search = _declare("nk_store_search", c_int32, c_void_p, c_char_p, c_int32, c_int64, c_int64, c_int64, c_char_p,
                           c_void_pp, ArrowArray_p, ArrowSchema_p, ArrowArray_p, ArrowSchema_p, c_void_pp)
# int32_t nk_snippet(const char *text, const int64_t *spans, int64_t span_count, int64_t width, char **out_json);
nk_snippet = _declare("nk_snippet", c_int32, c_char_p, c_void_p, c_int64, c_int64, c_void_pp)
# int32_t nk_store_reindex(nk_store *store);
nk_store_reindex = _declare("nk_store_reindex", c_int32, c_void_p)
# int32_t nk_store_compact(nk_store *store, int64_t retain_ms, char **out_json);
nk_store_compact = _declare("nk_store_compact", c_int32, c_void_p, c_int64, c_void_pp)


# ---- Conversations ------------------------------------------------------------------------------
# int32_t nk_conversation_create(nk_store *store, const char *title, char **out_row);
nk_conversation_create = _declare("nk_conversation_create", c_int32, c_void_p, c_char_p, c_void_pp)
# int32_t nk_conversation_get(nk_store *store, int64_t id, char **out_row);
nk_conversation_get = _declare("nk_conversation_get", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_conversation_list(nk_store *store, int64_t limit, const char *after, struct ArrowArray *out_array,
#                              struct ArrowSchema *out_schema, char **out_cursor);
nk_conversation_list = _declare("nk_conversation_list", c_int32, c_void_p, c_int64, c_char_p, ArrowArray_p, ArrowSchema_p,
                                c_void_pp)
# int32_t nk_conversation_select(nk_store *store, int32_t threads, struct ArrowArrayStream *out_stream);
nk_conversation_select = _declare("nk_conversation_select", c_int32, c_void_p, c_int32, ArrowArrayStream_p)
# int32_t nk_conversation_select_count(nk_store *store, int64_t *out_count);
nk_conversation_select_count = _declare("nk_conversation_select_count", c_int32, c_void_p, c_int64_p)
# int32_t nk_conversation_rename(nk_store *store, int64_t id, const char *title, char **out_row);
nk_conversation_rename = _declare("nk_conversation_rename", c_int32, c_void_p, c_int64, c_char_p, c_void_pp)
# int32_t nk_conversation_delete(nk_store *store, int64_t id);
nk_conversation_delete = _declare("nk_conversation_delete", c_int32, c_void_p, c_int64)
# int32_t nk_conversation_history(nk_store *store, int64_t conversation_id, int64_t limit, const char *before,
#                                 int64_t since_ms, int64_t until_ms, struct ArrowArray *out_array,
#                                 struct ArrowSchema *out_schema, char **out_cursor);
nk_conversation_history = _declare("nk_conversation_history", c_int32, c_void_p, c_int64, c_int64, c_char_p, c_int64, c_int64,
                                   ArrowArray_p, ArrowSchema_p, c_void_pp)

# ---- Messages -----------------------------------------------------------------------------------
# int32_t nk_message_send(nk_store *store, int64_t conversation_id, const char *text, char **out_row);
nk_message_send = _declare("nk_message_send", c_int32, c_void_p, c_int64, c_char_p, c_void_pp)
# int32_t nk_message_receive(nk_store *store, int64_t conversation_id, const char *text, const char *sent_at,
#                            char **out_row);
nk_message_receive = _declare("nk_message_receive", c_int32, c_void_p, c_int64, c_char_p, c_char_p, c_void_pp)
# int32_t nk_message_get(nk_store *store, int64_t id, char **out_row);
nk_message_get = _declare("nk_message_get", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_message_delete(nk_store *store, int64_t id);
nk_message_delete = _declare("nk_message_delete", c_int32, c_void_p, c_int64)
# int32_t nk_message_insert_many(nk_store *store, int64_t conversation_id, struct ArrowArrayStream *records, int32_t flags,
#                                void **out_created);
nk_message_insert_many = _declare("nk_message_insert_many", c_int32, c_void_p, c_int64, POINTER(ArrowArrayStream), c_int32,
                                  c_void_pp)
NK_CREATED_TEXT = 1
# int32_t nk_message_select(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms, int32_t from_me,
#                           int32_t order, int32_t threads, struct ArrowArrayStream *out_stream);
nk_message_select = _declare("nk_message_select", c_int32, c_void_p, c_int64, c_int64, c_int64, c_int32, c_int32, c_int32,
                             ArrowArrayStream_p)
# int32_t nk_message_select_count(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms,
#                                 int32_t from_me, int64_t *out_count);
nk_message_select_count = _declare("nk_message_select_count", c_int32, c_void_p, c_int64, c_int64, c_int64, c_int32,
                                   c_int64_p)
# ---- Analysis -----------------------------------------------------------------------------------
# int32_t nk_article_get_many(nk_store *store, const int64_t *ids, int64_t count, int32_t missing,
#                             struct ArrowArray *out_array, struct ArrowSchema *out_schema);
nk_article_get_many = _declare("nk_article_get_many", c_int32, c_void_p, c_void_p, c_int64, c_int32, ArrowArray_p, ArrowSchema_p)
# int32_t nk_message_get_many(nk_store *store, const int64_t *ids, int64_t count, int32_t missing,
#                             struct ArrowArray *out_array, struct ArrowSchema *out_schema);
nk_message_get_many = _declare("nk_message_get_many", c_int32, c_void_p, c_void_p, c_int64, c_int32, ArrowArray_p, ArrowSchema_p)
# int32_t nk_article_update_many(nk_store *store, struct ArrowArrayStream *rows, struct ArrowArray *out_array,
#                                struct ArrowSchema *out_schema);
nk_article_update_many = _declare("nk_article_update_many", c_int32, c_void_p, POINTER(ArrowArrayStream), ArrowArray_p,
                                  ArrowSchema_p)
# int32_t nk_article_delete_many(nk_store *store, const int64_t *ids, int64_t count, int64_t *out_count);
nk_article_delete_many = _declare("nk_article_delete_many", c_int32, c_void_p, c_void_p, c_int64, c_int64_p)
# int32_t nk_message_delete_many(nk_store *store, const int64_t *ids, int64_t count, int64_t *out_count);
nk_message_delete_many = _declare("nk_message_delete_many", c_int32, c_void_p, c_void_p, c_int64, c_int64_p)
# int32_t nk_message_delete_range(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms,
#                                 int64_t *out_count);
nk_message_delete_range = _declare("nk_message_delete_range", c_int32, c_void_p, c_int64, c_int64, c_int64, c_int64_p)
# int32_t nk_conversation_find(nk_store *store, const char *title, struct ArrowArray *out_array,
#                              struct ArrowSchema *out_schema);
nk_conversation_find = _declare("nk_conversation_find", c_int32, c_void_p, c_char_p, ArrowArray_p, ArrowSchema_p)
# int32_t nk_conversation_stats(nk_store *store, struct ArrowArrayStream *out_stream);
nk_conversation_stats = _declare("nk_conversation_stats", c_int32, c_void_p, ArrowArrayStream_p)

# ---- Layout -------------------------------------------------------------------------------------
# int32_t nk_measure_text(const char *text, double max_width, const char *font, double size, char **out_json);
nk_measure_text = _declare("nk_measure_text", c_int32, c_char_p, c_double, c_char_p, c_double, c_void_pp)
# int32_t nk_font_configuration(char **out_json);
nk_font_configuration = _declare("nk_font_configuration", c_int32, c_void_pp)
# int32_t nk_style_resolve(const char *kind, const char *style_json, char **out_json);
nk_style_resolve = _declare("nk_style_resolve", c_int32, c_char_p, c_char_p, c_void_pp)
# int32_t nk_layout_open(nk_store *store, double width, const char *article_style_json, const char *bubble_style_json,
#                        double estimated_height, int64_t cache_bytes, nk_layout **out_layout);
nk_layout_open = _declare("nk_layout_open", c_int32, c_void_p, c_double, c_char_p, c_char_p, c_double, c_int64, c_void_pp)
# int32_t nk_layout_close(nk_layout *layout);
nk_layout_close = _declare("nk_layout_close", c_int32, c_void_p)
# int32_t nk_layout_article_height(nk_layout *layout, int64_t id, double *out_height);
nk_layout_article_height = _declare("nk_layout_article_height", c_int32, c_void_p, c_int64, c_double_p)
# int32_t nk_layout_article_heights(nk_layout *layout, const char *ids_json, char **out_json);
nk_layout_article_heights = _declare("nk_layout_article_heights", c_int32, c_void_p, c_char_p, c_void_pp)
# int32_t nk_layout_bubble(nk_layout *layout, int64_t message_id, char **out_json);
nk_layout_bubble = _declare("nk_layout_bubble", c_int32, c_void_p, c_int64, c_void_pp)
# int32_t nk_layout_bubbles(nk_layout *layout, const char *ids_json, char **out_json);
nk_layout_bubbles = _declare("nk_layout_bubbles", c_int32, c_void_p, c_char_p, c_void_pp)
# int32_t nk_layout_prefetch(nk_layout *layout, const char *kind, const char *ids_json, int32_t threads,
#                            int64_t *out_measured);
nk_layout_prefetch = _declare("nk_layout_prefetch", c_int32, c_void_p, c_char_p, c_char_p, c_int32, c_int64_p)
# int32_t nk_layout_stats(nk_layout *layout, char **out_json);
nk_layout_stats = _declare("nk_layout_stats", c_int32, c_void_p, c_void_pp)
# int32_t nk_layout_render_articles(nk_layout *layout, const char *ids_json, const char *path, char **out_json);
nk_layout_render_articles = _declare("nk_layout_render_articles", c_int32, c_void_p, c_char_p, c_char_p, c_void_pp)
# int32_t nk_layout_render_conversation(nk_layout *layout, int64_t conversation_id, const char *path, char **out_json);
nk_layout_render_conversation = _declare("nk_layout_render_conversation", c_int32, c_void_p, c_int64, c_char_p, c_void_pp)
# int32_t nk_layout_rows(nk_layout *layout, const char *kind, const char *ids_json, nk_rows **out_rows);
nk_layout_rows = _declare("nk_layout_rows", c_int32, c_void_p, c_char_p, c_char_p, c_void_pp)
# int32_t nk_rows_close(nk_rows *rows);
nk_rows_close = _declare("nk_rows_close", c_int32, c_void_p)
# int32_t nk_rows_total_height(nk_rows *rows, double *out_height);
nk_rows_total_height = _declare("nk_rows_total_height", c_int32, c_void_p, c_double_p)
# int32_t nk_rows_offset_of(nk_rows *rows, int64_t row, double *out_offset);
nk_rows_offset_of = _declare("nk_rows_offset_of", c_int32, c_void_p, c_int64, c_double_p)
# int32_t nk_rows_height_of(nk_rows *rows, int64_t row, double *out_height);
nk_rows_height_of = _declare("nk_rows_height_of", c_int32, c_void_p, c_int64, c_double_p)
# int32_t nk_rows_is_measured(nk_rows *rows, int64_t row, int32_t *out_measured);
nk_rows_is_measured = _declare("nk_rows_is_measured", c_int32, c_void_p, c_int64, c_int32_p)
# int32_t nk_rows_row_at(nk_rows *rows, double y, int64_t *out_row);
nk_rows_row_at = _declare("nk_rows_row_at", c_int32, c_void_p, c_double, c_int64_p)
# int32_t nk_rows_visible(nk_rows *rows, double offset, double viewport_height, int64_t *out_first, int64_t *out_stop);
nk_rows_visible = _declare("nk_rows_visible", c_int32, c_void_p, c_double, c_double, c_int64_p, c_int64_p)
# int32_t nk_keyboard_apply(const char *state_json, const char *event_json, char **out_json);
nk_keyboard_apply = _declare("nk_keyboard_apply", c_int32, c_char_p, c_char_p, c_void_pp)
# int32_t nk_search_panel_apply(const char *state_json, const char *event_json, char **out_json);
nk_search_panel_apply = _declare("nk_search_panel_apply", c_int32, c_char_p, c_char_p, c_void_pp)
# int32_t nk_interaction_constants(char **out_json);
nk_interaction_constants = _declare("nk_interaction_constants", c_int32, c_void_pp)


# ---- Import and export --------------------------------------------------------------------------
# int32_t nk_store_export(nk_store *store, const char *path, const char *format, const char *options_json,
#                         char **out_json);
nk_store_export = _declare("nk_store_export", c_int32, c_void_p, c_char_p, c_char_p, c_char_p, c_void_pp)
# int32_t nk_store_import(nk_store *store, const char *path, const char *format, const char *options_json,
#                         nk_progress_callback progress, void *user_data, char **out_json);
nk_store_import = _declare("nk_store_import", c_int32, c_void_p, c_char_p, c_char_p, c_char_p, nk_progress_callback,
                           c_void_p, c_void_pp)
# int32_t nk_store_import_table(nk_store *store, const char *table, struct ArrowArrayStream *records, const char *source,
#                               const char *options_json, char **out_json);
nk_store_import_table = _declare("nk_store_import_table", c_int32, c_void_p, c_char_p, ArrowArrayStream_p, c_char_p, c_char_p,
                                 c_void_pp)


# ---- Testing only (the power-cut simulator's seam; see stress/powercut.py) -----------------------
# int32_t nk_testing_set_file_calls(const void *calls);
nk_testing_set_file_calls = _declare("nk_testing_set_file_calls", c_int32, c_void_p)


# ---- Helpers ------------------------------------------------------------------------------------

def last_error() -> NotesError:
    """This thread's last library error as an exception."""
    pointer = nk_last_error()
    if not pointer:
        return NotesError("the library reported a failure without an error message")
    try:
        info = json.loads(ctypes.string_at(pointer))
    finally:
        nk_free(pointer)
    return error_from(info)


def check(status: int) -> None:
    """Raises the mapped NotesError when ``status`` is not NK_OK."""
    if status:
        raise last_error()


# The library always writes one well-formed JSON value, so the decoder's scanner can be called
# directly (json.loads adds encoding detection and a trailing-text check: a third of the cost).
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__, not in the stubs
_string_at = ctypes.string_at


def take_json(pointer: Optional[int]) -> Any:
    """Decodes an owned JSON string and frees it."""
    if not pointer:
        raise NotesError("the library returned no result")
    try:
        return _scan_json(_string_at(pointer).decode(), 0)[0]
    finally:
        nk_free(pointer)


def call_json(function: Any, *args: Any) -> Any:
    """Calls an export whose last parameter is ``char **out_json`` and returns the decoded JSON."""
    out = c_void_p()
    status = function(*args, byref(out))
    if status:
        raise last_error()
    return take_json(out.value)


def call_int(function: Any, *args: Any) -> int:
    """Calls an export whose last parameter is ``int64_t *out`` and returns the integer."""
    out = c_int64()
    check(function(*args, byref(out)))
    return out.value


def text(value: Any, field: str) -> bytes:
    """A Python string as the NUL-terminated UTF-8 the ABI takes, or the error that names ``field``."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{field} must be a str, got {type(value).__name__}", field=field)
    if "\x00" in value:
        # A C string cannot carry it to the library, so it is refused here, with the library's code.
        raise ValidationError(f"{field} contains a NUL character", field=field, code=f"{field}_contains_nul")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"{field} is not valid Unicode (it has a lone surrogate)", field=field) from None


def optional_text(value: Any, field: str) -> Optional[bytes]:
    return None if value is None else text(value, field)


def call_double(function: Any, *args: Any) -> float:
    """Calls an export whose last parameter is ``double *out`` and returns the number."""
    out = c_double()
    check(function(*args, byref(out)))
    return out.value


def number(value: Any, field: str) -> float:
    """A real-number argument (bool refused; NaN and range checks are the library's), or InvalidArgumentError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(f"{field} must be a number, got {type(value).__name__}", field=field)
    try:
        return float(value)
    except OverflowError:
        raise ValidationError(f"{field} is out of range: {value}", field=field) from None


def integer(value: Any, field: str) -> int:
    """An int argument (bool refused), or InvalidArgumentError; range checks are the library's."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{field} must be an int, got {type(value).__name__}", field=field)
    if not -(2 ** 63) <= value < 2 ** 63:
        raise ValidationError(f"{field} is out of range: {value}", field=field)
    return value
