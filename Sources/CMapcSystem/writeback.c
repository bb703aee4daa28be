// Starting the write-back of a file's dirty pages without waiting for it (Linux's
// sync_file_range), so that a later fsync has less left to wait for.
#define _GNU_SOURCE
#include "CMapcSystem.h"
#include <fcntl.h>
#include <unistd.h>

int mapc_start_writeback(const char *path) {
#if defined(__linux__)
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return -1;
    int result = sync_file_range(descriptor, 0, 0, SYNC_FILE_RANGE_WRITE);
    close(descriptor);
    return result;
#else
    (void)path;
    return 0;
#endif
}
