#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro over a cast Swift cannot import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// syncfs(2) is declared by <unistd.h> only with _GNU_SOURCE; the exporters sync a folder of files
// with it (Sources/NotesKit/Support/FileCalls.swift).
int syncfs(int fd);
