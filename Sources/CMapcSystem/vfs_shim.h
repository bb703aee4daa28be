// What the VFS shims of mapc (fault injection, write-behind) share: a VFS that passes every call
// to the VFS it wraps, except opening (and, where given, deleting) files; and files that start
// with a `MapcShimFile` (the wrapped VFS's file placed after the shim's own), whose every method
// a shim may take from here and override only where it differs.
#ifndef MAPC_VFS_SHIM_H
#define MAPC_VFS_SHIM_H
#include <sqlite3.h>

/// Fills `shim` as a VFS named `name`, wrapping `wrapped` (kept in its pAppData, see
/// `MAPC_WRAPPED`), whose files are `fileSize` bytes plus the wrapped VFS's own; `open` opens
/// them, `delete` (or, when NULL, the wrapped VFS) deletes them. Every other call goes to `wrapped`.
void mapc_vfs_shim(sqlite3_vfs *shim, sqlite3_vfs *wrapped, const char *name, int fileSize,
                   int (*open)(sqlite3_vfs *, const char *, sqlite3_file *, int, int *),
                   int (*delete)(sqlite3_vfs *, const char *, int));

/// The VFS a shim wraps.
#define MAPC_WRAPPED(vfs) ((sqlite3_vfs *)(vfs)->pAppData)

/// The start of every shim's file: SQLite's, and the wrapped VFS's file it passes calls to.
typedef struct MapcShimFile {
    sqlite3_file base;
    sqlite3_file *real;
} MapcShimFile;

/// The wrapped VFS's file of a shim's file.
#define MAPC_REAL(f) (((MapcShimFile *)(f))->real)

/// Opens `name` with the VFS `shim` wraps, into the space after the shim's own part of the file
/// (the `fileSize` given to `mapc_vfs_shim`), and gives the shim's file `methods` when it opened.
/// A failed open leaves nothing open (a VFS may fail after opening its file).
int mapc_shim_open(sqlite3_vfs *shim, MapcShimFile *file, const sqlite3_io_methods *methods, const char *name, int flags, int *out);

/// Methods that pass straight to the wrapped file.
int mapc_shim_close(sqlite3_file *f);
int mapc_shim_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o);
int mapc_shim_file_size(sqlite3_file *f, sqlite3_int64 *s);
int mapc_shim_lock(sqlite3_file *f, int l);
int mapc_shim_unlock(sqlite3_file *f, int l);
int mapc_shim_check_reserved_lock(sqlite3_file *f, int *r);
int mapc_shim_file_control(sqlite3_file *f, int op, void *a);
int mapc_shim_sector_size(sqlite3_file *f);
int mapc_shim_device_characteristics(sqlite3_file *f);
int mapc_shim_shm_map(sqlite3_file *f, int i, int s, int w, void volatile **p);
int mapc_shim_shm_lock(sqlite3_file *f, int o, int n, int fl);
void mapc_shim_shm_barrier(sqlite3_file *f);
int mapc_shim_shm_unmap(sqlite3_file *f, int d);
int mapc_shim_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p);
int mapc_shim_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p);

#endif
