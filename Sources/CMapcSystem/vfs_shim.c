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
