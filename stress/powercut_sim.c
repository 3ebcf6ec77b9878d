/* TESTING ONLY: a power-cut simulator for NotesKit's trials (stress/powercut.py builds and loads it).
 *
 * It stands behind the two ways NotesKit writes files:
 *   - SQLite's files, through a VFS ("powercut") that wraps the default unix VFS and is made the
 *     default VFS of the process by powercut_start();
 *   - the exporters' files and the folder syncs, through the nk_file_calls seam of noteskit.h
 *     (powercut_file_calls() returns the table to pass to nk_testing_set_file_calls).
 *
 * Every write goes through to the real file at once (so reads, locks and SQLite's shared memory
 * behave as usual), and the simulator keeps what a power cut would undo: per file, the bytes each
 * unsynced write or truncate replaced and the size at the last sync; per folder, the names
 * created, renamed and removed since the folder was last synced. Each write, truncate, sync and
 * name change under the root folder is one numbered event. When the chosen event is about to
 * happen, the power is cut: every unsynced write is undone, every unsynced name change reversed
 * (an unsynced new file disappears, an unsynced rename goes back, an unsynced removal comes back
 * with its synced bytes), and the process ends with _exit(POWERCUT_EXIT) inside the call, which
 * never returns. In the torn mode the last unsynced write lands half: the part of it in its last
 * 512-byte sector is written half new (first half) or as garbage; bytes outside what the write
 * covered are never touched (SQLite's unix VFS reports powersafe overwrite).
 *
 * The model is POSIX's pessimistic one (as in the ALICE study): only fsync'd bytes and names in a
 * fsync'd folder survive. SQLite's unix VFS syncs the folder itself on the first sync of a -wal or
 * journal file it created, and when it deletes a file with dirSync set; the wrapper mirrors that.
 * The idea comes from SQLite's src/test6.c (which buffers writes instead); the code is our own.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <dirent.h>

#define POWERCUT_EXIT 86
#define SECTOR 512
#define MAX_FDS 4096

/* ---- State ------------------------------------------------------------------------------------ */

typedef struct Undo {            /* the bytes [offset, offset+n) held before a write or truncate */
    long long offset;
    long long n;
    unsigned char *old;
    struct Undo *prev;
} Undo;

typedef struct Tracked {         /* one file under the root, by its current path */
    char *path;
    long long synced_size;
    Undo *undo;                  /* newest first */
    int gone;                    /* removed or renamed over: its bytes live in an Op */
    int dirsync_on_sync;         /* SQLite created it as -wal/journal: its first sync syncs the folder */
    struct Tracked *next;
} Tracked;

enum { OP_CREATE, OP_MKDIR, OP_UNLINK, OP_RMDIR, OP_RENAME };

typedef struct Op {              /* a name change not yet synced */
    int kind;
    char *path;                  /* created/removed name, or the rename's source */
    char *path2;                 /* the rename's target */
    unsigned char *image;        /* the synced bytes of a removed (or renamed-over) file */
    long long image_n;
    int had_target;              /* rename: something was at path2 (1: a file, 2: a folder) */
    int durable;
    struct Op *next;
} Op;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char root[PATH_MAX];
static size_t root_len;
static long long events;         /* events so far */
static long long cut_at = -1;    /* cut before this event (1-based); -1: never */
static int torn_mode;            /* 0: drop, 1: half new, 2: garbage */
static Tracked *files;
static Op *ops_head, *ops_tail;
static char trace[1 << 20];      /* one letter per event: w write, t truncate, s sync, n name change */
static long long trace_len;
static struct { Tracked *file; long long offset; long long n; unsigned char bytes[SECTOR]; int valid; } last;
static struct { char *path; int is_dir; } fds[MAX_FDS];
static int report_fd = -1;       /* the cut says here whether it tore a write */
static int sabotage;             /* for the trials' own test: 1 syncfs and 2 folder fsyncs do nothing */

static sqlite3_vfs *real_vfs;

/* ---- Helpers ---------------------------------------------------------------------------------- */

static int under_root(const char *path) {
    return root_len > 0 && path && strncmp(path, root, root_len) == 0 && (path[root_len] == '/' || path[root_len] == 0);
}

static char *parent_of(const char *path) {
    char *copy = strdup(path);
    char *slash = strrchr(copy, '/');
    if (slash && slash != copy) *slash = 0; else if (slash) slash[1] = 0;
    return copy;
}

static Tracked *find(const char *path) {
    for (Tracked *t = files; t; t = t->next) if (!t->gone && strcmp(t->path, path) == 0) return t;
    return NULL;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* The tracked record of path (made on first sight: an existing file counts as synced as it is). */
static Tracked *track(const char *path, int created) {
    Tracked *t = find(path);
    if (t) return t;
    t = calloc(1, sizeof *t);
    t->path = strdup(path);
    t->synced_size = created ? 0 : file_size(path);
    t->next = files;
    files = t;
    return t;
}

static void drop_undo(Tracked *t) {
    while (t->undo) { Undo *u = t->undo; t->undo = u->prev; free(u->old); free(u); }
    if (last.file == t) last.valid = 0;
}

/* Reads [offset, offset+n) of the file at path as it is now; bytes past its end read as absent. */
static long long read_range(const char *path, long long offset, long long n, unsigned char *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    long long got = 0;
    while (got < n) {
        ssize_t r = pread(fd, out + got, (size_t)(n - got), offset + got);
        if (r <= 0) break;
        got += r;
    }
    close(fd);
    return got;
}

/* Keeps what a write of n bytes at offset (or a truncate to offset, n = -1) replaces. */
static void remember(Tracked *t, long long offset, long long n) {
    long long size = file_size(t->path);
    if (n < 0) { n = size - offset; if (n <= 0) return; }
    if (offset >= size) return;                       /* beyond the end: undone by the final truncate */
    long long keep = offset + n > size ? size - offset : n;
    Undo *u = calloc(1, sizeof *u);
    u->offset = offset;
    u->old = malloc((size_t)keep);
    u->n = read_range(t->path, offset, keep, u->old);
    u->prev = t->undo;
    t->undo = u;
}

/* The last unsynced write, for the torn mode: the part of it in its last sector. */
static void note_last(Tracked *t, long long offset, long long n, const void *bytes) {
    if (n <= 0) return;
    long long end = offset + n, start = ((end - 1) / SECTOR) * SECTOR;
    if (start < offset) start = offset;
    last.file = t;
    last.offset = start;
    last.n = end - start;
    memcpy(last.bytes, (const unsigned char *)bytes + (start - offset), (size_t)last.n);
    last.valid = 1;
}

/* The bytes of t a power cut would leave: the file with every unsynced change undone. */
static unsigned char *synced_image(Tracked *t, long long *n) {
    long long size = file_size(t->path);
    long long cap = size > t->synced_size ? size : t->synced_size;
    unsigned char *image = calloc(1, (size_t)cap + 1);
    read_range(t->path, 0, size, image);
    for (Undo *u = t->undo; u; u = u->prev) memcpy(image + u->offset, u->old, (size_t)u->n);
    *n = t->synced_size;
    return image;
}

static void add_op(int kind, const char *path, const char *path2) {
    Op *op = calloc(1, sizeof *op);
    op->kind = kind;
    op->path = strdup(path);
    op->path2 = path2 ? strdup(path2) : NULL;
    if (ops_tail) ops_tail->next = op; else ops_head = op;
    ops_tail = op;
}

/* fsync of a folder: its name changes become durable. */
static void folder_synced(const char *dir) {
    for (Op *op = ops_head; op; op = op->next) {
        const char *name = op->kind == OP_RENAME ? op->path2 : op->path;
        char *parent = parent_of(name);
        if (strcmp(parent, dir) == 0) op->durable = 1;
        free(parent);
    }
}

static void file_synced(Tracked *t) {
    drop_undo(t);
    t->synced_size = file_size(t->path);
    if (t->dirsync_on_sync) {
        char *parent = parent_of(t->path);
        folder_synced(parent);
        free(parent);
        t->dirsync_on_sync = 0;
    }
}

static void write_file(const char *path, const unsigned char *bytes, long long n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    long long done = 0;
    while (done < n) { ssize_t w = write(fd, bytes + done, (size_t)(n - done)); if (w <= 0) break; done += w; }
    close(fd);
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char child[PATH_MAX];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- The cut ---------------------------------------------------------------------------------- */

static void reverse_ops(Op *op) {           /* newest first */
    if (!op) return;
    reverse_ops(op->next);
    if (op->durable) return;
    switch (op->kind) {
    case OP_CREATE: case OP_MKDIR: remove_tree(op->path); break;
    case OP_UNLINK: write_file(op->path, op->image, op->image_n); break;
    case OP_RMDIR: mkdir(op->path, 0755); break;
    case OP_RENAME:
        rename(op->path2, op->path);
        if (op->had_target == 1) write_file(op->path2, op->image, op->image_n);
        if (op->had_target == 2) mkdir(op->path2, 0755);
        break;
    }
}

static void cut(void) {
    for (Tracked *t = files; t; t = t->next) {
        if (t->gone) continue;
        int fd = open(t->path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) continue;
        for (Undo *u = t->undo; u; u = u->prev) {
            if (pwrite(fd, u->old, (size_t)u->n, u->offset) < 0) break;
        }
        if (ftruncate(fd, t->synced_size) != 0) { /* nothing more to undo */ }
        if (torn_mode && last.valid && last.file == t) {
            unsigned char sector[SECTOR];
            long long n = last.n;
            if (torn_mode == 1) {           /* the first half of the write's last sector lands */
                n = n / 2 > 0 ? n / 2 : 1;
                memcpy(sector, last.bytes, (size_t)n);
            } else {                        /* garbage lands where the write was */
                for (long long i = 0; i < n; i++) sector[i] = (unsigned char)(rand() & 0xFF);
            }
            if (pwrite(fd, sector, (size_t)n, last.offset) == n && report_fd >= 0)
                dprintf(report_fd, "X torn %lld bytes at %lld of %s\n", n, last.offset, t->path);
        }
        close(fd);
    }
    reverse_ops(ops_head);
    _exit(POWERCUT_EXIT);
}

/* One event: cut before it when it is the chosen one, else count it. Called with the lock held. */
static void event(char kind) {
    events++;
    if (events == cut_at) cut();
    if (trace_len < (long long)sizeof trace - 1) trace[trace_len++] = kind;
}

/* ---- The VFS ---------------------------------------------------------------------------------- */

typedef struct {
    sqlite3_file base;
    Tracked *t;                  /* NULL: not under the root, passed through untouched */
    sqlite3_file *real;
} PCFile;

#define REAL(f) (((PCFile *)(f))->real)

static int pcClose(sqlite3_file *f) {
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    return rc;
}
static int pcRead(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int pcWrite(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
    PCFile *p = (PCFile *)f;
    if (p->t) {
        pthread_mutex_lock(&lock);
        event('w');
        remember(p->t, o, n);
        note_last(p->t, o, n, b);
        pthread_mutex_unlock(&lock);
    }
    return p->real->pMethods->xWrite(p->real, b, n, o);
}
static int pcTruncate(sqlite3_file *f, sqlite3_int64 size) {
    PCFile *p = (PCFile *)f;
    if (p->t) {
        pthread_mutex_lock(&lock);
        event('t');
        remember(p->t, size, -1);
        pthread_mutex_unlock(&lock);
    }
    return p->real->pMethods->xTruncate(p->real, size);
}
static int pcSync(sqlite3_file *f, int flags) {
    PCFile *p = (PCFile *)f;
    if (p->t) { pthread_mutex_lock(&lock); event('s'); pthread_mutex_unlock(&lock); }
    int rc = p->real->pMethods->xSync(p->real, flags);
    if (p->t && rc == SQLITE_OK) { pthread_mutex_lock(&lock); file_synced(p->t); pthread_mutex_unlock(&lock); }
    return rc;
}
static int pcFileSize(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int pcLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int pcUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int pcCheckReservedLock(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int pcFileControl(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int pcSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int pcDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int pcShmMap(sqlite3_file *f, int i, int s, int e, void volatile **pp) { return REAL(f)->pMethods->xShmMap(REAL(f), i, s, e, pp); }
static int pcShmLock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void pcShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int pcShmUnmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
static int pcFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp) { *pp = 0; (void)f; (void)o; (void)n; return SQLITE_OK; }
static int pcUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { (void)f; (void)o; (void)p; return SQLITE_OK; }

static const sqlite3_io_methods pc_methods = {
    3, pcClose, pcRead, pcWrite, pcTruncate, pcSync, pcFileSize, pcLock, pcUnlock, pcCheckReservedLock,
    pcFileControl, pcSectorSize, pcDeviceCharacteristics, pcShmMap, pcShmLock, pcShmBarrier, pcShmUnmap,
    pcFetch, pcUnfetch,
};

static int pcOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    PCFile *p = (PCFile *)f;
    memset(p, 0, sizeof *p);
    p->real = (sqlite3_file *)&p[1];
    int mine = name && under_root(name);
    int existed = mine && access(name, F_OK) == 0;
    int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
    if (rc != SQLITE_OK) { p->real->pMethods = NULL; return rc; }
    p->base.pMethods = &pc_methods;
    if (mine) {
        pthread_mutex_lock(&lock);
        int created = !existed && (flags & SQLITE_OPEN_CREATE);
        if (created) { event('n'); add_op(OP_CREATE, name, NULL); }
        p->t = track(name, created);
        if (created && (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL))) p->t->dirsync_on_sync = 1;
        pthread_mutex_unlock(&lock);
    }
    return SQLITE_OK;
}

/* The bytes of the file at path a power cut would leave, and it is gone from the tracked set. */
static void take_image(Op *op, const char *path) {
    Tracked *t = find(path);
    if (t) {
        op->image = synced_image(t, &op->image_n);
        t->gone = 1;
        if (last.file == t) last.valid = 0;
    } else {
        op->image_n = file_size(path);
        op->image = calloc(1, (size_t)op->image_n + 1);
        read_range(path, 0, op->image_n, op->image);
    }
}

static int pcDelete(sqlite3_vfs *vfs, const char *name, int dir_sync) {
    (void)vfs;
    if (under_root(name) && access(name, F_OK) == 0) {
        pthread_mutex_lock(&lock);
        event('n');
        add_op(OP_UNLINK, name, NULL);
        take_image(ops_tail, name);
        pthread_mutex_unlock(&lock);
    }
    int rc = real_vfs->xDelete(real_vfs, name, dir_sync);
    if (rc == SQLITE_OK && dir_sync && under_root(name)) {
        pthread_mutex_lock(&lock);
        char *parent = parent_of(name);
        folder_synced(parent);
        free(parent);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int pcAccess(sqlite3_vfs *v, const char *n, int fl, int *r) { (void)v; return real_vfs->xAccess(real_vfs, n, fl, r); }
static int pcFullPathname(sqlite3_vfs *v, const char *n, int k, char *o) { (void)v; return real_vfs->xFullPathname(real_vfs, n, k, o); }
static void *pcDlOpen(sqlite3_vfs *v, const char *n) { (void)v; return real_vfs->xDlOpen(real_vfs, n); }
static void pcDlError(sqlite3_vfs *v, int n, char *m) { (void)v; real_vfs->xDlError(real_vfs, n, m); }
static void (*pcDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return real_vfs->xDlSym(real_vfs, h, s); }
static void pcDlClose(sqlite3_vfs *v, void *h) { (void)v; real_vfs->xDlClose(real_vfs, h); }
static int pcRandomness(sqlite3_vfs *v, int n, char *o) { (void)v; return real_vfs->xRandomness(real_vfs, n, o); }
static int pcSleep(sqlite3_vfs *v, int us) { (void)v; return real_vfs->xSleep(real_vfs, us); }
static int pcCurrentTime(sqlite3_vfs *v, double *t) { (void)v; return real_vfs->xCurrentTime(real_vfs, t); }
static int pcGetLastError(sqlite3_vfs *v, int n, char *m) { (void)v; return real_vfs->xGetLastError(real_vfs, n, m); }
static int pcCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { (void)v; return real_vfs->xCurrentTimeInt64(real_vfs, t); }

static sqlite3_vfs pc_vfs = {
    2, 0, 1024, NULL, "powercut", NULL,
    pcOpen, pcDelete, pcAccess, pcFullPathname, pcDlOpen, pcDlError, pcDlSym, pcDlClose,
    pcRandomness, pcSleep, pcCurrentTime, pcGetLastError, pcCurrentTimeInt64,
    NULL, NULL, NULL,
};

/* ---- The exporters' seam (nk_file_calls) ------------------------------------------------------ */

static void resolve(int dirfd, const char *path, char *out) {
    if (path[0] == '/') { snprintf(out, PATH_MAX, "%s", path); return; }
    if (dirfd == AT_FDCWD) {
        char cwd[PATH_MAX / 2];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
        snprintf(out, PATH_MAX, "%.2000s/%.2000s", cwd, path);
        return;
    }
    if (dirfd >= 0 && dirfd < MAX_FDS && fds[dirfd].path) { snprintf(out, PATH_MAX, "%s/%s", fds[dirfd].path, path); return; }
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, out, PATH_MAX - 1 - strlen(path) - 1);
    if (n < 0) n = 0;
    out[n] = 0;
    strcat(out, "/");
    strcat(out, path);
}

static int s_openat(int dirfd, const char *path, int flags, unsigned int mode) {
    char full[PATH_MAX];
    resolve(dirfd, path, full);
    int mine = under_root(full);
    int existed = access(full, F_OK) == 0;
    if (mine && (flags & O_CREAT) && !existed) { pthread_mutex_lock(&lock); event('n'); pthread_mutex_unlock(&lock); }
    int fd = openat(dirfd, path, flags, (mode_t)mode);
    if (fd >= 0 && mine) {
        pthread_mutex_lock(&lock);
        if ((flags & O_CREAT) && !existed) add_op(OP_CREATE, full, NULL);
        if (fd < MAX_FDS) {
            free(fds[fd].path);
            fds[fd].path = strdup(full);
            fds[fd].is_dir = (flags & O_DIRECTORY) != 0;
        }
        if (!(flags & O_DIRECTORY)) track(full, (flags & O_CREAT) && !existed);
        pthread_mutex_unlock(&lock);
    }
    return fd;
}

static long s_write(int fd, const void *bytes, unsigned long count) {
    if (fd >= 0 && fd < MAX_FDS && fds[fd].path && !fds[fd].is_dir) {
        pthread_mutex_lock(&lock);
        event('w');
        Tracked *t = find(fds[fd].path);
        long long offset = lseek(fd, 0, SEEK_CUR);
        if (t) { remember(t, offset, (long long)count); note_last(t, offset, (long long)count, bytes); }
        pthread_mutex_unlock(&lock);
    }
    return (long)write(fd, bytes, count);
}

static int s_fsync(int fd) {
    int mine = fd >= 0 && fd < MAX_FDS && fds[fd].path;
    if (mine) { pthread_mutex_lock(&lock); event('s'); pthread_mutex_unlock(&lock); }
    if (mine && fds[fd].is_dir && (sabotage & 2)) return 0;
    int rc = fsync(fd);
    if (mine && rc == 0) {
        pthread_mutex_lock(&lock);
        if (fds[fd].is_dir) folder_synced(fds[fd].path);
        else { Tracked *t = find(fds[fd].path); if (t) file_synced(t); }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int s_syncfs(int fd) {
    pthread_mutex_lock(&lock);
    event('s');
    pthread_mutex_unlock(&lock);
    if (sabotage & 1) return 0;
    int rc = syncfs(fd);
    if (rc == 0) {
        pthread_mutex_lock(&lock);
        for (Tracked *t = files; t; t = t->next) if (!t->gone) { drop_undo(t); t->synced_size = file_size(t->path); }
        for (Op *op = ops_head; op; op = op->next) op->durable = 1;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int s_close(int fd) {
    if (fd >= 0 && fd < MAX_FDS && fds[fd].path) {
        pthread_mutex_lock(&lock);
        free(fds[fd].path);
        fds[fd].path = NULL;
        pthread_mutex_unlock(&lock);
    }
    return close(fd);
}

static int s_renameat(int old_dirfd, const char *old_path, int new_dirfd, const char *new_path) {
    char from[PATH_MAX], to[PATH_MAX];
    resolve(old_dirfd, old_path, from);
    resolve(new_dirfd, new_path, to);
    int mine = under_root(from) || under_root(to);
    if (mine) {
        pthread_mutex_lock(&lock);
        event('n');
        add_op(OP_RENAME, from, to);
        struct stat st;
        if (lstat(to, &st) == 0) {
            ops_tail->had_target = S_ISDIR(st.st_mode) ? 2 : 1;
            if (ops_tail->had_target == 1) take_image(ops_tail, to);
        }
        pthread_mutex_unlock(&lock);
    }
    int rc = renameat(old_dirfd, old_path, new_dirfd, new_path);
    if (mine && rc == 0) {
        pthread_mutex_lock(&lock);
        size_t n = strlen(from);
        for (Tracked *t = files; t; t = t->next) {
            if (t->gone || strncmp(t->path, from, n) != 0 || (t->path[n] != 0 && t->path[n] != '/')) continue;
            char moved[PATH_MAX];
            snprintf(moved, sizeof moved, "%s%s", to, t->path + n);
            free(t->path);
            t->path = strdup(moved);
        }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int s_mkdirat(int dirfd, const char *path, unsigned int mode) {
    char full[PATH_MAX];
    resolve(dirfd, path, full);
    int mine = under_root(full);
    if (mine) { pthread_mutex_lock(&lock); event('n'); pthread_mutex_unlock(&lock); }
    int rc = mkdirat(dirfd, path, (mode_t)mode);
    if (mine && rc == 0) { pthread_mutex_lock(&lock); add_op(OP_MKDIR, full, NULL); pthread_mutex_unlock(&lock); }
    return rc;
}

static int s_unlinkat(int dirfd, const char *path, int flags) {
    char full[PATH_MAX];
    resolve(dirfd, path, full);
    if (under_root(full) && access(full, F_OK) == 0) {
        pthread_mutex_lock(&lock);
        event('n');
        add_op((flags & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, full, NULL);
        if (!(flags & AT_REMOVEDIR)) take_image(ops_tail, full);
        pthread_mutex_unlock(&lock);
    }
    return unlinkat(dirfd, path, flags);
}

/* Field for field nk_file_calls of include/noteskit.h. */
static const struct {
    int (*openat)(int, const char *, int, unsigned int);
    long (*write)(int, const void *, unsigned long);
    int (*fsync)(int);
    int (*syncfs)(int);
    int (*close)(int);
    int (*renameat)(int, const char *, int, const char *);
    int (*mkdirat)(int, const char *, unsigned int);
    int (*unlinkat)(int, const char *, int);
} file_calls = { s_openat, s_write, s_fsync, s_syncfs, s_close, s_renameat, s_mkdirat, s_unlinkat };

/* ---- Entry points (called from stress/powercut.py through ctypes) ---------------------------- */

/* Makes the seam's syncfs (1) and/or its fsync of a folder (2) do nothing: the bugs the trials must
 * catch, for their own test. */
void powercut_sabotage(int what) { sabotage = what; }

/* Where the cut reports a torn write (a pipe to the parent), -1 for nowhere. */
void powercut_report_to(int fd) { report_fd = fd; }

/* The table for nk_testing_set_file_calls. */
const void *powercut_file_calls(void) { return &file_calls; }

/* Watches every file under root_folder (an absolute path) from now on, makes the powercut VFS the
 * default, and cuts the power before event `cut_before` (1-based; 0 or less: never) in `mode`
 * (0 drop, 1 torn half, 2 torn garbage). For a forked child: a process runs one trial. */
int powercut_start(const char *root_folder, long long cut_before, int mode, unsigned int seed) {
    snprintf(root, sizeof root, "%s", root_folder);
    root_len = strlen(root);
    cut_at = cut_before > 0 ? cut_before : -1;
    torn_mode = mode;
    srand(seed);
    events = 0;
    trace_len = 0;
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs) return SQLITE_ERROR;
    if (real_vfs == &pc_vfs) return SQLITE_OK;
    pc_vfs.szOsFile = (int)sizeof(PCFile) + real_vfs->szOsFile;
    pc_vfs.mxPathname = real_vfs->mxPathname;
    return sqlite3_vfs_register(&pc_vfs, 1);
}

/* The events so far, one letter each (w write, t truncate, s sync, n name change). */
const char *powercut_trace(void) {
    trace[trace_len] = 0;
    return trace;
}

/* Cuts the power now (does not return). */
void powercut_now(void) {
    pthread_mutex_lock(&lock);
    cut();
}
