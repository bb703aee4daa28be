#include <sqlite3.h>
#include <string.h>
#include "CMapcSystem.h"

int mapc_no_checkpoint_on_close(void *db) {
    return sqlite3_db_config((sqlite3 *)db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

int mapc_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Orders text by its bytes, as SQLite's BINARY does. */
static int mapc_bytewise_compare(void *unused, int length1, const void *text1, int length2, const void *text2) {
    (void)unused;
    int shorter = length1 < length2 ? length1 : length2;
    int order = shorter > 0 ? memcmp(text1, text2, (size_t)shorter) : 0;
    return order != 0 ? order : length1 - length2;
}

/* Called by SQLite when a statement needs a collation no one registered. */
static void mapc_collation_needed(void *unused, sqlite3 *db, int encoding, const char *name) {
    (void)unused;
    sqlite3_create_collation_v2(db, name, encoding == SQLITE_UTF16LE || encoding == SQLITE_UTF16BE || encoding == SQLITE_UTF16 ? encoding : SQLITE_UTF8,
                                (void *)0, mapc_bytewise_compare, (void (*)(void *))0);
}

int mapc_collation_fallback(void *db) {
    return sqlite3_collation_needed((sqlite3 *)db, (void *)0, mapc_collation_needed);
}
