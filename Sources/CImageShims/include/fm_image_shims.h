#ifndef FM_IMAGE_SHIMS_H
#define FM_IMAGE_SHIMS_H

// Why this C target exists: libjpeg and libpng report fatal errors by calling an error callback that
// must not return (longjmp), and print warnings to stderr by default. (libheif and libwebp return error values;
// they live here too so that Swift sees one status-and-message convention and never a C library type.) Swift cannot use setjmp, so every
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
    FM_ERR_ARGUMENT = 5,    // caller passed an inconsistent buffer or size
    FM_ERR_UNAVAILABLE = 6  // the library for this format cannot be loaded (message says which and why)
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

/// `fm_jpeg_decode_rgb` decodes a 1/8 request for a baseline 4:2:0 YCbCr JPEG with its own decoder
/// (`fm_jpeg_decode_eighth_fast`: the same pixels as libjpeg-turbo, the luminance AC coefficients skipped unread) and
/// everything else, or anything that decoder declines, with libjpeg-turbo. `FOODMOMENT_JPEG_FAST=0` turns it off.
int fm_jpeg_fast_enabled(void);

/// 1 when it decoded `data` at 1/8 into `out` (`out_size` must be the 1/8 size times 3); 0 when it declines — the file
/// is another kind, or anything in it would make libjpeg-turbo fail or warn — leaving `out` in an unspecified state.
int fm_jpeg_decode_eighth_fast(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                               uint32_t *out_width, uint32_t *out_height);

/// The fast decoder's vectorised chroma 2x2 IDCT against its scalar formula on `blocks` pseudo-random blocks (every
/// value, the 16-bit extremes, sparse and photo-like coefficients) from `seed`; the number that differ (for its tests).
int fm_jpeg_eighth_idct_check(uint64_t seed, int blocks);

/// `fm_jpeg_decode_rgb` through libjpeg-turbo alone (the reference for the fast decoder's tests and fuzzing).
fm_status fm_jpeg_decode_rgb_libjpeg(const uint8_t *data, size_t size, int scale_num, int max_scans, int64_t budget_ns,
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

typedef struct {
    uint32_t width;             // the primary image as displayed (rotation and mirroring applied)
    uint32_t height;
    uint32_t thumb_width;       // its largest thumbnail (0 when there is none), also as displayed
    uint32_t thumb_height;
    int has_alpha;
    size_t exif_size;           // bytes of the first Exif metadata block (0 when none)
} fm_heif_info;

/// HEIC/HEIF through libheif (errors come back as heif_error values; libheif never exits). Header only.
fm_status fm_heif_info_read(const uint8_t *data, size_t size, fm_heif_info *info, fm_report *report);

/// Decodes the primary image, or its largest thumbnail when `use_thumbnail`, to RGB8 with its transformations
/// applied (upright) into `out`, whose size must be the announced width * height * 3. A grid or overlay whose own
/// canvas has more than `max_pixels` pixels is refused (FM_ERR_LIMIT) before libheif allocates it.
fm_status fm_heif_decode_rgb(const uint8_t *data, size_t size, int use_thumbnail, uint64_t max_pixels, uint8_t *out,
                             size_t out_size, uint32_t *out_width, uint32_t *out_height, fm_report *report);

/// Copies the primary image's first Exif block (a 4-byte big-endian offset, then TIFF data) into `out` of exactly
/// `out_size` = `fm_heif_info.exif_size` bytes.
fm_status fm_heif_exif(const uint8_t *data, size_t size, uint8_t *out, size_t out_size, fm_report *report);

typedef struct {
    uint32_t width;
    uint32_t height;
    int has_alpha;
    int has_animation;
} fm_webp_info;

/// WebP through libwebp (status codes, no callbacks, nothing printed). Header only.
fm_status fm_webp_info_read(const uint8_t *data, size_t size, fm_webp_info *info, fm_report *report);

/// Decodes a still WebP to RGB8 at `width` x `height` (libwebp scales when that is smaller than the stored size)
/// into `out` of exactly width * height * 3 bytes.
fm_status fm_webp_decode_rgb(const uint8_t *data, size_t size, uint32_t width, uint32_t height, uint8_t *out, size_t out_size,
                             fm_report *report);

void fm_free(void *p);


#endif
