// Extended attributes, which Swift's Glibc module does not expose: a replaced store keeps them.
#include "CMapcSystem.h"
#if defined(__linux__)
#include <sys/xattr.h>
#include <stdlib.h>
#include <string.h>

int mapc_copy_xattrs(const char *from, const char *to) {
    ssize_t size = listxattr(from, 0, 0);
    if (size <= 0) return size == 0 ? 0 : -1;
    char *names = malloc((size_t)size);
    if (!names) return -1;
    size = listxattr(from, names, (size_t)size);
    int copied = 0;
    for (char *name = names; size > 0 && name < names + size; name += strlen(name) + 1) {
        ssize_t length = getxattr(from, name, 0, 0);
        if (length < 0) continue;
        void *value = malloc(length > 0 ? (size_t)length : 1);
        if (!value) continue;
        length = getxattr(from, name, value, (size_t)length);
        if (length >= 0 && setxattr(to, name, value, (size_t)length, 0) == 0) copied += 1;
        free(value);
    }
    free(names);
    return copied;
}
#else
int mapc_copy_xattrs(const char *from, const char *to) { (void)from; (void)to; return 0; }
#endif
