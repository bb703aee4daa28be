// Deterministic fault injection for mapc's crash tests, in the manner of SQLite's own crash
// testing: every write and sync SQLite performs, and every rename, link and sync mapc performs,
// is numbered; with MAPC_FAULT=crash@N the process dies at the N-th, with MAPC_FAULT=fail@N the
// N-th fails with an I/O error, with MAPC_FAULT=term@N the process sends itself SIGTERM there (as
// a user stopping it would, at a known point) and goes on (hup@N: SIGHUP, a terminal closing;
// int@N: SIGINT, a Ctrl-C), and MAPC_FAULT=count reports how many there were (in
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
static int mode = 0;          // 0 count only, 1 crash, 2 fail, 3 SIGTERM, 4 SIGHUP, 5 SIGINT
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
    if (mode == 3) kill(getpid(), SIGTERM);
    if (mode == 4) kill(getpid(), SIGHUP);
    if (mode == 5) kill(getpid(), SIGINT);
    return mode == 2 ? 1 : 0;
}

#define REAL(f) MAPC_REAL(f)

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

static const sqlite3_io_methods methods = {
    3, mapc_shim_close, mapc_shim_read, fWrite, fTruncate, fSync, mapc_shim_file_size, mapc_shim_lock,
    mapc_shim_unlock, mapc_shim_check_reserved_lock, mapc_shim_file_control, mapc_shim_sector_size,
    mapc_shim_device_characteristics, mapc_shim_shm_map, mapc_shim_shm_lock, mapc_shim_shm_barrier,
    mapc_shim_shm_unmap, mapc_shim_fetch, mapc_shim_unfetch,
};

static int vOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
    return mapc_shim_open(vfs, (MapcShimFile *)f, &methods, name, flags, out);
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
    else if (strncmp(setting, "term@", 5) == 0) { mode = 3; target = atol(setting + 5); }
    else if (strncmp(setting, "hup@", 4) == 0) { mode = 4; target = atol(setting + 4); }
    else if (strncmp(setting, "int@", 4) == 0) { mode = 5; target = atol(setting + 4); }
    else if (strcmp(setting, "count") == 0) { mode = 0; target = 0; }
    else return 0;
    original = sqlite3_vfs_find(0);
    if (!original) return 0;
    mapc_vfs_shim(&faultVFS, original, "mapc-faults", (int)sizeof(MapcShimFile), vOpen, vDelete);
    if (sqlite3_vfs_register(&faultVFS, 1) != SQLITE_OK) return 0;
    active = 1;
    atexit(report);
    return 1;
}
