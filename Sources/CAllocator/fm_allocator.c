// mallopt and its M_* constants live in <malloc.h>, which Swift's Glibc module does not import.
#include "fm_allocator.h"

#include <limits.h> // also defines __GLIBC__ where glibc is the C library
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int fm_allocator_keep_freed(size_t mmap_threshold, size_t trim_threshold) {
#if defined(__GLIBC__)
    if (mmap_threshold > INT_MAX || trim_threshold > INT_MAX) return 0;
    int a = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    int b = mallopt(M_TRIM_THRESHOLD, (int)trim_threshold);
    return a == 1 && b == 1 ? 1 : 0;
#else
    (void)mmap_threshold;
    (void)trim_threshold;
    return -1;
#endif
}
