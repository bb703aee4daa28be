#ifndef CMAPC_SYSTEM_H
#define CMAPC_SYSTEM_H

#include <stddef.h>

/// The kinds of file operation the fault-injection harness counts.
enum mapc_fault_kind { MAPC_FAULT_WRITE = 0, MAPC_FAULT_SYNC = 1, MAPC_FAULT_RENAME = 2 };

/// Reads MAPC_FAULT ("crash@N", "fail@N" or "count") and, when it is set, registers a SQLite VFS
/// that counts every write, truncate, delete and sync as the default VFS. Returns 1 when active.
int mapc_faults_install(void);

/// Counts one operation. Returns 0 to go on, 1 to fail it; at the chosen crash point the process
/// is killed (SIGKILL) before the operation, as `kill -9` would.
int mapc_faults_tick(int kind);

/// Whether `needle` occurs in `haystack` (1) or not (0): the C library's `memmem`, in linear time
/// (glibc's two-way search), which Swift's Glibc module does not export. An empty needle occurs.
int mapc_bytes_contain(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// Copies every extended attribute of `from` onto `to` (Linux; elsewhere nothing). Returns the
/// number copied, or -1 when they could not be listed.
int mapc_copy_xattrs(const char *from, const char *to);

/// Stops a SQLite connection from folding its write-ahead log into the database file when it
/// closes (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, a variadic call Swift cannot make). `db` is a
/// `sqlite3 *`. Returns SQLite's result code.
int mapc_no_checkpoint_on_close(void *db);

/// Lets a connection read a store whose indexes order text by a collation an app registered
/// with SQLite (`COLLATE localized`), which mapc does not have: SQLite refuses every statement
/// that needs such an index's description (`quick_check` among them) until one is registered, so
/// one ordering text by its bytes is registered under the name when it is first needed. mapc's
/// reading does not depend on it: its queries compare with BINARY, and SQL over a table with such
/// an index is not compiled (the objects are read row by row); a write would keep such an index in
/// the wrong order, so nothing is written to a table that has one (`Store.insert` refuses).
/// `db` is a `sqlite3 *`. Returns SQLite's result code.
int mapc_collation_fallback(void *db);

/// A write-back of a file's dirty pages under way on a thread of its own.
typedef struct mapc_writeback mapc_writeback;

/// Opens the file and asks the kernel, on a new thread, to start writing its dirty pages to disk
/// (Linux's `sync_file_range(SYNC_FILE_RANGE_WRITE)`), returning at once. Durability still comes
/// from `fsync`: this only lets the disk and the kernel's page submission work beside the
/// process. NULL when it could not start (elsewhere than Linux, always): nothing to end.
mapc_writeback *mapc_writeback_begin(const char *path);

/// Waits for the write-back's call to return and closes its descriptor. Closing any descriptor of
/// a file drops the process's POSIX locks on it, SQLite's included: call it only once no
/// connection holds a lock on the file. NULL is accepted and does nothing.
void mapc_writeback_end(mapc_writeback *writeback);

/// Turns off SQLite's memory statistics, whose global mutex every SQLite allocation and free
/// takes. Only before SQLite is first used (`sqlite3_config`); returns SQLITE_OK or SQLITE_MISUSE.
int mapc_disable_memory_statistics(void);

/// The file controls (`sqlite3_file_control` on a connection's "main" database) of write-behind:
/// BEGIN starts writing the file behind on a thread of its own (SQLITE_OK, or why not, and the
/// file is written as before); END waits for every queued write and stops, returning the first
/// write that failed. Only once `mapc_write_behind_install` has made its VFS the default, for
/// files opened after that.
#define MAPC_FCNTL_WRITE_BEHIND_BEGIN 0x6d617001
#define MAPC_FCNTL_WRITE_BEHIND_END 0x6d617002

/// Registers, once, the write-behind VFS under the name "mapc-write-behind", not as the default:
/// only files opened through it by name go through it (wrapping the default VFS of the moment,
/// the fault-injection harness's when it is active), and each goes straight through until asked.
/// Returns 1 when it is registered.
int mapc_write_behind_install(void);

/// The test hooks, for files whose path starts with `folder`: the write-behind thread's write
/// after the next `failingAfter` fails as a full disk would make it (-1: none); with
/// `holdingBack` 1 the thread writes only once its queue is half full, with 2 only once a writer
/// waits for room (either way, or someone waits for the queue). Returns how many reads the
/// queue answered while holding back, since the last call.
long mapc_write_behind_test_hooks(const char *folder, long failingAfter, int holdingBack);

/// Copies the running program's GNU build ID (the linker's hash of its contents) into `out`, up
/// to `capacity` bytes. Returns its length, 0 when the program has none (or elsewhere than Linux).
int mapc_build_id(unsigned char *out, size_t capacity);

/// What the process is doing, said on standard error if it crashes (a trap in a custom policy):
/// set as the migration calls into a policy, cleared after. Copied; at most 511 bytes kept.
void mapc_crash_context_set(const char *text);

/// Forgets the context (and the exit context): a crash then adds nothing to the runtime's report.
void mapc_crash_context_clear(void);

/// What to say, on standard error, if the code called ends the process by `exit()` on this
/// thread while the context is set (a policy calling exit): the process then ends with status 3,
/// the migration not finished, where exit(0) said it succeeded. Installed with the crash note.
void mapc_exit_context_set(const char *text);

/// Makes the C library's standard output line-buffered (once it is standard error's descriptor:
/// what a policy prints then comes in its place among mapc's messages).
void mapc_line_buffer_standard_output(void);

/// Installs the handler that writes the context before the crash report, for the signals a
/// crash raises, handing each signal on to the handler installed before it. For a program that
/// runs code it did not write (the `mapc` command runs a project's policy files); a library leaves
/// its host's handlers alone.
void mapc_crash_note_install(void);

#endif
