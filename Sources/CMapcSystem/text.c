#define _GNU_SOURCE
#include <string.h>
#include "CMapcSystem.h"

int mapc_bytes_contain(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    if (needle_length == 0) return 1;
    if (haystack == NULL || needle == NULL || needle_length > haystack_length) return 0;
    return memmem(haystack, haystack_length, needle, needle_length) != NULL;
}
