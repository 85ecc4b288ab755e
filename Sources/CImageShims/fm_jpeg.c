#include "fm_image_shims.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    fm_report *report;
    fm_status status;
    int message_is_serious;
} fm_jpeg_error;

typedef struct {
    struct jpeg_progress_mgr pub;
    int max_scans;
    int64_t deadline_ns;        // 0 = no time budget
    int64_t budget_ns;
} fm_jpeg_progress;

void fm_report_reset(fm_report *r) {
    if (!r) return;
    r->message[0] = 0;
    r->warning_count = 0;
    r->premature_end = 0;
    r->corrupt = 0;
}

void fm_free(void *p) { free(p); }

static void fm_jpeg_error_exit(j_common_ptr cinfo) {
    fm_jpeg_error *err = (fm_jpeg_error *)cinfo->err;
    if (err->report) {
        char buffer[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, buffer);
        snprintf(err->report->message, FM_MSG_CAP, "%s", buffer);
    }
    if (err->status == FM_OK) {
        err->status = (cinfo->err->msg_code == JERR_OUT_OF_MEMORY) ? FM_ERR_MEMORY : FM_ERR_DECODE;
    }
    longjmp(err->jump, 1);
}

// Warnings that do not mean the pixels are wrong.
static int fm_jpeg_benign(int code) {
    return code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC ||
           code == JWRN_ADOBE_XFORM;
}

static void fm_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;  // trace messages are dropped
    fm_jpeg_error *err = (fm_jpeg_error *)cinfo->err;
    cinfo->err->num_warnings++;
    fm_report *r = err->report;
    if (!r) return;
    int code = cinfo->err->msg_code;
    int serious = !fm_jpeg_benign(code);
    if (code == JWRN_JPEG_EOF) r->premature_end = 1;
    else if (serious) r->corrupt = 1;
    // Keep the first serious warning's text, else the first warning's.
    if (r->warning_count == 0 || (serious && !err->message_is_serious)) {
        char buffer[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, buffer);
        snprintf(r->message, FM_MSG_CAP, "%s", buffer);
        err->message_is_serious = serious;
    }
    r->warning_count++;
}

static void fm_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void fm_jpeg_progress_monitor(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    fm_jpeg_progress *p = (fm_jpeg_progress *)cinfo->progress;
    if (p->max_scans > 0 && d->input_scan_number > p->max_scans) {
        fm_jpeg_error *err = (fm_jpeg_error *)cinfo->err;
        err->status = FM_ERR_LIMIT;
        if (err->report) {
            snprintf(err->report->message, FM_MSG_CAP, "progressive JPEG has more than %d scans", p->max_scans);
        }
        longjmp(err->jump, 1);
    }
    if (p->deadline_ns > 0 && fm_monotonic_ns() > p->deadline_ns) {
        fm_jpeg_error *err = (fm_jpeg_error *)cinfo->err;
        err->status = FM_ERR_LIMIT;
        if (err->report) {
            snprintf(err->report->message, FM_MSG_CAP, "decoding took longer than its time budget of %lld ms",
                     (long long)(p->budget_ns / 1000000));
        }
        longjmp(err->jump, 1);
    }
}

static void fm_jpeg_install_errors(struct jpeg_decompress_struct *cinfo, fm_jpeg_error *err, fm_report *report) {
    memset(err, 0, sizeof(*err));
    cinfo->err = jpeg_std_error(&err->pub);
    err->pub.error_exit = fm_jpeg_error_exit;
    err->pub.emit_message = fm_jpeg_emit_message;
    err->pub.output_message = fm_jpeg_output_message;
    err->report = report;
    err->status = FM_OK;
}

fm_status fm_jpeg_info_read(const uint8_t *data, size_t size, int scale_num, fm_jpeg_info *info, fm_report *report) {
    fm_report_reset(report);
    if (!data || size == 0 || !info || scale_num < 1 || scale_num > 8) return FM_ERR_ARGUMENT;
    struct jpeg_decompress_struct cinfo;
    fm_jpeg_error err;
    fm_jpeg_install_errors(&cinfo, &err, report);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return err.status == FM_OK ? FM_ERR_DECODE : err.status;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    info->width = cinfo.image_width;
    info->height = cinfo.image_height;
    info->components = cinfo.num_components;
    info->color_space = (int)cinfo.jpeg_color_space;
    info->progressive = cinfo.progressive_mode ? 1 : 0;
    cinfo.scale_num = (unsigned int)scale_num;
    cinfo.scale_denom = 8;
    jpeg_calc_output_dimensions(&cinfo);
    info->out_width = cinfo.output_width;
    info->out_height = cinfo.output_height;
    jpeg_destroy_decompress(&cinfo);
    return FM_OK;
}

fm_status fm_jpeg_decode_rgb(const uint8_t *data, size_t size, int scale_num, int max_scans, int64_t budget_ns,
                             uint8_t *out, size_t out_size, uint32_t *out_width, uint32_t *out_height,
                             fm_report *report) {
    // The fast decoder checks its own arguments and declines bad ones, which libjpeg-turbo's path then refuses.
    if (scale_num == 1 && fm_jpeg_fast_enabled() &&
        fm_jpeg_decode_eighth_fast(data, size, out, out_size, out_width, out_height)) {
        fm_report_reset(report);
        return FM_OK;
    }
    return fm_jpeg_decode_rgb_libjpeg(data, size, scale_num, max_scans, budget_ns, out, out_size, out_width, out_height,
                                      report);
}

int fm_jpeg_fast_enabled(void) {
    static int enabled = -1;
    if (enabled < 0) {
        const char *v = getenv("FOODMOMENT_JPEG_FAST");
        enabled = !(v && strcmp(v, "0") == 0);
    }
    return enabled;
}

fm_status fm_jpeg_decode_rgb_libjpeg(const uint8_t *data, size_t size, int scale_num, int max_scans, int64_t budget_ns,
                                     uint8_t *out, size_t out_size, uint32_t *out_width, uint32_t *out_height,
                                     fm_report *report) {
    fm_report_reset(report);
    if (!data || size == 0 || !out || scale_num < 1 || scale_num > 8) return FM_ERR_ARGUMENT;
    struct jpeg_decompress_struct cinfo;
    fm_jpeg_error err;
    fm_jpeg_progress progress;
    uint8_t *volatile cmyk_row = NULL;
    fm_jpeg_install_errors(&cinfo, &err, report);
    if (setjmp(err.jump)) {
        free(cmyk_row);
        jpeg_destroy_decompress(&cinfo);
        return err.status == FM_OK ? FM_ERR_DECODE : err.status;
    }
    jpeg_create_decompress(&cinfo);
    memset(&progress, 0, sizeof(progress));
    progress.pub.progress_monitor = fm_jpeg_progress_monitor;
    progress.max_scans = max_scans;
    progress.budget_ns = budget_ns;
    progress.deadline_ns = budget_ns > 0 ? fm_monotonic_ns() + budget_ns : 0;
    cinfo.progress = &progress.pub;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int cmyk = (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK);
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    cinfo.scale_num = (unsigned int)scale_num;
    cinfo.scale_denom = 8;
    jpeg_calc_output_dimensions(&cinfo);
    size_t row_bytes = (size_t)cinfo.output_width * 3;
    if ((size_t)cinfo.output_height * row_bytes != out_size) {
        jpeg_destroy_decompress(&cinfo);
        return FM_ERR_ARGUMENT;
    }
    jpeg_start_decompress(&cinfo);
    // Adobe applications write CMYK inverted (0 = full ink); libjpeg tells us via the Adobe marker.
    int inverted = cmyk && cinfo.saw_Adobe_marker;
    if (cmyk) {
        cmyk_row = (uint8_t *)malloc((size_t)cinfo.output_width * 4);
        if (!cmyk_row) {
            err.status = FM_ERR_MEMORY;
            snprintf(report->message, FM_MSG_CAP, "out of memory for a CMYK row");
            longjmp(err.jump, 1);
        }
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *dst = out + (size_t)cinfo.output_scanline * row_bytes;
        if (!cmyk) {
            JSAMPROW row = dst;
            jpeg_read_scanlines(&cinfo, &row, 1);
        } else {
            JSAMPROW row = cmyk_row;
            jpeg_read_scanlines(&cinfo, &row, 1);
            for (JDIMENSION x = 0; x < cinfo.output_width; x++) {
                unsigned c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1], y = cmyk_row[4 * x + 2], k = cmyk_row[4 * x + 3];
                if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
                // Now c,m,y,k are "amount of white left" (inverted ink): RGB = C' * K' / 255.
                dst[3 * x] = (uint8_t)((c * k + 127) / 255);
                dst[3 * x + 1] = (uint8_t)((m * k + 127) / 255);
                dst[3 * x + 2] = (uint8_t)((y * k + 127) / 255);
            }
        }
    }
    jpeg_finish_decompress(&cinfo);
    *out_width = cinfo.output_width;
    *out_height = cinfo.output_height;
    free(cmyk_row);
    jpeg_destroy_decompress(&cinfo);
    return FM_OK;
}

fm_status fm_jpeg_encode_rgb(const uint8_t *pixels, uint32_t width, uint32_t height, int quality,
                             uint8_t **out, size_t *out_size, fm_report *report) {
    fm_report_reset(report);
    if (!pixels || !out || !out_size || width == 0 || height == 0) return FM_ERR_ARGUMENT;
    struct jpeg_compress_struct cinfo;
    fm_jpeg_error err;
    unsigned char *volatile buffer = NULL;
    unsigned long buffer_size = 0;
    memset(&err, 0, sizeof(err));
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = fm_jpeg_error_exit;
    err.pub.emit_message = fm_jpeg_emit_message;
    err.pub.output_message = fm_jpeg_output_message;
    err.report = report;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return err.status == FM_OK ? FM_ERR_DECODE : err.status;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, (unsigned char **)&buffer, &buffer_size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    size_t row_bytes = (size_t)width * 3;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * row_bytes);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buffer;
    *out_size = buffer_size;
    return FM_OK;
}
