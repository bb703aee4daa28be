// What the VFS shims of mapc (fault injection, write-behind) share: a VFS that passes every call
// to the VFS it wraps, except opening (and, where given, deleting) files.
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

#endif
