// Deterministic fault injection for mapc's crash tests, in the manner of SQLite's own crash
// testing: every write and sync SQLite performs, and every rename, link and sync mapc performs,
// is numbered; with MAPC_FAULT=crash@N the process dies at the N-th, with MAPC_FAULT=fail@N the
// N-th fails with an I/O error, and MAPC_FAULT=count reports how many there were (in
// MAPC_FAULT_LOG, a file appended to at exit). Without MAPC_FAULT nothing here is active.
#include "CMapcSystem.h"
#include "vfs_shim.h"
#include <sqlite3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int active = 0;
static int mode = 0;          // 0 count only, 1 crash, 2 fail
static long target = 0;
static long counter = 0;
static sqlite3_vfs *original = 0;

int mapc_faults_tick(int kind) {
    (void)kind;
    if (!active) return 0;
    counter += 1;
    if (counter != target) return 0;
    if (mode == 1) {
        kill(getpid(), SIGKILL);
        pause();
    }
    return mode == 2 ? 1 : 0;
}

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;
} FaultFile;

#define REAL(f) (((FaultFile *)(f))->real)

static int fClose(sqlite3_file *f) { return REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK; }
static int fRead(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int fWrite(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
    if (mapc_faults_tick(MAPC_FAULT_WRITE)) return SQLITE_IOERR_WRITE;
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int fTruncate(sqlite3_file *f, sqlite3_int64 s) {
    if (mapc_faults_tick(MAPC_FAULT_WRITE)) return SQLITE_IOERR_TRUNCATE;
    return REAL(f)->pMethods->xTruncate(REAL(f), s);
}
static int fSync(sqlite3_file *f, int flags) {
    if (mapc_faults_tick(MAPC_FAULT_SYNC)) return SQLITE_IOERR_FSYNC;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int fFileSize(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int fLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int fUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int fCheckReservedLock(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int fFileControl(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int fSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fShmMap(sqlite3_file *f, int i, int s, int w, void volatile **p) { return REAL(f)->pMethods->xShmMap(REAL(f), i, s, w, p); }
static int fShmLock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void fShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fShmUnmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
static int fFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, p); }
static int fUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods methods = {
    3, fClose, fRead, fWrite, fTruncate, fSync, fFileSize, fLock, fUnlock, fCheckReservedLock,
    fFileControl, fSectorSize, fDeviceCharacteristics, fShmMap, fShmLock, fShmBarrier, fShmUnmap, fFetch, fUnfetch,
};

static int vOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
    (void)vfs;
    FaultFile *file = (FaultFile *)f;
    file->real = (sqlite3_file *)&file[1];
    int rc = original->xOpen(original, name, file->real, flags, out);
    file->base.pMethods = (rc == SQLITE_OK && file->real->pMethods) ? &methods : 0;
    return rc;
}
static int vDelete(sqlite3_vfs *vfs, const char *name, int sync) {
    (void)vfs;
    if (mapc_faults_tick(MAPC_FAULT_WRITE)) return SQLITE_IOERR_DELETE;
    return original->xDelete(original, name, sync);
}

static sqlite3_vfs faultVFS;

static void report(void) {
    const char *log = getenv("MAPC_FAULT_LOG");
    if (!log) return;
    FILE *out = fopen(log, "a");
    if (!out) return;
    fprintf(out, "%ld\n", counter);
    fclose(out);
}

int mapc_faults_install(void) {
    const char *setting = getenv("MAPC_FAULT");
    if (!setting || !*setting) return 0;
    if (strncmp(setting, "crash@", 6) == 0) { mode = 1; target = atol(setting + 6); }
    else if (strncmp(setting, "fail@", 5) == 0) { mode = 2; target = atol(setting + 5); }
    else if (strcmp(setting, "count") == 0) { mode = 0; target = 0; }
    else return 0;
    original = sqlite3_vfs_find(0);
    if (!original) return 0;
    mapc_vfs_shim(&faultVFS, original, "mapc-faults", (int)sizeof(FaultFile), vOpen, vDelete);
    if (sqlite3_vfs_register(&faultVFS, 1) != SQLITE_OK) return 0;
    active = 1;
    atexit(report);
    return 1;
}
