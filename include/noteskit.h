/*
 * noteskit.h — the C ABI of NotesKit (libNotesCAPI.so).
 *
 * Conventions (every function follows them):
 *  - Every call returns an int32_t status: NK_OK (0) or one NK_E_* code. Results come back through
 *    out-parameters, which must not be NULL; on failure they are left untouched.
 *  - After a failed call, nk_last_error() on the same thread returns the error as JSON:
 *    {"code": int, "kind": str, "error_code": str, "message": str, "messages"?: {language: str},
 *     "field"?: str, "line"?: int, "file"?: str, "sqlite_code"?: int, "options"?: [option]}.
 *    "error_code" is a stable machine-readable name ("title_empty", "revision_conflict", ...);
 *    "messages" the apps' own wording by BCP 47 language ("zh-Hans"), where they had one;
 *    "message" is English, in the core's (Swift's) words. Each option it names (an argument of the
 *    call, as the Swift API spells it) is {"text": as it stands in "message" ("`readOnly: true`",
 *    "`format: .markdown`", "`format:`"), "name": "readOnly", "value"?: str or bool}: a binding
 *    replaces "text" with its own spelling (Python: read_only=True, format="markdown").
 *  - Strings in are UTF-8 and NUL-terminated. NULL for a required string, or invalid UTF-8, is
 *    NK_E_INVALID_ARGUMENT. Arguments marked "nullable" take NULL as "not given".
 *  - Strings out marked "owned" are malloc'ed for the caller: release each with nk_free().
 *  - Lists of records leave as Arrow record batches (C Data Interface: an ArrowArray of type struct
 *    and its ArrowSchema) or streams (C Stream Interface), columns named as the record's fields:
 *    ids int64, booleans bool, times timestamp[ms, tz=UTC], text string (large_string where a
 *    batch's text passes 2 GiB). The caller passes the structs and releases each one it got
 *    (release callback, exactly once); on failure they are left untouched.
 *  - One record leaves as a packed row (owned: free with nk_free), see "Records" below.
 *  - Bulk records in travel as Arrow streams too (see "Bulk writes"). Small inputs (options,
 *    styles) travel as UTF-8 JSON; times in JSON are ISO-8601 UTC text ("2026-11-29T15:28:06.123Z"),
 *    times in rows and batches UTC milliseconds.
 *  - Handles (nk_store *) are opaque and checked on every call: a closed, forged or wrong-kind
 *    handle is an error (NK_E_CLOSED or NK_E_INVALID_ARGUMENT), never a crash.
 *  - Every function may be called from several threads at once, on the same store too.
 *  - No input makes any call abort the process.
 */
#ifndef NOTESKIT_H
#define NOTESKIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Arrow ------------------------------------------------------------------------------------
 * The Arrow C Data Interface and C Stream Interface structs, as the Arrow specification declares
 * them. Ownership is the specification's: whoever receives a struct calls its release callback,
 * exactly once. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  // Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  // Release callback
  void (*release)(struct ArrowSchema*);
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  // Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  // Release callback
  void (*release)(struct ArrowArray*);
  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  // Callbacks providing stream functionality
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);

  // Release callback
  void (*release)(struct ArrowArrayStream*);

  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

/* The ABI version this header describes; compare with nk_abi_version() before any other call. */
#define NK_ABI_VERSION 5

/* Status codes. */
#define NK_OK 0
#define NK_E_INVALID_ARGUMENT 1 /* NULL, invalid UTF-8, bad handle: a caller bug */
#define NK_E_VALIDATION 2       /* a value breaks a rule: empty title, limit out of range, forged cursor */
#define NK_E_NOT_FOUND 3        /* no such record */
#define NK_E_CONFLICT 4         /* stale revision or draft, duplicate uid */
#define NK_E_STORAGE 5          /* SQLite failed (cannot open, I/O error, ...) */
#define NK_E_SCHEMA 6           /* not a NotesKit store, or written by a newer NotesKit */
#define NK_E_CORRUPT 7          /* damaged file, or not a database */
#define NK_E_READ_ONLY 8        /* the file cannot be written */
#define NK_E_STORAGE_FULL 9     /* disk or page limit full */
#define NK_E_BUSY 10            /* another connection held a lock past the busy timeout */
#define NK_E_CLOSED 11          /* the handle was closed */
#define NK_E_FORMAT 12          /* malformed import data */
#define NK_E_FONT 13            /* a font needed for measuring is missing */
#define NK_E_CANCELLED 14       /* cancelled by a progress callback */
#define NK_E_AUTHENTICATION 15  /* a PostgreSQL server refused the credentials (wrong password, unknown role) */
#define NK_E_UNREACHABLE 16     /* a PostgreSQL server cannot be reached, or went away during a write */
#define NK_E_INTERNAL 99        /* a NotesKit bug */

typedef struct nk_store nk_store;
typedef struct nk_layout nk_layout;
typedef struct nk_rows nk_rows;

/* Called after each commit through this handle with that commit's changes as a JSON array (see
 * nk_store_changes). changes_json is borrowed: valid only during the call. Runs on the committing
 * thread, outside the store's lock, so it may call back into the store. */
typedef void (*nk_change_callback)(void *user_data, const char *changes_json);

/* Called regularly by nk_store_import with its progress: done of total (bytes of the file, or
 * files of a Markdown folder). Return non-zero to go on, 0 to cancel (the import then writes
 * nothing and fails with NK_E_CANCELLED). Runs on the importing thread inside the import's
 * transaction: it must not call the store (such a call fails with NK_E_INVALID_ARGUMENT). */
typedef int32_t (*nk_progress_callback)(void *user_data, int64_t done, int64_t total);

/* ---- Library ---------------------------------------------------------------------------------- */

/* The ABI version of the loaded library (NK_ABI_VERSION of the header it was built with). */
int32_t nk_abi_version(void);

/* The library version, e.g. "0.1.0". Static: do not free. */
const char *nk_version(void);

/* Releases a string or buffer the library returned as owned. NULL is allowed. */
void nk_free(void *pointer);

/* This thread's last error as JSON (owned: free with nk_free), or NULL if no call on this thread
 * has failed yet. Not cleared by successful calls. */
char *nk_last_error(void);

/* ---- Records ---------------------------------------------------------------------------------
 * A packed row (char **out_row, owned) is little-endian: int64 total size in bytes (this field
 * included), the record's integer fields as int64 (times as UTC milliseconds, booleans 0 or 1,
 * absent ids -1), the UTF-8 byte length of each text field as int64 (-1 for null), then the texts'
 * bytes, unterminated. Fields in order:
 *   article       id, created_at, updated_at, revision | uid, title, content
 *   message       id, conversation_id, from_me, sent_at | uid, content, sender
 *   conversation  id, created_at, last_activity_at | uid, title
 *   draft         id, article_id, base_revision, created_at, updated_at | uid, title, content
 * A one-record answer measured faster as a packed row than as an Arrow batch of one row: one
 * allocation, one read, no schema, no release callbacks.
 *
 * Batch columns, in order:
 *   article       id, uid, title, content, created_at, updated_at, revision
 *   message       id, uid, conversation_id, content, from_me, sent_at, sender (nullable)
 *   conversation  id, uid, title, created_at, last_activity_at
 *   draft         id, uid, article_id (nullable), base_revision (nullable), title, content, created_at, updated_at
 *   change        seq, entity, op, id, uid, revision (nullable), at
 * A page answer (list, history, search) also hands out *out_cursor: the next page's cursor
 * (owned, free with nk_free), NULL on the last page.
 * In a batch a call hands out (not a stream's), the offsets buffer of each string (not
 * large_string) column goes on, after its length + 1 byte offsets, with length + 1 int32
 * code-point offsets: where each row's text starts and ends in characters, so a reader may decode
 * the column's text at once and slice it (Arrow readers read the byte offsets only).
 * Every schema the library hands out (a call's or a stream's) is a root of the caller's whose
 * children are the library's own: made once per shape of batch, never changed, moved nor freed
 * (a child a consumer moved out is marked live again for the next one), so a reader may know a
 * schema by the address of its children list; releasing the root releases nothing else. In every
 * batch the library hands out, the buffer lists follow each other in memory, depth first from the
 * struct's own (one NULL validity): each column's buffers in column order, a list column's
 * followed by its items', so a reader may read every buffer address at once from the struct's
 * buffers. */

/* How many Arrow structs (arrays with their children, schemas, streams) the library handed out
 * whose release has not been called yet: 0 once a caller released everything it got. */
int32_t nk_arrow_outstanding(int64_t *out_count);

/* ---- Store ------------------------------------------------------------------------------------ */

/* nk_store_open flags. */
#define NK_OPEN_READ_ONLY 1 /* never create or write the file; writes fail with NK_E_READ_ONLY */
#define NK_OPEN_FAST 2      /* a returned write survives a crash, not a power cut (WAL, synchronous=NORMAL) */

/* Opens or creates the store file at path, or the store on a PostgreSQL server when path is a
 * connection URI (postgresql://user:password@host:port/dbname or postgres://...; libpq is loaded
 * then, and mode is ignored): NK_E_AUTHENTICATION for a wrong password, NK_E_UNREACHABLE when the
 * server cannot be reached, NK_E_SCHEMA for a database that is not a NotesKit store. flags: 0, or NK_OPEN_READ_ONLY and/or NK_OPEN_FAST.
 * Without NK_OPEN_FAST a write that returned survives a power cut (WAL, synchronous=FULL).
 * mode: the permissions a new store file (and its -wal, -shm) gets, exactly, whatever the umask:
 * 0 for owner-only (0600), else read/write bits including 0600 (e.g. 0640); an existing file keeps
 * its mode (see nk_exposed_files). Unless read-only, removes leftovers of killed exports in the
 * file's folder.
 * *out_store: owned, close with nk_store_close. */
int32_t nk_store_open(const char *path, int32_t flags, int32_t mode, nk_store **out_store);

/* Creates the PostgreSQL login role name with password (nullable: no password) as a user of the store:
 * it sees and changes only its own rows. Only the store's administrator (the role that created it,
 * with CREATEROLE) may; NK_E_CONFLICT if the role exists, NK_E_VALIDATION for a SQLite store. */
int32_t nk_store_create_user(nk_store *store, const char *name, const char *password);

/* The files of the store at path (the store, its -wal and -shm) whose permissions let other
 * accounts do more than mode (0: owner-only 0600) allows; missing files are left out, nothing is
 * changed. *out_json (owned): [{"path": str, "mode": permission bits}, ...]. */
int32_t nk_exposed_files(const char *path, int32_t mode, char **out_json);

/* A private in-memory store. *out_store: owned, close with nk_store_close. */
int32_t nk_store_open_memory(nk_store **out_store);

/* Closes the store and invalidates the handle; a second close is NK_E_CLOSED. */
int32_t nk_store_close(nk_store *store);

/* Changes committed after seq `since`, oldest first, at most `limit` (1..1000), as a batch of
 * change columns (see "Records"). */
int32_t nk_store_changes(nk_store *store, int64_t since, int64_t limit, struct ArrowArray *out_array,
                         struct ArrowSchema *out_schema);

/* The seq of the newest change (0 if none). */
int32_t nk_store_last_change_seq(nk_store *store, int64_t *out_seq);

/* Registers callback (with user_data, passed back as is) for commits through this handle, called
 * on the committing thread. On a PostgreSQL store it also gets the commits of other handles,
 * processes and hosts (each change once, in seq order), called on a thread of the store's.
 * The caller keeps callback and user_data valid until nk_store_unsubscribe or nk_store_close. */
int32_t nk_store_subscribe(nk_store *store, nk_change_callback callback, void *user_data, int64_t *out_token);

/* Removes a subscription; NK_E_NOT_FOUND if token is not subscribed. */
int32_t nk_store_unsubscribe(nk_store *store, int64_t token);

/* Caps the store at max_bytes (> 0; rounded up to whole pages, never below the current size) for as
 * long as this handle is open: a write that would grow the database further fails with
 * NK_E_STORAGE_FULL and writes nothing. *out_max_bytes: the cap in effect, in bytes. */
int32_t nk_store_set_max_size(nk_store *store, int64_t max_bytes, int64_t *out_max_bytes);

/* ---- Articles --------------------------------------------------------------------------------- */
/* An article: id, uid, title, content, created_at, updated_at, revision (see "Records"). */

/* Saves a new article. *out_row (owned): the article. */
int32_t nk_article_create(nk_store *store, const char *title, const char *content, char **out_row);

/* Saves many articles in one transaction, all or none. records: an Arrow stream of struct batches
 * (see "Bulk writes" below) with the columns title, content (required), uid, created_at, updated_at;
 * another column is NK_E_VALIDATION. *out_created (owned, nk_free): what the store assigned (below),
 * with two times a row (created_at, then updated_at) and, with NK_CREATED_TEXT, the texts title and
 * content; the revision is 1. */
int32_t nk_article_create_many(nk_store *store, struct ArrowArrayStream *records, int32_t flags, void **out_created);

/* *out_row: the article with id, packed into the caller's buffer (capacity bytes) when it fits:
 * then *out_row == buffer and there is nothing to free; else into new memory (owned: free with
 * nk_free when *out_row != buffer). buffer may be NULL (capacity is then ignored). The hottest
 * call: a caller reusing one buffer pays no allocation and no nk_free. */
int32_t nk_article_get(nk_store *store, int64_t id, void *buffer, int64_t capacity, char **out_row);

/* Changes title and/or content (nullable: NULL keeps the field). expected_revision > 0 makes the
 * call fail with NK_E_CONFLICT unless the stored revision equals it; 0 skips the check.
 * *out_row (owned): the article after the change. */
int32_t nk_article_update(nk_store *store, int64_t id, const char *title, const char *content,
                          int64_t expected_revision, char **out_row);

/* Deletes the article and everything derived from it. */
int32_t nk_article_delete(nk_store *store, int64_t id);

/* A page of articles newest first (order -1 or 0; 1: oldest first) created in [since_ms, until_ms)
 * (NK_NO_TIME for no bound; since at or after until: an empty page), as a batch of article columns.
 * limit: 1..1000. after (nullable): a next_cursor of the same order and range (another is
 * NK_E_VALIDATION). *out_cursor (owned): the next page's cursor, NULL on the last page. */
int32_t nk_article_list(nk_store *store, int64_t limit, const char *after, int64_t since_ms, int64_t until_ms, int32_t order,
                        struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);

/* since_ms / until_ms: a time bound in UTC milliseconds, or NK_NO_TIME for none. since is
 * inclusive, until exclusive. order: 1 ascending, -1 descending, 0 the kind's default. threads: 1
 * reads a batch (at most 65 536 rows) per get_next, each one read under the store's lock; 2 also
 * reads the second half of the rows at once on its own read-only connection and thread (a file
 * store with at least 20 000 rows), holding it in memory until reached. The stream reads the store
 * when get_next is called, not before; an error then (a closed store) is get_next's EIO with
 * get_last_error's message. *out_stream: release it when done (any time, read to the end or not). */
#define NK_NO_TIME INT64_MIN

/* Every article created in [since_ms, until_ms), newest first by default, as a stream of article batches. */
int32_t nk_article_select(nk_store *store, int64_t since_ms, int64_t until_ms, int32_t order, int32_t threads,
                          struct ArrowArrayStream *out_stream);

/* How many articles nk_article_select would stream. */
int32_t nk_article_select_count(nk_store *store, int64_t since_ms, int64_t until_ms, int64_t *out_count);


/* ---- Drafts ----------------------------------------------------------------------------------- */
/* A draft: id, uid, article_id, base_revision (absent for a new article), title, content, created_at,
 * updated_at (see "Records"). */

/* Opens a draft for a new article. title (nullable): defaults to today's local date YYYY-MM-DD;
 * content (nullable): defaults to "". *out_row (owned): the draft. */
int32_t nk_draft_new(nk_store *store, const char *title, const char *content, char **out_row);

/* Opens a draft editing article_id at its current revision. *out_row (owned): the draft. */
int32_t nk_draft_edit(nk_store *store, int64_t article_id, char **out_row);

/* *out_row (owned): the draft with id. */
int32_t nk_draft_get(nk_store *store, int64_t id, char **out_row);

/* Every unsaved draft, oldest first, as a batch of draft columns. */
int32_t nk_draft_list(nk_store *store, struct ArrowArray *out_array, struct ArrowSchema *out_schema);

/* Changes a draft's title and/or content (nullable: NULL keeps the field). Empty text is allowed
 * in a draft. *out_row (owned): the draft. */
int32_t nk_draft_update(nk_store *store, int64_t id, const char *title, const char *content, char **out_row);

/* Saves the draft as an article (new, or the next revision of the one it edits) and removes it.
 * NK_E_VALIDATION or NK_E_CONFLICT keep the draft. *out_row (owned): the article. */
int32_t nk_draft_save(nk_store *store, int64_t id, char **out_row);

/* Throws the draft away. */
int32_t nk_draft_discard(nk_store *store, int64_t id);

/* ---- Conversations ---------------------------------------------------------------------------- */
/* A conversation: id, uid, title, created_at, last_activity_at (see "Records"). last_activity_at is the
 * later of created_at and the newest sent_at of its messages; it never moves back. */

/* Starts a conversation. title: non-blank, at most 1000 characters. *out_row (owned): the conversation. */
int32_t nk_conversation_create(nk_store *store, const char *title, char **out_row);

/* *out_row (owned): the conversation with id. */
int32_t nk_conversation_get(nk_store *store, int64_t id, char **out_row);

/* A page of conversations, most recent activity first, as a batch of conversation columns.
 * limit: 1..1000. after (nullable): a next_cursor. *out_cursor as nk_article_list's. */
int32_t nk_conversation_list(nk_store *store, int64_t limit, const char *after, struct ArrowArray *out_array,
                             struct ArrowSchema *out_schema, char **out_cursor);

/* Every conversation, most recent activity first, as a stream of conversation batches (see nk_article_select). */
int32_t nk_conversation_select(nk_store *store, int32_t threads, struct ArrowArrayStream *out_stream);

/* How many conversations nk_conversation_select would stream. */
int32_t nk_conversation_select_count(nk_store *store, int64_t *out_count);

/* Gives the conversation a new title. *out_row (owned): the conversation after the change. */
int32_t nk_conversation_rename(nk_store *store, int64_t id, const char *title, char **out_row);

/* Deletes the conversation and all its messages in one transaction. The change feed gets one
 * "delete" per message, then one for the conversation. */
int32_t nk_conversation_delete(nk_store *store, int64_t id);

/* A page of the conversation's history, paged backward from the newest message. limit: 1..1000.
 * before (nullable): the next_cursor of the previous page, for the messages just earlier than it.
 * Items within a page are oldest first (as a chat shows them); next_cursor is null once nothing
 * earlier exists. Only messages sent in [since_ms, until_ms) (NK_NO_TIME for no bound). A cursor of
 * another conversation's history, or of another range, is NK_E_VALIDATION.
 * A batch of message columns; *out_cursor as nk_article_list's. */
int32_t nk_conversation_history(nk_store *store, int64_t conversation_id, int64_t limit, const char *before,
                                int64_t since_ms, int64_t until_ms, struct ArrowArray *out_array,
                                struct ArrowSchema *out_schema, char **out_cursor);

/* ---- Messages --------------------------------------------------------------------------------- */
/* A message: id, uid, conversation_id, content, from_me, sent_at, sender (the author's name in a group
 * chat, or null; see "Records"). Message text must be
 * non-blank (NK_E_VALIDATION on field "content", nothing written) and is stored exactly as given. */

/* Adds a message sent by the user (from_me true), sent now. *out_row (owned): the message. */
int32_t nk_message_send(nk_store *store, int64_t conversation_id, const char *text, char **out_row);

/* Adds a message received by the user (from_me false). sent_at (nullable): ISO-8601 time of an
 * imported message; NULL means now. *out_row (owned): the message. */
int32_t nk_message_receive(nk_store *store, int64_t conversation_id, const char *text, const char *sent_at,
                           char **out_row);

/* *out_row (owned): the message with id. */
int32_t nk_message_get(nk_store *store, int64_t id, char **out_row);

/* Deletes the message. */
int32_t nk_message_delete(nk_store *store, int64_t id);

/* Adds many messages to the conversation in one transaction, all or none. records: an Arrow stream
 * of struct batches (see "Bulk writes" below) with the columns content, from_me (required), uid,
 * sent_at, sender; another column is NK_E_VALIDATION. *out_created (owned, nk_free): what the store assigned
 * (below), with one time a row (sent_at), the from_me flags and, with NK_CREATED_TEXT, the texts
 * content and sender ("" for a message without one). Fresh message uids are time-ordered (UUID version 7). */
int32_t nk_message_insert_many(nk_store *store, int64_t conversation_id, struct ArrowArrayStream *records, int32_t flags,
                               void **out_created);

/* ---- Bulk writes -------------------------------------------------------------------------------
 * Records in: an ArrowArrayStream whose schema is a struct ("+s"), one child per record field, named
 * as the field. The library takes the stream over: it calls records->release exactly once, on
 * success and on every failure (a NULL or already-released stream is NK_E_INVALID_ARGUMENT), and
 * releases the schema and every batch it obtains. Columns read: text fields "u", "U", "vu" or a
 * dictionary of them; from_me "b" or integers 0/1; times "ts?:" of any unit, with or without a time
 * zone (naive = UTC), integer milliseconds since 1970 UTC, or ISO-8601 text. Sliced arrays (offset
 * != 0) and nulls in optional fields are read. A null in a required field is NK_E_VALIDATION with
 * the record's index (0-based, across batches) as the error's "line" and the column as its "field";
 * so is a column of the wrong type, a missing or repeated column and a column holding more than
 * 2 GiB of text in one batch. A malformed array (lengths that differ, offsets that decrease or name
 * unmapped memory, dictionary indices out of range, a failing get_next) is NK_E_INVALID_ARGUMENT
 * naming the column. Nothing is written unless every record is good.
 *
 * out_created: one buffer, each part starting on an 8-byte boundary:
 *   int64_t count; int64_t id[count]; int64_t time[times][count] (UTC milliseconds);
 *   uint8_t from_me[count] (messages only); char uid[count][36] (ASCII, not NUL-terminated);
 *   then with NK_CREATED_TEXT, per text field: int64_t bytes; int64_t offsets[count + 1] in code points
 *   (not bytes: a caller decodes the text once and slices it); the UTF-8 bytes. */
#define NK_CREATED_TEXT 1

/* Every message of the conversation (conversation_id 0: of all; NK_E_NOT_FOUND for an unknown one)
 * sent in [since_ms, until_ms), by the user (from_me 1), by the others (0) or anyone (-1), oldest
 * first by default, as a stream of message batches (see nk_article_select). */
int32_t nk_message_select(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms, int32_t from_me,
                          int32_t order, int32_t threads, struct ArrowArrayStream *out_stream);

/* How many messages nk_message_select would stream. */
int32_t nk_message_select_count(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms,
                                int32_t from_me, int64_t *out_count);
/* ---- Analysis: bulk reads and edits by id, lookups, per-conversation figures --------------------
 * ids: an array of count int64 ids (NULL when count is 0; count 0..10 000 000), read during the
 * call only. Each call is one read or one transaction: all or nothing. */

/* The articles with ids, in the order given, as a batch of article columns. missing: 0 makes an id
 * with no article NK_E_NOT_FOUND (the message names the missing ids), 1 leaves it out. */
int32_t nk_article_get_many(nk_store *store, const int64_t *ids, int64_t count, int32_t missing,
                            struct ArrowArray *out_array, struct ArrowSchema *out_schema);

/* The messages with ids, in the order given, as a batch of message columns; missing as above. */
int32_t nk_message_get_many(nk_store *store, const int64_t *ids, int64_t count, int32_t missing,
                            struct ArrowArray *out_array, struct ArrowSchema *out_schema);

/* Updates many articles in one transaction. rows (taken over and released, as for
 * nk_article_create_many): columns id (integer, required), title, content (strings, optional or
 * null: unchanged), expected_revision (integer, optional or null: unchecked). A stale
 * expected_revision is NK_E_CONFLICT naming the article and the record (line), an id given twice
 * NK_E_VALIDATION (code duplicate_id); nothing is written then. The articles as saved, in the
 * order given, as a batch of article columns. */
int32_t nk_article_update_many(nk_store *store, struct ArrowArrayStream *rows, struct ArrowArray *out_array,
                               struct ArrowSchema *out_schema);

/* Deletes the articles with ids and everything derived from them: all, or (when one does not exist:
 * NK_E_NOT_FOUND naming the missing ids) none. *out_count: how many were deleted (an id given twice
 * counts once). */
int32_t nk_article_delete_many(nk_store *store, const int64_t *ids, int64_t count, int64_t *out_count);

/* Deletes the messages with ids, as nk_article_delete_many. */
int32_t nk_message_delete_many(nk_store *store, const int64_t *ids, int64_t count, int64_t *out_count);

/* Deletes the messages of the conversation sent in [since_ms, until_ms) (NK_NO_TIME: no bound).
 * *out_count: how many. NK_E_NOT_FOUND for an unknown conversation. */
int32_t nk_message_delete_range(nk_store *store, int64_t conversation_id, int64_t since_ms, int64_t until_ms,
                                int64_t *out_count);

/* The conversations titled exactly title (byte for byte), most recent activity first, as a batch
 * of conversation columns (none: an empty batch). */
int32_t nk_conversation_find(nk_store *store, const char *title, struct ArrowArray *out_array,
                             struct ArrowSchema *out_schema);

/* Per-conversation figures, most recent activity first, as a stream (see nk_article_select) of
 * batches with columns id, title, messages, sent, received (int64), first_at, last_at
 * (timestamp[ms, UTC], null for a conversation without messages). */
int32_t nk_conversation_stats(nk_store *store, struct ArrowArrayStream *out_stream);

/* ---- Layout ----------------------------------------------------------------------------------- */
/* Text is measured with Pango (FT2 backend) at 72 dpi, wrapped PANGO_WRAP_WORD_CHAR, with NotesKit's
 * pinned fonts only (WenQuanYi Micro Hei, DejaVu Sans; NK_E_FONT names the Debian package when one
 * is missing). Sizes and widths are pixels, as doubles. Lists of ids travel as JSON arrays of
 * integers; "kind" is "article" or "message". */

/* Measures text wrapped at max_width (1..1000000) in font (nullable: "WenQuanYi Micro Hei") at size
 * (1..1000). *out_json (owned): {"width","height","line_count","unknown_glyphs"}, pixel sizes as
 * pango_layout_get_pixel_size reports them. */
int32_t nk_measure_text(const char *text, double max_width, const char *font, double size, char **out_json);

/* The pinned font setup, for reproducing measurements elsewhere. *out_json (owned):
 * {"fontconfig": xml (the same fonts, for other programs: usable as FONTCONFIG_FILE), "families": [...],
 * "directory", "files": [...], "cache_directory" (or null), "dpi", "language"}. */
int32_t nk_font_configuration(char **out_json);

/* Checks a style and fills in its defaults. kind: "article_row" (the notes app's cell), "bubble", or
 * "article_row.two_labels" (the named alternative row style: its defaults instead of the app's).
 * style_json (nullable: all defaults): an object with any of the style's fields. *out_json (owned): every field, plus
 * "fingerprint" (16 hex digits, stable for equal styles). */
int32_t nk_style_resolve(const char *kind, const char *style_json, char **out_json);

/* Opens a layout of the store's rows, width pixels wide. article_style_json, bubble_style_json
 * (nullable): styles as nk_style_resolve takes them. estimated_height: the height of a row not yet
 * measured (0..1000000; 150 is the apps'). cache_bytes: the cache's bound, 0 for the default 64 MiB.
 * *out_layout: owned, close with nk_layout_close. The layout holds on to the store; closing the
 * store makes its calls fail with NK_E_CLOSED. */
int32_t nk_layout_open(nk_store *store, double width, const char *article_style_json, const char *bubble_style_json,
                       double estimated_height, int64_t cache_bytes, nk_layout **out_layout);

/* Closes the layout and drops its cache; its row lists fail with NK_E_CLOSED from then on. */
int32_t nk_layout_close(nk_layout *layout);

/* The height of article id's row: cached, or measured now and cached. NK_E_NOT_FOUND for an unknown id. */
int32_t nk_layout_article_height(nk_layout *layout, int64_t id, double *out_height);

/* The heights of many rows. ids_json: [id, ...]. *out_json (owned): [height, ...] in the same order. */
int32_t nk_layout_article_heights(nk_layout *layout, const char *ids_json, char **out_json);

/* The bubble of message id: cached, or measured now and cached. NK_E_NOT_FOUND for an unknown id.
 * *out_json (owned): {"x","width","height","text_width","text_height","from_me","row_height"}: the
 * bubble's frame in its row (right-aligned when from_me; its top is the style's row_margin_top). */
int32_t nk_layout_bubble(nk_layout *layout, int64_t message_id, char **out_json);

/* The bubbles of many messages. ids_json: [id, ...]. *out_json (owned): [bubble, ...] in order. */
int32_t nk_layout_bubbles(nk_layout *layout, const char *ids_json, char **out_json);

/* Measures and caches the rows of ids_json not cached yet, on `threads` threads (<= 0: one per core).
 * *out_measured: how many rows were measured. An unknown id is NK_E_NOT_FOUND, after the others. */
int32_t nk_layout_prefetch(nk_layout *layout, const char *kind, const char *ids_json, int32_t threads,
                           int64_t *out_measured);

/* *out_json (owned): {"hits","misses","entries","bytes","capacity_bytes","evictions","invalidations"}. */
int32_t nk_layout_stats(nk_layout *layout, char **out_json);

/* Draws the rows of ids_json into a PNG at path, at exactly the computed frames.
 * *out_json (owned): {"path","width","height","rows"}. */
int32_t nk_layout_render_articles(nk_layout *layout, const char *ids_json, const char *path, char **out_json);

/* Draws a conversation into a PNG at path, oldest message at the top, each bubble at exactly its
 * computed frame; when the history is taller than a picture can be (32000 px), its newest messages
 * that fit. NK_E_VALIDATION for a conversation without messages. *out_json (owned): as above. */
int32_t nk_layout_render_conversation(nk_layout *layout, int64_t conversation_id, const char *path, char **out_json);

/* Row offsets of an ordered list of rows (each id once). *out_rows: owned, close with nk_rows_close.
 * Unmeasured rows count with the layout's estimated height; the list updates in place when the
 * layout measures a row or the change feed says one changed. Every query is O(log n). */
int32_t nk_layout_rows(nk_layout *layout, const char *kind, const char *ids_json, nk_rows **out_rows);

int32_t nk_rows_close(nk_rows *rows);

/* The height of all rows. */
int32_t nk_rows_total_height(nk_rows *rows, double *out_height);

/* The offset of the top of row (0..count; count gives the total height). */
int32_t nk_rows_offset_of(nk_rows *rows, int64_t row, double *out_offset);

/* The current height of row (0..count-1): measured, or the estimate. */
int32_t nk_rows_height_of(nk_rows *rows, int64_t row, double *out_height);

/* *out_measured: 1 when row's height was measured, 0 when it is the estimate. */
int32_t nk_rows_is_measured(nk_rows *rows, int64_t row, int32_t *out_measured);

/* *out_row: the row whose span [offset, offset + height) contains y, or -1 when none does. */
int32_t nk_rows_row_at(nk_rows *rows, double y, int64_t *out_row);

/* The rows intersecting [offset, offset + viewport_height): rows *out_first ..< *out_stop. */
int32_t nk_rows_visible(nk_rows *rows, double offset, double viewport_height, int64_t *out_first, int64_t *out_stop);

/* The keyboard model (the editor and the chat). state_json (nullable: keyboard down): {"shown": bool,
 * "keyboard_height": n}. event_json: {"event": "show", "keyboard_height": n} or {"event": "hide"}.
 * *out_json (owned): the new state: {"shown","keyboard_height","editor_bottom_inset","chat_offset"}. */
int32_t nk_keyboard_apply(const char *state_json, const char *event_json, char **out_json);

/* The notes app's search panel model. state_json (nullable: hidden, at rest): a state as this call
 * returns it. event_json: {"event": "drag", "translation": n} (the pan gesture's total translation
 * since the drag began, screen coordinates: negative is up), {"event": "end_drag"}, {"event":
 * "show"}, {"event": "hide"}, {"event": "keyboard_will_show", "keyboard_height": n} or {"event":
 * "keyboard_will_hide"}. *out_json (owned): the new state: {"state": "hidden"|"shown", "dragging",
 * "top_offset" (the panel's top relative to the screen's bottom: -50 hidden, -155 shown),
 * "drag_start_offset", "revealed", "keyboard_shown", "keyboard_height", "mask_count"}. */
int32_t nk_search_panel_apply(const char *state_json, const char *event_json, char **out_json);

/* The interaction models' numbers, as the two calls above use them. *out_json (owned):
 * {"keyboard": {"editor_gap_above_keyboard": 5, "editor_resting_inset": 46, "max_keyboard_height"},
 *  "search_panel": {"height": 105, "strip": 50, "snap_threshold": 91, "max_distance"}}. */
int32_t nk_interaction_constants(char **out_json);

/* ---- Import and export ------------------------------------------------------------------------ */
/* format (nullable): "json", "jsonl", "csv", "markdown" or "transcript" (and, to import only,
 * "telegram" or "whatsapp"); NULL takes it from the extension of path (.json, .jsonl, .csv, .txt,
 * .md; importing, a Telegram or WhatsApp export is told by its content); a folder needs it.
 * An import file's malformed record is NK_E_FORMAT; the error's "file", "line" and "field" say
 * where. Missing files are NK_E_NOT_FOUND, unwritable ones NK_E_READ_ONLY. */

/* Writes the store to path. A file is written beside path and renamed over it when complete; a
 * folder (markdown, csv) is made beside path and renamed into place, and must be new or empty; a
 * symbolic link at path is replaced, not followed. Leftovers of killed exports in path's folder
 * are removed first. options_json (nullable): {"conversation"?: id (transcripts), "table"?:
 * "articles"|"messages"|"conversations" (a single .csv file), "mode"?: file permissions (default 0600; a folder
 * also gets x where r is given)}. *out_json (owned): {"articles","drafts","conversations","messages","files"}. */
int32_t nk_store_export(nk_store *store, const char *path, const char *format, const char *options_json,
                        char **out_json);

/* Imports path in one transaction: all of it, or (on a malformed record with on_error "raise",
 * a cancel, any failure) nothing. options_json (nullable): {"on_conflict"?: "skip"|"replace"|"newer",
 * "on_error"?: "raise"|"skip", "conversation"?: id, "title"?: str (transcripts, WhatsApp),
 * "me"?: str (Telegram, WhatsApp), "tz"?: str, "encoding"?: str, "delimiter"?: str,
 * "columns"?: {header: column name}, "unknown_columns"?: "refuse"|"ignore" (CSV),
 * "date_order"?: "dmy"|"mdy" (WhatsApp)}; an option the format does not read is NK_E_VALIDATION.
 * progress (nullable) is called with user_data as described at nk_progress_callback.
 * *out_json (owned): {"created","updated","skipped","errors": [error JSON as nk_last_error's],
 * "skips": [{"file","line","reason"}, ...] (the first 10 000 skipped records),
 * "skipped_links": [paths relative to a Markdown folder of links leading outside it, not read]}. */
int32_t nk_store_import(nk_store *store, const char *path, const char *format, const char *options_json,
                        nk_progress_callback progress, void *user_data, char **out_json);

/* Imports a table of records given as an Arrow stream (what `noteskit` reads from a Parquet file):
 * the same import as nk_store_import's (one transaction, records matched by uid, the policies, the
 * report), a row for a line. table: "articles" (columns title, content; optional uid, created_at,
 * updated_at, revision), "conversations" (title; optional uid, created_at, last_activity_at) or
 * "messages" (content, from_me; optional uid, sent_at, sender, conversation_uid,
 * conversation_title: a message's conversation by uid, created with its title when new). Column
 * types as the bulk writes read them, revision any integer type; an unknown column, a missing or
 * mistyped one is NK_E_VALIDATION and nothing is written. records is taken over (released, also on
 * failure). source (nullable): the name errors and skips give as the file. options_json
 * (nullable): {"on_conflict", "on_error"} as nk_store_import's. *out_json as nk_store_import's. */
int32_t nk_store_import_table(nk_store *store, const char *table, struct ArrowArrayStream *records, const char *source,
                              const char *options_json, char **out_json);

/* ---- Search ----------------------------------------------------------------------------------- */
/* Literal substring search: every character of the query is itself; text and query are compared
 * in NFC, case-insensitively (simple Unicode case folding) unless case_sensitive is 1. An empty
 * query lists everything. Results are newest first and keyset-paged like the lists.
 * A page of hits is a batch of the record's columns followed by one list<int32> column per field
 * searched, "title_spans" and/or "content_spans": the code-point offsets of every non-overlapping
 * match into the field as stored, flattened as start, end, start, end, ...
 * A query with a NUL or over 10 000 characters is NK_E_VALIDATION; so is a forged cursor, or a
 * cursor of another search (another query, field, case mode, order or conversation). */

/* Articles created in [since_ms, until_ms) (NK_NO_TIME: no bound) whose title and/or content
 * contain query, newest first (order -1 or 0; 1: oldest first). field (nullable): "any" (default), "title"
 * or "content". case_sensitive: 0 or 1. limit: 1..1000. after (nullable): a next_cursor of this
 * search. Article columns, then title_spans (unless field is "content") and content_spans (unless
 * field is "title"); *out_cursor as nk_article_list's. */
int32_t nk_article_search(nk_store *store, const char *query, const char *field, int32_t case_sensitive,
                          int64_t since_ms, int64_t until_ms, int32_t order, int64_t limit, const char *after,
                          struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);

/* Messages sent in [since_ms, until_ms) (NK_NO_TIME: no bound) whose content contains query,
 * newest first (sent_at, then id), in every conversation
 * (conversation_id 0) or in one (NK_E_NOT_FOUND if it does not exist). flags: 0, or
 * NK_SEARCH_CASE_SENSITIVE and/or NK_SEARCH_OLDEST_FIRST (chat order: sent_at, then id, ascending);
 * other bits are NK_E_INVALID_ARGUMENT. limit: 1..1000. after (nullable): a next_cursor of this
 * same search (query, conversation_id and flags).
 * Message columns, then content_spans; *out_cursor as nk_article_list's. */
#define NK_SEARCH_CASE_SENSITIVE 1
#define NK_SEARCH_OLDEST_FIRST 2
int32_t nk_message_search(nk_store *store, const char *query, int64_t conversation_id, int32_t flags,
                          int64_t since_ms, int64_t until_ms, int64_t limit, const char *after,
                          struct ArrowArray *out_array, struct ArrowSchema *out_schema, char **out_cursor);

/* One search over articles (title or content) and messages: case-insensitive, newest first across
 * both kinds (an article's created_at, a message's sent_at; within one millisecond articles before
 * messages, then id descending). kinds: NK_KIND_ARTICLES and/or NK_KIND_MESSAGES (0 or other bits:
 * NK_E_INVALID_ARGUMENT). since_ms (inclusive) / until_ms (exclusive): UTC ms, NK_NO_TIME for no bound.
 * limit: 1..1000. after (nullable): a next_cursor of this same search (query, kinds, since, until).
 * The page leaves as two batches in one order: *out_order (owned) is one letter a hit, 'a' for the
 * next row of the article batch (*out_array/*out_schema, as nk_article_search's with field "any"),
 * 'm' for the next row of the message batch (*out_messages/*out_messages_schema, as
 * nk_message_search's); both batches are always filled (maybe empty) and released by the caller.
 * *out_cursor as nk_article_list's. On failure nothing is handed out. */
#define NK_KIND_ARTICLES 1
#define NK_KIND_MESSAGES 2
int32_t nk_store_search(nk_store *store, const char *query, int32_t kinds, int64_t since_ms, int64_t until_ms,
                        int64_t limit, const char *after, char **out_order, struct ArrowArray *out_messages,
                        struct ArrowSchema *out_messages_schema, struct ArrowArray *out_array,
                        struct ArrowSchema *out_schema, char **out_cursor);

/* A snippet of text around its first match, for a result list. spans: span_count (start, end) pairs
 * of code-point offsets into text (a hit's spans; NULL when span_count is 0; outside the text:
 * NK_E_INVALID_ARGUMENT). width: characters (grapheme clusters: an emoji ZWJ sequence, a flag, a
 * letter with its combining marks count one, never cut) of text shown, "…" added where the text is
 * cut; 0 gives the empty snippet, below 0 is NK_E_VALIDATION. The first non-empty span is centred.
 * Line breaks and tabs become spaces. *out_json (owned): {"text": "...", "spans": [[start, end], ...]}
 * (the matches inside the snippet, code-point offsets into its text). */
int32_t nk_snippet(const char *text, const int64_t *spans, int64_t span_count, int64_t width, char **out_json);

/* Rebuilds the search indexes (articles and messages) from the stored text in one transaction
 * (they are kept up to date by every write; this is for repair). */
int32_t nk_store_reindex(nk_store *store);

/* Compacts the change feed: removes every change that a newer change of the same record
 * supersedes (each record keeps its latest change, deletes included), except changes recorded in
 * the last retain_ms milliseconds (0: none kept for that reason) and those a subscriber is still
 * to be handed; then gives the freed pages back to the file. NK_E_VALIDATION for a negative
 * retain_ms. *out_json (owned): {"changes_removed": int, "changes_kept": int, "bytes_freed": int,
 * "horizon": int}. */
int32_t nk_store_compact(nk_store *store, int64_t retain_ms, char **out_json);

/* ---- Testing only ----------------------------------------------------------------------------- */
/* Not for applications: the seam a test's power-cut simulator stands behind. The exporters write
 * their files and NotesKit syncs folders through these calls (same meaning as the POSIX calls of
 * the same names; SQLite's own files go through SQLite's default VFS instead). */
typedef struct nk_file_calls {
    int (*openat)(int dirfd, const char *path, int flags, unsigned int mode);
    long (*write)(int fd, const void *bytes, unsigned long count);
    int (*fsync)(int fd);
    int (*syncfs)(int fd);
    int (*close)(int fd);
    int (*renameat)(int old_dirfd, const char *old_path, int new_dirfd, const char *new_path);
    int (*mkdirat)(int dirfd, const char *path, unsigned int mode);
    int (*unlinkat)(int dirfd, const char *path, int flags);
} nk_file_calls;

/* TESTING ONLY. calls: NULL (back to the POSIX calls) or a const nk_file_calls * with every
 * function set (copied; the functions must stay valid while the process writes files). For the
 * whole process. NK_E_INVALID_ARGUMENT if a function is NULL. */
int32_t nk_testing_set_file_calls(const void *calls);

#ifdef __cplusplus
}
#endif

#endif /* NOTESKIT_H */
