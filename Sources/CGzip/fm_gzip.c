#include "fm_gzip.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

static void fm_gzip_message(char *err, size_t errlen, const char *what, const char *detail) {
    if (err && errlen) snprintf(err, errlen, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

long long fm_gunzip(const char *path, void *out, size_t capacity, char *err, size_t errlen) {
    gzFile gz = gzopen(path, "rb");
    if (!gz) { fm_gzip_message(err, errlen, "cannot open", strerror(errno)); return -1; }
    gzbuffer(gz, 1 << 17);
    // zlib reads a file without the gzip magic as plain bytes; asked right after opening, it looks at the first bytes
    // of this one open file (no second open that could see another file).
    if (gzdirect(gz)) {
        fm_gzip_message(err, errlen, "not a gzip file (no 1f 8b magic)", NULL);
        gzclose(gz);
        return -1;
    }
    unsigned char *dst = (unsigned char *)out;
    size_t total = 0;
    unsigned char spill;
    for (;;) {
        // Past the capacity one more byte is asked for, so output longer than expected is seen, not cut short.
        unsigned char *dest = &spill;
        unsigned want = 1;
        if (total < capacity) {
            size_t left = capacity - total;
            dest = dst + total;
            want = left > (1u << 30) ? (1u << 30) : (unsigned)left;
        }
        int n = gzread(gz, dest, want);
        if (n < 0) {
            int code = 0;
            const char *msg = gzerror(gz, &code);
            fm_gzip_message(err, errlen, "corrupt gzip stream", msg);
            gzclose(gz);
            return -1;
        }
        if (n == 0) break;
        if (total >= capacity) {
            fm_gzip_message(err, errlen, "the file inflates to more bytes than its trailer says", NULL);
            gzclose(gz);
            return -1;
        }
        total += (size_t)n;
    }
    // gzread returns 0 both at a clean end and on a stream cut short; only gzclose's result tells them apart.
    int code = 0;
    const char *msg = gzerror(gz, &code);
    if (code != Z_OK && code != Z_BUF_ERROR) {
        fm_gzip_message(err, errlen, "corrupt gzip stream", msg);
        gzclose(gz);
        return -1;
    }
    int closed = gzclose(gz);
    if (code == Z_BUF_ERROR || closed == Z_BUF_ERROR) {
        fm_gzip_message(err, errlen, "truncated gzip stream (the file ends early)", NULL);
        return -1;
    }
    if (closed != Z_OK) {
        fm_gzip_message(err, errlen, "corrupt gzip stream", zError(closed));
        return -1;
    }
    return (long long)total;
}

int fm_gzip(const char *path, const void *data, size_t length, int level, char *err, size_t errlen) {
    char mode[4] = {'w', 'b', (char)('0' + (level < 1 ? 1 : level > 9 ? 9 : level)), 0};
    gzFile gz = gzopen(path, mode);
    if (!gz) { fm_gzip_message(err, errlen, "cannot create", strerror(errno)); return -1; }
    const unsigned char *src = (const unsigned char *)data;
    size_t done = 0;
    while (done < length) {
        size_t left = length - done;
        unsigned chunk = left > (1u << 30) ? (1u << 30) : (unsigned)left;
        int n = gzwrite(gz, src + done, chunk);
        if (n <= 0) {
            int code = 0;
            const char *msg = gzerror(gz, &code);
            fm_gzip_message(err, errlen, "cannot write", code == Z_ERRNO ? strerror(errno) : msg);
            gzclose(gz);
            return -1;
        }
        done += (size_t)n;
    }
    int closed = gzclose(gz);
    if (closed != Z_OK) {
        fm_gzip_message(err, errlen, "cannot finish", closed == Z_ERRNO ? strerror(errno) : zError(closed));
        return -1;
    }
    return 0;
}
