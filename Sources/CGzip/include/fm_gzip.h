#ifndef FM_GZIP_H
#define FM_GZIP_H
#include <stddef.h>

// gzip files through zlib, for the nutrition tables we ship compressed (a 32 MB table is 13 MB as gzip). zlib's own
// gz* calls do the framing and check the CRC; these wrappers add what they leave to the caller: refusing a file that
// is not gzip at all (gzread would pass it through as plain bytes), a cap on the output, and a message naming the
// failure. They never print and never exit.

// Inflates the gzip file at `path` into `out` (capacity `capacity` bytes). Returns the number of bytes produced, or
// -1 with `err` filled: not gzip, corrupt or truncated stream, CRC mismatch, or more than `capacity` bytes.
long long fm_gunzip(const char *path, void *out, size_t capacity, char *err, size_t errlen);

// Writes `length` bytes of `data` to `path` as gzip at `level` (1-9). Header without name or time, so equal input
// gives equal files with one zlib. Returns 0, or -1 with `err` filled.
int fm_gzip(const char *path, const void *data, size_t length, int level, char *err, size_t errlen);

#endif
