// See vfs_shim.h.
#include "vfs_shim.h"

static int vDelete(sqlite3_vfs *v, const char *n, int s) { return MAPC_WRAPPED(v)->xDelete(MAPC_WRAPPED(v), n, s); }
static int vAccess(sqlite3_vfs *v, const char *n, int f, int *r) { return MAPC_WRAPPED(v)->xAccess(MAPC_WRAPPED(v), n, f, r); }
static int vFullPathname(sqlite3_vfs *v, const char *n, int s, char *o) { return MAPC_WRAPPED(v)->xFullPathname(MAPC_WRAPPED(v), n, s, o); }
static void *vDlOpen(sqlite3_vfs *v, const char *n) { return MAPC_WRAPPED(v)->xDlOpen(MAPC_WRAPPED(v), n); }
static void vDlError(sqlite3_vfs *v, int n, char *m) { MAPC_WRAPPED(v)->xDlError(MAPC_WRAPPED(v), n, m); }
static void (*vDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { return MAPC_WRAPPED(v)->xDlSym(MAPC_WRAPPED(v), h, s); }
static void vDlClose(sqlite3_vfs *v, void *h) { MAPC_WRAPPED(v)->xDlClose(MAPC_WRAPPED(v), h); }
static int vRandomness(sqlite3_vfs *v, int n, char *o) { return MAPC_WRAPPED(v)->xRandomness(MAPC_WRAPPED(v), n, o); }
static int vSleep(sqlite3_vfs *v, int m) { return MAPC_WRAPPED(v)->xSleep(MAPC_WRAPPED(v), m); }
static int vCurrentTime(sqlite3_vfs *v, double *t) { return MAPC_WRAPPED(v)->xCurrentTime(MAPC_WRAPPED(v), t); }
static int vGetLastError(sqlite3_vfs *v, int n, char *m) { return MAPC_WRAPPED(v)->xGetLastError ? MAPC_WRAPPED(v)->xGetLastError(MAPC_WRAPPED(v), n, m) : 0; }
static int vCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { return MAPC_WRAPPED(v)->xCurrentTimeInt64(MAPC_WRAPPED(v), t); }

void mapc_vfs_shim(sqlite3_vfs *shim, sqlite3_vfs *wrapped, const char *name, int fileSize,
                   int (*open)(sqlite3_vfs *, const char *, sqlite3_file *, int, int *),
                   int (*delete)(sqlite3_vfs *, const char *, int)) {
    *shim = *wrapped;
    shim->iVersion = wrapped->iVersion < 3 ? wrapped->iVersion : 3;
    shim->szOsFile = fileSize + wrapped->szOsFile;
    shim->zName = name;
    shim->pNext = 0;
    shim->pAppData = wrapped;
    shim->xOpen = open;
    shim->xDelete = delete ? delete : vDelete;
    shim->xAccess = vAccess;
    shim->xFullPathname = vFullPathname;
    shim->xDlOpen = vDlOpen;
    shim->xDlError = vDlError;
    shim->xDlSym = vDlSym;
    shim->xDlClose = vDlClose;
    shim->xRandomness = vRandomness;
    shim->xSleep = vSleep;
    shim->xCurrentTime = vCurrentTime;
    shim->xGetLastError = vGetLastError;
    shim->xCurrentTimeInt64 = vCurrentTimeInt64;
    shim->xSetSystemCall = 0;
    shim->xGetSystemCall = 0;
    shim->xNextSystemCall = 0;
}

int mapc_shim_open(sqlite3_vfs *shim, MapcShimFile *file, const sqlite3_io_methods *methods, const char *name, int flags, int *out) {
    sqlite3_vfs *wrapped = MAPC_WRAPPED(shim);
    // The shim's own part of the file is what `mapc_vfs_shim` added to the wrapped VFS's size.
    file->real = (sqlite3_file *)((char *)file + (shim->szOsFile - wrapped->szOsFile));
    file->real->pMethods = 0;
    int rc = wrapped->xOpen(wrapped, name, file->real, flags, out);
    if (rc != SQLITE_OK && file->real->pMethods) {
        file->real->pMethods->xClose(file->real);
        file->real->pMethods = 0;
    }
    file->base.pMethods = (rc == SQLITE_OK && file->real->pMethods) ? methods : 0;
    return rc;
}

#define REAL(f) MAPC_REAL(f)
int mapc_shim_close(sqlite3_file *f) { return REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK; }
int mapc_shim_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
int mapc_shim_file_size(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
int mapc_shim_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
int mapc_shim_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
int mapc_shim_check_reserved_lock(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
int mapc_shim_file_control(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
int mapc_shim_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
int mapc_shim_device_characteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
int mapc_shim_shm_map(sqlite3_file *f, int i, int s, int w, void volatile **p) { return REAL(f)->pMethods->xShmMap(REAL(f), i, s, w, p); }
int mapc_shim_shm_lock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
void mapc_shim_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
int mapc_shim_shm_unmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
int mapc_shim_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, p); }
int mapc_shim_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }
