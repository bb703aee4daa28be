// The running program's GNU build ID: what identifies this exact mapc (its engine, its build),
// read from its own loaded ELF notes, so that policies compiled for one build are never loaded
// into another.
#define _GNU_SOURCE
#include "CMapcSystem.h"
#if defined(__linux__)
#include <link.h>
#include <string.h>

struct build_id_search { unsigned char *out; size_t capacity; int length; };

static int find_in_main_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct build_id_search *search = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_NOTE) continue;
        const char *note = (const char *)(info->dlpi_addr + header->p_vaddr);
        const char *end = note + header->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *entry = (const ElfW(Nhdr) *)note;
            const char *name = note + sizeof(ElfW(Nhdr));
            const char *description = name + ((entry->n_namesz + 3) & ~3u);
            const char *next = description + ((entry->n_descsz + 3) & ~3u);
            if (next > end) break;
            if (entry->n_type == NT_GNU_BUILD_ID && entry->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                size_t length = entry->n_descsz < search->capacity ? entry->n_descsz : search->capacity;
                memcpy(search->out, description, length);
                search->length = (int)length;
                return 1;
            }
            note = next;
        }
    }
    return 1;   // the first object is the main program: stop whether or not it has one
}

int mapc_build_id(unsigned char *out, size_t capacity) {
    struct build_id_search search = { out, capacity, 0 };
    dl_iterate_phdr(find_in_main_program, &search);
    return search.length;
}
#else
int mapc_build_id(unsigned char *out, size_t capacity) { (void)out; (void)capacity; return 0; }
#endif
