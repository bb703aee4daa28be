#ifndef CMAPC_SYSTEM_H
#define CMAPC_SYSTEM_H

/// The kinds of file operation the fault-injection harness counts.
enum mapc_fault_kind { MAPC_FAULT_WRITE = 0, MAPC_FAULT_SYNC = 1, MAPC_FAULT_RENAME = 2 };

/// Reads MAPC_FAULT ("crash@N", "fail@N" or "count") and, when it is set, registers a SQLite VFS
/// that counts every write, truncate, delete and sync as the default VFS. Returns 1 when active.
int mapc_faults_install(void);

/// Counts one operation. Returns 0 to go on, 1 to fail it; at the chosen crash point the process
/// is killed (SIGKILL) before the operation, as `kill -9` would.
int mapc_faults_tick(int kind);

/// Copies every extended attribute of `from` onto `to` (Linux; elsewhere nothing). Returns the
/// number copied, or -1 when they could not be listed.
int mapc_copy_xattrs(const char *from, const char *to);

/// Stops a SQLite connection from folding its write-ahead log into the database file when it
/// closes (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, a variadic call Swift cannot make). `db` is a
/// `sqlite3 *`. Returns SQLite's result code.
int mapc_no_checkpoint_on_close(void *db);

/// Asks the kernel to start writing a file's dirty pages to disk and returns without waiting
/// (Linux's `sync_file_range(SYNC_FILE_RANGE_WRITE)`; elsewhere nothing). Durability still comes
/// from `fsync`: this only lets the disk work while the process does. Returns 0, or -1 on failure.
int mapc_start_writeback(const char *path);

#endif
