// Write-behind for the file a migration step builds: SQLite's writes to it are copied into a
// bounded queue and written by a thread of the file's own, so that the kernel's copy of every
// page into its cache (a third of an interpreted migration's main thread at 1,000,000 notes)
// happens on the machine's other core. Only a file a connection asks for it
// (`MAPC_FCNTL_WRITE_BEHIND_BEGIN`) is written behind, until it asks to stop
// (`MAPC_FCNTL_WRITE_BEHIND_END`, which waits for the queue and returns the first failure);
// every other file, and every other call, goes straight to the VFS this one wraps. The thread is
// woken once a few hundred KiB are queued (or someone waits for the queue), and takes up to 64
// writes at a time, those that follow each other in the file in one `pwritev`.
//
// What SQLite sees stays what it would see without the queue:
// - a read of a page still queued is answered from the queue (the newest write of it); any other
//   read that could meet a queued write waits for the queue to empty first;
// - the file's size counts the queued writes;
// - truncating, syncing, locking and unlocking wait for the queue to empty first, so another
//   connection that locks the file after a commit reads what was committed;
// - a write the thread could not make fails every later call on the file, and the end;
// - queued writes are numbered for the fault-injection harness when SQLite makes them, on its
//   thread, as the harness's own VFS would number them, so its crash and failure points stay the
//   same whatever the thread's timing.
#include "CMapcSystem.h"
#include <stdatomic.h>
#include "vfs_shim.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/// The most bytes queued at once; a writer that would pass it waits for the thread. Queued and
/// spare entries together never pass it, and it counts in the process's peak memory: it fills
/// only when the disk is slower than SQLite (a 10M-note benchmark run right after another's 6 GB
/// peaked at 66 MiB with 8 MiB here, against 58-60 MiB in quiet runs); 4 MiB was as fast.
#define QUEUE_LIMIT (4 * 1024 * 1024)
#define BUCKETS 4096
/// The thread is woken once this much is queued (or someone waits for the queue): woken for
/// every page, the two threads spent 9% of SQLite's in waking and switching. Writes may so stay
/// queued until the next lock, unlock, sync or truncate, which is sound because every commit
/// unlocks the file: `Store.beginWritingBehind` refuses WAL and exclusive locking mode, where a
/// commit would not.
#define WAKE_BYTES (256 * 1024)
/// The most queued writes the thread takes at once (and writes in one call where they follow
/// each other in the file).
#define BATCH 64

typedef struct Pending {
    struct Pending *next;       // the queue, oldest first
    struct Pending *sameBucket; // the bucket's chain, newest first
    sqlite3_int64 offset;
    int amount;
    unsigned char data[];
} Pending;

typedef struct WriteBehind {
    int fd;
    const char *path;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work;         // the thread waits on it for writes (or to stop)
    pthread_cond_t room;         // writers wait on it for room, and callers for the queue to empty
    int idle;                    // the thread is waiting on `work`
    int writerWaiting;           // a writer waits for the queue to fall to half the limit
    Pending *head, *tail;
    size_t queuedBytes;
    int stopping;
    int waiting;                 // callers waiting for the queue to empty
    int error;                   // the first failure's SQLite code, or SQLITE_OK
    int unit;                    // the size of every queued write (each at a multiple of it)
    sqlite3_int64 pendingEnd;    // the end of the furthest write queued since the queue was last empty
    Pending *buckets[BUCKETS];   // queued writes by offset / unit
    Pending *spare;              // written entries of `spareSize` bytes, kept for the next writes
    int spareSize;
} WriteBehind;

typedef struct WBFile {
    MapcShimFile shim;           // first: SQLite's file, and the wrapped VFS's
    const char *path;            // main database files only; valid until xClose
    WriteBehind *behind;         // while writing behind
    int descriptor;              // the thread's; closed only after SQLite's own (see `begin`)
    int failed;                  // a write the thread could not make: every later call fails
    dev_t device;                // the file SQLite opened, which the thread's descriptor must be
    ino_t inode;
} WBFile;

static sqlite3_vfs *wrapped = 0;
static sqlite3_vfs behindVFS;
// The test hooks, for files under `hookFolder`: the thread's writes after the next `failAfter`
// fail; while `holding`, the thread writes only once the queue is half full (or someone waits).
static long failAfter = -1;
static int holding = 0;          // 1: until the queue is half full; 2: until a writer waits for room
static long queueHits = 0;       // reads answered from a queue
static char hookFolder[4096];
static pthread_mutex_t hookLock = PTHREAD_MUTEX_INITIALIZER;
// Whether a test set the hooks: until then no write takes the hooks' lock or compares paths.
static _Atomic int hooksActive = 0;

#define REAL(f) MAPC_REAL(f)
#define BEHIND(f) (((WBFile *)(f))->behind)

static int bucketOf(const WriteBehind *w, sqlite3_int64 offset) {
    return (int)((unsigned long long)(offset / w->unit) % BUCKETS);
}

/// Removes a written (or dropped) write from its bucket. Called with the lock held.
static void unhash(WriteBehind *w, Pending *p) {
    Pending **link = &w->buckets[bucketOf(w, p->offset)];
    while (*link && *link != p) link = &(*link)->sameBucket;
    if (*link) *link = p->sameBucket;
}

/// Whether the thread holds its writes back (the test hook), which lets tests read pages queued.
static int hookHolds(const WriteBehind *w) {
    if (!atomic_load_explicit(&hooksActive, memory_order_acquire)) return 0;
    pthread_mutex_lock(&hookLock);
    int held = strncmp(w->path, hookFolder, strlen(hookFolder)) == 0 ? holding : 0;
    pthread_mutex_unlock(&hookLock);
    if (!held || w->stopping || w->waiting || w->writerWaiting) return 0;
    return held == 2 || w->queuedBytes < QUEUE_LIMIT / 2;
}

/// Whether the thread's next write to `path` is to fail (the test hook).
static int hookSaysFail(const char *path) {
    if (!atomic_load_explicit(&hooksActive, memory_order_acquire)) return 0;
    pthread_mutex_lock(&hookLock);
    int fail = 0;
    if (failAfter < 0 || strncmp(path, hookFolder, strlen(hookFolder)) != 0) {}
    else if (failAfter == 0) { fail = 1; failAfter = -1; }
    else failAfter -= 1;
    pthread_mutex_unlock(&hookLock);
    return fail;
}

/// Writes `parts` at `offset`, all of them: SQLITE_OK, SQLITE_FULL or SQLITE_IOERR_WRITE.
static int writeParts(int fd, struct iovec *parts, int count, off_t offset) {
    while (count > 0) {
        ssize_t n = pwritev(fd, parts, count, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return (n < 0 && (errno == ENOSPC || errno == EDQUOT)) ? SQLITE_FULL : SQLITE_IOERR_WRITE;
        offset += n;
        // A short write: on from where it stopped.
        while (count > 0 && (size_t)n >= parts->iov_len) { n -= (ssize_t)parts->iov_len; parts += 1; count -= 1; }
        if (count > 0) { parts->iov_base = (char *)parts->iov_base + n; parts->iov_len -= (size_t)n; }
    }
    return SQLITE_OK;
}

static void *writeQueued(void *argument) {
    WriteBehind *w = argument;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while ((!w->head && !w->stopping) || (w->head && hookHolds(w))) {
            w->idle = 1;
            pthread_cond_wait(&w->work, &w->lock);
            w->idle = 0;
        }
        if (!w->head) break;
        // A batch from the head, written unlocked: its entries stay queued (and found by reads)
        // until they are written; only this thread removes entries, and others only append.
        Pending *batch[BATCH];
        int count = 0;
        for (Pending *p = w->head; p && count < BATCH; p = p->next) batch[count++] = p;
        pthread_mutex_unlock(&w->lock);
        int failure = SQLITE_OK;
        for (int done = 0; done < count && failure == SQLITE_OK;) {
            // Writes each starting where the one before ends go in one call.
            struct iovec parts[BATCH];
            int run = 0;
            while (done + run < count && failure == SQLITE_OK) {
                Pending *p = batch[done + run];
                if (run > 0 && p->offset != batch[done + run - 1]->offset + batch[done + run - 1]->amount) break;
                if (hookSaysFail(w->path)) { failure = SQLITE_FULL; break; }
                parts[run].iov_base = p->data;
                parts[run].iov_len = (size_t)p->amount;
                run += 1;
            }
            if (run > 0) {
                int rc = writeParts(w->fd, parts, run, batch[done]->offset);
                if (rc != SQLITE_OK) failure = rc;
            }
            done += run;
        }
        pthread_mutex_lock(&w->lock);
        if (failure != SQLITE_OK && w->error == SQLITE_OK) w->error = failure;
        if (w->error != SQLITE_OK) {
            // Nothing more is written: the file is failed for good.
            while (w->head) {
                Pending *dropped = w->head;
                w->head = dropped->next;
                unhash(w, dropped);
                free(dropped);
            }
            w->tail = 0;
            w->queuedBytes = 0;
        } else {
            for (int i = 0; i < count; i++) {
                Pending *p = batch[i];
                w->head = p->next;
                if (!w->head) w->tail = 0;
                unhash(w, p);
                w->queuedBytes -= (size_t)p->amount;
                // Kept for SQLite's next write: an entry made on one thread and freed on another
                // cost a lock of glibc's per free (1 s more CPU at 1,000,000 notes).
                if (p->amount == w->spareSize) { p->next = w->spare; w->spare = p; } else free(p);
            }
        }
        if (!w->head) w->pendingEnd = 0;
        // Waking a writer for every page made them take turns page by page: it is woken once
        // the queue is down to half, and those waiting for it to empty when it is empty.
        if (!w->head || w->error != SQLITE_OK || (w->writerWaiting && w->queuedBytes <= QUEUE_LIMIT / 2)) pthread_cond_broadcast(&w->room);
    }
    pthread_mutex_unlock(&w->lock);
    return 0;
}

/// Waits until every queued write is made (or the file failed); returns the failure. Lock held.
static int drainLocked(WriteBehind *w) {
    w->waiting += 1;
    pthread_cond_signal(&w->work);
    while (w->head && w->error == SQLITE_OK) pthread_cond_wait(&w->room, &w->lock);
    w->waiting -= 1;
    return w->error;
}

static int drain(WriteBehind *w) {
    pthread_mutex_lock(&w->lock);
    int rc = drainLocked(w);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static int begin(WBFile *file) {
    if (file->behind) return SQLITE_OK;
    if (!file->path) return SQLITE_NOTFOUND;
    // A descriptor of its own: SQLite's is not shared with another thread. It is closed only
    // after SQLite's own (closing any descriptor drops the process's POSIX locks on the file).
    if (file->failed) return file->failed;
    if (file->descriptor < 0) {
        int descriptor = open(file->path, O_RDWR | O_CLOEXEC);
        if (descriptor < 0) return SQLITE_CANTOPEN;
        // The path must still name the file SQLite opened, not one renamed over it since.
        struct stat opened;
        if (fstat(descriptor, &opened) != 0 || opened.st_dev != file->device || opened.st_ino != file->inode) {
            close(descriptor);
            return SQLITE_CANTOPEN;
        }
        file->descriptor = descriptor;
    }
    WriteBehind *w = calloc(1, sizeof(WriteBehind));
    if (!w) return SQLITE_NOMEM;
    w->fd = file->descriptor;
    w->path = file->path;
    pthread_mutex_init(&w->lock, 0);
    pthread_cond_init(&w->work, 0);
    pthread_cond_init(&w->room, 0);
    if (pthread_create(&w->thread, 0, writeQueued, w) != 0) {
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->room);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return SQLITE_ERROR;
    }
    file->behind = w;
    return SQLITE_OK;
}

/// Stops writing behind: waits for the queue and the thread; the file is written in line from
/// now on. Returns the first failure. The descriptor is kept until the file closes.
static int end(WBFile *file) {
    WriteBehind *w = file->behind;
    if (!w) return SQLITE_OK;
    pthread_mutex_lock(&w->lock);
    int rc = drainLocked(w);
    w->stopping = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, 0);
    while (w->spare) { Pending *old = w->spare; w->spare = old->next; free(old); }
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->room);
    pthread_mutex_destroy(&w->lock);
    free(w);
    file->behind = 0;
    // The file lacks a write: it stays failed, written behind or not.
    if (rc != SQLITE_OK) file->failed = rc;
    return rc;
}

static int bClose(sqlite3_file *f) {
    WBFile *file = (WBFile *)f;
    // A file closed while written behind is written out first; a failure then has no one to
    // tell, so a step ends writing behind (and hears of failures) before it closes its file.
    end(file);
    int rc = mapc_shim_close(f);
    // Assumed, and true of a step's file: no other connection of this process has it open, whose
    // POSIX locks closing this descriptor would drop.
    if (file->descriptor >= 0) close(file->descriptor);
    file->descriptor = -1;
    return file->failed ? file->failed : rc;
}

static int bRead(sqlite3_file *f, void *b, int n, sqlite3_int64 o) {
    if (((WBFile *)f)->failed) return ((WBFile *)f)->failed;
    WriteBehind *w = BEHIND(f);
    if (w) {
        pthread_mutex_lock(&w->lock);
        if (w->error != SQLITE_OK) { int rc = w->error; pthread_mutex_unlock(&w->lock); return rc; }
        if (w->head) {
            if (n == w->unit && o % w->unit == 0) {
                // Whole queued writes only: this read meets at most one, the newest of its offset.
                for (Pending *p = w->buckets[bucketOf(w, o)]; p; p = p->sameBucket) {
                    if (p->offset == o) {
                        memcpy(b, p->data, (size_t)n);
                        pthread_mutex_unlock(&w->lock);
                        if (atomic_load_explicit(&hooksActive, memory_order_acquire)) {
                            pthread_mutex_lock(&hookLock);
                            if (holding) queueHits += 1;
                            pthread_mutex_unlock(&hookLock);
                        }
                        return SQLITE_OK;
                    }
                }
            } else if (o < w->pendingEnd) {
                int rc = drainLocked(w);
                if (rc != SQLITE_OK) { pthread_mutex_unlock(&w->lock); return rc; }
            }
        }
        pthread_mutex_unlock(&w->lock);
    }
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}

static int bWrite(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
    WBFile *file = (WBFile *)f;
    if (file->failed) return file->failed;
    WriteBehind *w = file->behind;
    if (!w) return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
    if (n <= 0 || o % n != 0) {
        // Not a whole page at its place, which SQLite does not write to a database file: made
        // in line once the queue is empty (and numbered by the VFS below, as in line).
        int rc = drain(w);
        return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
    }
    // Numbered here, where the harness's own VFS (below this one) would number it.
    if (mapc_faults_tick(MAPC_FAULT_WRITE)) return SQLITE_IOERR_WRITE;
    pthread_mutex_lock(&w->lock);
    Pending *p = 0;
    if (w->spare && w->spareSize == n) { p = w->spare; w->spare = p->next; }
    pthread_mutex_unlock(&w->lock);
    if (!p) p = malloc(sizeof(Pending) + (size_t)n);
    if (!p) return SQLITE_IOERR_NOMEM;
    p->offset = o;
    p->amount = n;
    p->next = 0;
    memcpy(p->data, b, (size_t)n);
    pthread_mutex_lock(&w->lock);
    int rc = w->error;
    // A write of another size waits for the queue to empty: the queue only ever holds writes of
    // one size, each at a multiple of it, which reads look up whole.
    if (rc == SQLITE_OK && w->head && n != w->unit) rc = drainLocked(w);
    if (rc == SQLITE_OK && w->head && w->queuedBytes + (size_t)n > QUEUE_LIMIT) {
        // Full: wait until it is down to half, not for room for one page.
        w->writerWaiting = 1;
        pthread_cond_signal(&w->work);
        while (rc == SQLITE_OK && w->head && w->queuedBytes > QUEUE_LIMIT / 2) {
            pthread_cond_wait(&w->room, &w->lock);
            rc = w->error;
        }
        w->writerWaiting = 0;
    }
    if (rc != SQLITE_OK) {
        pthread_mutex_unlock(&w->lock);
        free(p);
        return rc;
    }
    if (!w->head) w->unit = n;
    if (w->spareSize != n) {
        // Entries are kept for one size only: the page size.
        while (w->spare) { Pending *old = w->spare; w->spare = old->next; free(old); }
        w->spareSize = n;
    }
    int bucket = bucketOf(w, o);
    p->sameBucket = w->buckets[bucket];
    w->buckets[bucket] = p;
    if (w->tail) w->tail->next = p; else w->head = p;
    w->tail = p;
    w->queuedBytes += (size_t)n;
    if (o + n > w->pendingEnd) w->pendingEnd = o + n;
    if (w->idle && w->queuedBytes >= WAKE_BYTES) pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    return SQLITE_OK;
}

/// Before a call that must see the file as written: the file's failure, or the queue emptied.
static int settle(sqlite3_file *f) {
    if (((WBFile *)f)->failed) return ((WBFile *)f)->failed;
    return BEHIND(f) ? drain(BEHIND(f)) : SQLITE_OK;
}

static int bTruncate(sqlite3_file *f, sqlite3_int64 s) {
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xTruncate(REAL(f), s);
}

static int bSync(sqlite3_file *f, int flags) {
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int bFileSize(sqlite3_file *f, sqlite3_int64 *s) {
    if (((WBFile *)f)->failed) return ((WBFile *)f)->failed;
    WriteBehind *w = BEHIND(f);
    if (!w) return REAL(f)->pMethods->xFileSize(REAL(f), s);
    // The size is read with the lock held: an entry leaves the queue only under it, once written,
    // so the file's size and the queue's end are seen at one moment.
    pthread_mutex_lock(&w->lock);
    int rc = w->error;
    if (rc == SQLITE_OK) rc = REAL(f)->pMethods->xFileSize(REAL(f), s);
    if (rc == SQLITE_OK && w->head && w->pendingEnd > *s) *s = w->pendingEnd;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static int bLock(sqlite3_file *f, int l) {
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xLock(REAL(f), l);
}

static int bUnlock(sqlite3_file *f, int l) {
    // After a commit: what was committed is in the file before anyone else can lock it (or, when
    // a write failed, the failure is returned, and the file fails every later call).
    int drained = BEHIND(f) ? drain(BEHIND(f)) : SQLITE_OK;
    int rc = REAL(f)->pMethods->xUnlock(REAL(f), l);
    return drained != SQLITE_OK ? drained : rc;
}


static int bFileControl(sqlite3_file *f, int op, void *a) {
    WBFile *file = (WBFile *)f;
    if (op == MAPC_FCNTL_WRITE_BEHIND_BEGIN) return begin(file);
    if (op == MAPC_FCNTL_WRITE_BEHIND_END) return end(file);
    // A size hint may extend the file by writing to it in line: after the queued writes.
    if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE) {
        int rc = settle(f);
        if (rc != SQLITE_OK) return rc;
    }
    return REAL(f)->pMethods->xFileControl(REAL(f), op, a);
}

static int bFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) {
    // A memory map would show the file without the queued writes: SQLite reads instead.
    if (BEHIND(f)) { *p = 0; return SQLITE_OK; }
    return REAL(f)->pMethods->xFetch(REAL(f), o, n, p);
}

static const sqlite3_io_methods methods = {
    3, bClose, bRead, bWrite, bTruncate, bSync, bFileSize, bLock, bUnlock, mapc_shim_check_reserved_lock,
    bFileControl, mapc_shim_sector_size, mapc_shim_device_characteristics, mapc_shim_shm_map, mapc_shim_shm_lock,
    mapc_shim_shm_barrier, mapc_shim_shm_unmap, bFetch, mapc_shim_unfetch,
};

static int vOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
    WBFile *file = (WBFile *)f;
    file->behind = 0;
    file->descriptor = -1;
    file->failed = SQLITE_OK;
    file->device = 0;
    file->inode = 0;
    file->path = (flags & SQLITE_OPEN_MAIN_DB) && name ? name : 0;
    int rc = mapc_shim_open(vfs, &file->shim, &methods, name, flags, out);
    struct stat opened;
    if (rc == SQLITE_OK && file->path && stat(file->path, &opened) == 0) {
        file->device = opened.st_dev;
        file->inode = opened.st_ino;
    } else {
        file->path = 0;   // never written behind
    }
    return rc;
}

static pthread_once_t installOnce = PTHREAD_ONCE_INIT;
static int installed = 0;

static void install(void) {
    wrapped = sqlite3_vfs_find(0);
    if (!wrapped) return;
    mapc_vfs_shim(&behindVFS, wrapped, "mapc-write-behind", (int)sizeof(WBFile), vOpen, 0);
    // Not the default: only the files a step opens through it by name (`MAPC_WRITE_BEHIND_VFS`)
    // go through it; an app's own connections never do.
    installed = sqlite3_vfs_register(&behindVFS, 0) == SQLITE_OK;
}

int mapc_write_behind_install(void) {
    pthread_once(&installOnce, install);
    return installed;
}

long mapc_write_behind_test_hooks(const char *folder, long failingAfter, int holdingBack) {
    pthread_mutex_lock(&hookLock);
    long hits = queueHits;
    queueHits = 0;
    strncpy(hookFolder, folder, sizeof(hookFolder) - 1);
    failAfter = failingAfter;
    holding = holdingBack;
    atomic_store_explicit(&hooksActive, 1, memory_order_release);
    pthread_mutex_unlock(&hookLock);
    return hits;
}
