// Starting the write-back of a file's dirty pages without waiting for it (Linux's
// sync_file_range), on a thread of its own, so that a later fsync has less left to wait for and
// the kernel's work of submitting the pages runs beside the process's own.
#define _GNU_SOURCE
#include "CMapcSystem.h"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <pthread.h>
#endif

struct mapc_writeback {
    int descriptor;
#if defined(__linux__)
    pthread_t thread;
#endif
};

#if defined(__linux__)
static void *mapc_writeback_run(void *argument) {
    struct mapc_writeback *writeback = argument;
    (void)sync_file_range(writeback->descriptor, 0, 0, SYNC_FILE_RANGE_WRITE);
    return NULL;
}
#endif

struct mapc_writeback *mapc_writeback_begin(const char *path) {
#if defined(__linux__)
    struct mapc_writeback *writeback = malloc(sizeof *writeback);
    if (writeback == NULL) return NULL;
    writeback->descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (writeback->descriptor < 0) { free(writeback); return NULL; }
    if (pthread_create(&writeback->thread, NULL, mapc_writeback_run, writeback) != 0) {
        close(writeback->descriptor);
        free(writeback);
        return NULL;
    }
    return writeback;
#else
    (void)path;
    return NULL;
#endif
}

void mapc_writeback_end(struct mapc_writeback *writeback) {
    if (writeback == NULL) return;
#if defined(__linux__)
    pthread_join(writeback->thread, NULL);
#endif
    close(writeback->descriptor);
    free(writeback);
}
