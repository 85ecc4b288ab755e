#ifndef FM_ALLOCATOR_H
#define FM_ALLOCATOR_H

#include <stddef.h>

/// Asks glibc's malloc to serve blocks below `mmap_threshold` bytes from its heap (instead of one `mmap` each, unmapped
/// again on `free`) and to give the heap's top back only when `trim_threshold` bytes of it are free. Returns 1 when
/// both settings were taken, 0 when one was refused, -1 where the C library is not glibc (nothing changed).
int fm_allocator_keep_freed(size_t mmap_threshold, size_t trim_threshold);

#endif
