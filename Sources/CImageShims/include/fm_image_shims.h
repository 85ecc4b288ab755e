#ifndef FM_IMAGE_SHIMS_H
#define FM_IMAGE_SHIMS_H

// Why this C target exists: libjpeg and libpng report fatal errors by calling an error callback that
// must not return (longjmp), and print warnings to stderr by default. Swift cannot use setjmp, so every
// libjpeg/libpng call lives here behind setjmp, warnings are captured into a buffer, and each function
// returns a status code plus a message. Nothing here prints, exits or aborts.

#include <stddef.h>
#include <stdint.h>

#define FM_MSG_CAP 256

typedef enum {
    FM_OK = 0,
    FM_ERR_DECODE = 1,      // the library rejected the data (message says why)
    FM_ERR_TRUNCATED = 2,   // data ended before the image was complete
    FM_ERR_LIMIT = 3,       // a resource limit (scans, buffer size) was hit
    FM_ERR_MEMORY = 4,      // allocation failed
    FM_ERR_ARGUMENT = 5     // caller passed an inconsistent buffer or size
} fm_status;

typedef struct {
    char message[FM_MSG_CAP];   // error message, or the first warning
    int warning_count;          // warnings libjpeg/libpng emitted (corrupt data they recovered from)
    int premature_end;          // 1 when the data ended early (libjpeg inserted a fake EOI)
    int corrupt;                // 1 when a warning said the data was corrupt (not merely odd)
} fm_report;

typedef struct {
    uint32_t width;             // stored (unscaled) width
    uint32_t height;
    int components;             // 1, 3 or 4
    int color_space;            // J_COLOR_SPACE of the file (1 gray, 2 RGB, 3 YCbCr, 4 CMYK, 5 YCCK)
    int progressive;            // 1 for progressive JPEG
    uint32_t out_width;         // output size at the requested scale
    uint32_t out_height;
} fm_jpeg_info;

/// Reads the JPEG header and computes the output size for scale `scale_num`/8 (1...8).
fm_status fm_jpeg_info_read(const uint8_t *data, size_t size, int scale_num, fm_jpeg_info *info, fm_report *report);

/// Decodes to RGB8 at scale `scale_num`/8 into `out` (capacity `out_size`, must equal out_width*out_height*3).
/// CMYK/YCCK are converted to RGB (Adobe inverted CMYK handled). `max_scans` bounds progressive scans;
/// `budget_ns` (> 0) bounds the decode's wall time: past it the decode stops with FM_ERR_LIMIT.
fm_status fm_jpeg_decode_rgb(const uint8_t *data, size_t size, int scale_num, int max_scans, int64_t budget_ns,
                             uint8_t *out, size_t out_size, uint32_t *out_width, uint32_t *out_height,
                             fm_report *report);

/// Encodes RGB8 pixels to a baseline JPEG (quality 1...100). On success `*out` is malloc'ed; free with fm_free.
fm_status fm_jpeg_encode_rgb(const uint8_t *pixels, uint32_t width, uint32_t height, int quality,
                             uint8_t **out, size_t *out_size, fm_report *report);

typedef struct {
    uint32_t width;
    uint32_t height;
    int bit_depth;
    int color_type;             // PNG_COLOR_TYPE_*
    int interlaced;             // 1 for Adam7
} fm_png_info;

fm_status fm_png_info_read(const uint8_t *data, size_t size, fm_png_info *info, fm_report *report);

/// Decodes any PNG to RGB8 (palette/gray expanded, 16-bit scaled, alpha composited on white, Adam7 handled).
/// `budget_ns` (> 0) bounds the decode's wall time (checked after every row): past it, FM_ERR_LIMIT.
fm_status fm_png_decode_rgb(const uint8_t *data, size_t size, int64_t budget_ns, uint8_t *out, size_t out_size,
                            fm_report *report);

/// CLOCK_MONOTONIC in nanoseconds (for decode time budgets).
int64_t fm_monotonic_ns(void);

/// Encodes RGB8 pixels to PNG. On success `*out` is malloc'ed; free with fm_free.
fm_status fm_png_encode_rgb(const uint8_t *pixels, uint32_t width, uint32_t height,
                            uint8_t **out, size_t *out_size, fm_report *report);

void fm_free(void *p);

/// SHA-256 of `length` bytes into `out` (libcrypto). 0 on success.
int fm_sha256(const unsigned char *data, size_t length, unsigned char out[32]);

#endif
