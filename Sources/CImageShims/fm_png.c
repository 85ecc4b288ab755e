#include "fm_image_shims.h"
#include <time.h>

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

void fm_report_reset(fm_report *r);

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    int truncated;
    fm_report *report;
    fm_status status;
    int64_t deadline_ns;        // 0 = no time budget
    int64_t budget_ns;
} fm_png_source;

int64_t fm_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/// Called by libpng after every row: enforces the decode's time budget.
static void fm_png_row_fn(png_structp png, png_uint_32 row, int pass) {
    (void)row; (void)pass;
    fm_png_source *src = (fm_png_source *)png_get_io_ptr(png);
    if (src && src->deadline_ns > 0 && fm_monotonic_ns() > src->deadline_ns) {
        src->status = FM_ERR_LIMIT;
        if (src->report) {
            snprintf(src->report->message, FM_MSG_CAP, "decoding took longer than its time budget of %lld ms",
                     (long long)(src->budget_ns / 1000000));
        }
        png_error(png, "time budget");
    }
}

static void fm_png_error_fn(png_structp png, png_const_charp message) {
    fm_png_source *src = (fm_png_source *)png_get_error_ptr(png);
    if (src && src->report && src->report->message[0] == 0) {
        snprintf(src->report->message, FM_MSG_CAP, "%s", message ? message : "libpng error");
    }
    png_longjmp(png, 1);
}

static void fm_png_warning_fn(png_structp png, png_const_charp message) {
    fm_png_source *src = (fm_png_source *)png_get_error_ptr(png);
    if (!src || !src->report) return;
    if (src->report->warning_count == 0 && src->report->message[0] == 0) {
        snprintf(src->report->message, FM_MSG_CAP, "%s", message ? message : "libpng warning");
    }
    src->report->warning_count++;
}

static void fm_png_read_fn(png_structp png, png_bytep out, size_t length) {
    fm_png_source *src = (fm_png_source *)png_get_io_ptr(png);
    if (length > src->size - src->offset) {
        src->truncated = 1;
        if (src->report) src->report->premature_end = 1;
        png_error(png, "PNG data ends early (truncated file)");
    }
    memcpy(out, src->data + src->offset, length);
    src->offset += length;
}

/// libpng allocates an ancillary chunk's declared length before reading it (eXIf, tEXt/zTXt/iTXt, sPLT, …), so a
/// 120-byte file declaring an 800 MB eXIf chunk cost 800 MB (found by the png-decode fuzzer). Before libpng sees the
/// file, refuse a non-IDAT chunk that declares more bytes than the file has left: such a file is truncated or corrupt
/// and libpng would fail on it anyway, after the allocation. IDAT is streamed, never buffered whole, so it is left to
/// libpng (a truncated IDAT may still be decoded with `acceptDamagedData`).
static fm_status fm_png_check_chunks(const uint8_t *data, size_t size, fm_report *report) {
    size_t off = 8;
    while (size >= 8 && off <= size - 8) {
        const uint8_t *p = data + off;
        uint32_t length = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        char type[5];
        for (int i = 0; i < 4; i++) {
            uint8_t c = p[4 + i];
            type[i] = ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) ? (char)c : '?';
        }
        type[4] = 0;
        if (memcmp(p + 4, "IDAT", 4) == 0) break;
        size_t left = size - off - 8;
        if (length > 0x7FFFFFFFu || length > left) {
            if (report) {
                report->premature_end = 1;
                snprintf(report->message, FM_MSG_CAP,
                         "PNG chunk '%s' at byte %zu declares %u bytes but only %zu remain (truncated or corrupt file)",
                         type, off, length, left);
            }
            return FM_ERR_TRUNCATED;
        }
        if (memcmp(p + 4, "IEND", 4) == 0) break;
        off += 12 + (size_t)length;
    }
    return FM_OK;
}

static fm_status fm_png_begin(fm_png_source *src, const uint8_t *data, size_t size, fm_report *report,
                              png_structp *png, png_infop *info) {
    fm_report_reset(report);
    src->data = data;
    src->size = size;
    src->offset = 0;
    src->truncated = 0;
    src->report = report;
    src->status = FM_OK;
    if (!data || size < 8) return FM_ERR_ARGUMENT;
    if (png_sig_cmp(data, 0, 8) != 0) {
        if (report) snprintf(report->message, FM_MSG_CAP, "not a PNG signature");
        return FM_ERR_DECODE;
    }
    fm_status chunks = fm_png_check_chunks(data, size, report);
    if (chunks != FM_OK) return chunks;
    *png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, fm_png_error_fn, fm_png_warning_fn);
    if (!*png) return FM_ERR_MEMORY;
    *info = png_create_info_struct(*png);
    if (!*info) {
        png_destroy_read_struct(png, NULL, NULL);
        return FM_ERR_MEMORY;
    }
    png_set_read_fn(*png, src, fm_png_read_fn);
    // Ancillary-chunk limits a hostile file cannot get around: at most 64 ancillary chunks kept and 1 MiB per
    // decompressed chunk (iCCP, zTXt, iTXt, eXIf); the pixel limit is checked by the caller from IHDR.
    png_set_chunk_cache_max(*png, 64);
    png_set_chunk_malloc_max(*png, 1 << 20);
    png_set_user_limits(*png, 1u << 20, 1u << 20);
    return FM_OK;
}

fm_status fm_png_info_read(const uint8_t *data, size_t size, fm_png_info *out, fm_report *report) {
    fm_png_source src;
    png_structp png = NULL;
    png_infop info = NULL;
    fm_status s = fm_png_begin(&src, data, size, report, &png, &info);
    if (s != FM_OK) return s;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return src.truncated ? FM_ERR_TRUNCATED : FM_ERR_DECODE;
    }
    png_read_info(png, info);
    out->width = png_get_image_width(png, info);
    out->height = png_get_image_height(png, info);
    out->bit_depth = png_get_bit_depth(png, info);
    out->color_type = png_get_color_type(png, info);
    out->interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
    png_destroy_read_struct(&png, &info, NULL);
    return FM_OK;
}

static void fm_composite_row(const uint8_t *rgba, uint8_t *rgb, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned a = rgba[4 * x + 3];
        unsigned inv = 255 - a;
        rgb[3 * x] = (uint8_t)((rgba[4 * x] * a + 255 * inv + 127) / 255);
        rgb[3 * x + 1] = (uint8_t)((rgba[4 * x + 1] * a + 255 * inv + 127) / 255);
        rgb[3 * x + 2] = (uint8_t)((rgba[4 * x + 2] * a + 255 * inv + 127) / 255);
    }
}

fm_status fm_png_decode_rgb(const uint8_t *data, size_t size, int64_t budget_ns, uint8_t *out, size_t out_size,
                            fm_report *report) {
    fm_png_source src;
    png_structp png = NULL;
    png_infop info = NULL;
    uint8_t *volatile temp = NULL;
    png_bytep *volatile rows = NULL;
    fm_status s = fm_png_begin(&src, data, size, report, &png, &info);
    if (s != FM_OK) return s;
    src.budget_ns = budget_ns;
    src.deadline_ns = budget_ns > 0 ? fm_monotonic_ns() + budget_ns : 0;
    if (setjmp(png_jmpbuf(png))) {
        free(temp);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        if (src.status != FM_OK) return src.status;
        return src.truncated ? FM_ERR_TRUNCATED : FM_ERR_DECODE;
    }
    png_set_read_status_fn(png, fm_png_row_fn);
    png_read_info(png, info);
    uint32_t width = png_get_image_width(png, info);
    uint32_t height = png_get_image_height(png, info);
    if ((size_t)width * height * 3 != out_size || !out) {
        png_destroy_read_struct(&png, &info, NULL);
        return FM_ERR_ARGUMENT;
    }
    png_set_expand(png);               // palette -> RGB, gray < 8 bit -> 8 bit, tRNS -> alpha
    png_set_scale_16(png);             // 16-bit -> 8-bit, rounded
    png_set_gray_to_rgb(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    if (channels != 3 && channels != 4) {
        src.status = FM_ERR_DECODE;
        png_error(png, "unexpected channel count after PNG transforms");
    }
    size_t row_bytes = (size_t)width * 3;
    if (channels == 3) {
        if (passes > 1) {
            rows = (png_bytep *)malloc(sizeof(png_bytep) * (height ? height : 1));
            if (!rows) { src.status = FM_ERR_MEMORY; png_error(png, "out of memory for row pointers"); }
            for (uint32_t y = 0; y < height; y++) rows[y] = out + (size_t)y * row_bytes;
            png_read_image(png, rows);
        } else {
            for (uint32_t y = 0; y < height; y++) png_read_row(png, out + (size_t)y * row_bytes, NULL);
        }
    } else if (passes > 1) {
        size_t rgba_row = (size_t)width * 4;
        temp = (uint8_t *)malloc(rgba_row * (height ? height : 1));
        rows = (png_bytep *)malloc(sizeof(png_bytep) * (height ? height : 1));
        if (!temp || !rows) { src.status = FM_ERR_MEMORY; png_error(png, "out of memory for an interlaced RGBA image"); }
        for (uint32_t y = 0; y < height; y++) rows[y] = temp + (size_t)y * rgba_row;
        png_read_image(png, rows);
        for (uint32_t y = 0; y < height; y++) fm_composite_row(rows[y], out + (size_t)y * row_bytes, width);
    } else {
        temp = (uint8_t *)malloc((size_t)width * 4);
        if (!temp) { src.status = FM_ERR_MEMORY; png_error(png, "out of memory for an RGBA row"); }
        for (uint32_t y = 0; y < height; y++) {
            png_read_row(png, temp, NULL);
            fm_composite_row(temp, out + (size_t)y * row_bytes, width);
        }
    }
    png_read_end(png, NULL);
    free(temp);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return FM_OK;
}

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    int failed;
} fm_png_sink;

static void fm_png_write_fn(png_structp png, png_bytep bytes, size_t length) {
    fm_png_sink *sink = (fm_png_sink *)png_get_io_ptr(png);
    if (sink->size + length > sink->capacity) {
        size_t cap = sink->capacity ? sink->capacity : 65536;
        while (cap < sink->size + length) cap *= 2;
        uint8_t *bigger = (uint8_t *)realloc(sink->data, cap);
        if (!bigger) { sink->failed = 1; png_error(png, "out of memory while encoding PNG"); }
        sink->data = bigger;
        sink->capacity = cap;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size += length;
}

static void fm_png_flush_fn(png_structp png) { (void)png; }

fm_status fm_png_encode_rgb(const uint8_t *pixels, uint32_t width, uint32_t height,
                            uint8_t **out, size_t *out_size, fm_report *report) {
    fm_report_reset(report);
    if (!pixels || !out || !out_size || width == 0 || height == 0) return FM_ERR_ARGUMENT;
    fm_png_source errsrc;
    memset(&errsrc, 0, sizeof(errsrc));
    errsrc.report = report;
    fm_png_sink sink;
    memset(&sink, 0, sizeof(sink));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &errsrc, fm_png_error_fn, fm_png_warning_fn);
    if (!png) return FM_ERR_MEMORY;
    png_infop info = png_create_info_struct(png);
    if (!info) { png_destroy_write_struct(&png, NULL); return FM_ERR_MEMORY; }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(sink.data);
        return sink.failed ? FM_ERR_MEMORY : FM_ERR_DECODE;
    }
    png_set_write_fn(png, &sink, fm_png_write_fn, fm_png_flush_fn);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * width * 3));
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *out = sink.data;
    *out_size = sink.size;
    return FM_OK;
}
