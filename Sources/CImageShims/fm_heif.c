#include "fm_image_shims.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <libheif/heif.h>

void fm_report_reset(fm_report *r);

// libheif loads its decoder plugins in heif_init (reference counted); once per process is enough.
static pthread_once_t fm_heif_once = PTHREAD_ONCE_INIT;
static void fm_heif_init(void) { heif_init(NULL); }

static fm_status fm_heif_status(struct heif_error err, fm_report *report) {
    if (err.code == heif_error_Ok) return FM_OK;
    snprintf(report->message, FM_MSG_CAP, "%s", err.message ? err.message : "libheif error");
    if (err.code == heif_error_Memory_allocation_error) return FM_ERR_MEMORY;
    if (err.subcode == heif_suberror_End_of_data) { report->premature_end = 1; return FM_ERR_TRUNCATED; }
    if (err.code == heif_error_Usage_error) return FM_ERR_ARGUMENT;
    return FM_ERR_DECODE;
}

/// Context + primary image handle over caller-owned bytes (no copy): both released by fm_heif_close.
static fm_status fm_heif_open(const uint8_t *data, size_t size, struct heif_context **ctx, struct heif_image_handle **handle,
                              fm_report *report) {
    pthread_once(&fm_heif_once, fm_heif_init);
    *handle = NULL;
    *ctx = heif_context_alloc();
    if (!*ctx) { snprintf(report->message, FM_MSG_CAP, "cannot allocate a libheif context"); return FM_ERR_MEMORY; }
    // One thread per image: the batch already decodes one photo per core.
    heif_context_set_max_decoding_threads(*ctx, 0);
    fm_status s = fm_heif_status(heif_context_read_from_memory_without_copy(*ctx, data, size, NULL), report);
    if (s == FM_OK) s = fm_heif_status(heif_context_get_primary_image_handle(*ctx, handle), report);
    return s;
}

static void fm_heif_close(struct heif_context *ctx, struct heif_image_handle *handle) {
    if (handle) heif_image_handle_release(handle);
    if (ctx) heif_context_free(ctx);
}

/// The largest thumbnail of the primary image (NULL when it has none); release with heif_image_handle_release.
static struct heif_image_handle *fm_heif_largest_thumbnail(struct heif_image_handle *handle) {
    heif_item_id ids[8];
    int n = heif_image_handle_get_list_of_thumbnail_IDs(handle, ids, 8);
    struct heif_image_handle *best = NULL;
    for (int i = 0; i < n; i++) {
        struct heif_image_handle *t = NULL;
        if (heif_image_handle_get_thumbnail(handle, ids[i], &t).code != heif_error_Ok || !t) continue;
        if (!best || (int64_t)heif_image_handle_get_width(t) * heif_image_handle_get_height(t) >
                     (int64_t)heif_image_handle_get_width(best) * heif_image_handle_get_height(best)) {
            if (best) heif_image_handle_release(best);
            best = t;
        } else {
            heif_image_handle_release(t);
        }
    }
    return best;
}

fm_status fm_heif_info_read(const uint8_t *data, size_t size, fm_heif_info *info, fm_report *report) {
    fm_report_reset(report);
    memset(info, 0, sizeof *info);
    if (!data || size == 0) return FM_ERR_ARGUMENT;
    struct heif_context *ctx = NULL;
    struct heif_image_handle *handle = NULL;
    fm_status s = fm_heif_open(data, size, &ctx, &handle, report);
    if (s == FM_OK) {
        int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
        info->width = w > 0 ? (uint32_t)w : 0;
        info->height = h > 0 ? (uint32_t)h : 0;
        info->has_alpha = heif_image_handle_has_alpha_channel(handle);
        struct heif_image_handle *thumb = fm_heif_largest_thumbnail(handle);
        if (thumb) {
            int tw = heif_image_handle_get_width(thumb), th = heif_image_handle_get_height(thumb);
            info->thumb_width = tw > 0 ? (uint32_t)tw : 0;
            info->thumb_height = th > 0 ? (uint32_t)th : 0;
            heif_image_handle_release(thumb);
        }
        heif_item_id exif_id;
        if (heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &exif_id, 1) == 1) {
            info->exif_size = heif_image_handle_get_metadata_size(handle, exif_id);
        }
    }
    fm_heif_close(ctx, handle);
    return s;
}

fm_status fm_heif_decode_rgb(const uint8_t *data, size_t size, int use_thumbnail, uint8_t *out, size_t out_size,
                             uint32_t *out_width, uint32_t *out_height, fm_report *report) {
    fm_report_reset(report);
    *out_width = 0; *out_height = 0;
    if (!data || size == 0 || !out) return FM_ERR_ARGUMENT;
    struct heif_context *ctx = NULL;
    struct heif_image_handle *handle = NULL;
    fm_status s = fm_heif_open(data, size, &ctx, &handle, report);
    struct heif_image_handle *source = NULL;
    struct heif_image *img = NULL;
    struct heif_decoding_options *options = NULL;
    if (s == FM_OK) {
        source = use_thumbnail ? fm_heif_largest_thumbnail(handle) : NULL;
        if (use_thumbnail && !source) { snprintf(report->message, FM_MSG_CAP, "no thumbnail"); s = FM_ERR_ARGUMENT; }
    }
    if (s == FM_OK) {
        options = heif_decoding_options_alloc();
        if (!options) { snprintf(report->message, FM_MSG_CAP, "cannot allocate decoding options"); s = FM_ERR_MEMORY; }
    }
    if (s == FM_OK) {
        // A grid image declares its canvas twice: in `ispe`, which our pixel limit checked, and in the grid item's own
        // data, which libheif allocates from (a 1.2 KB file declared 28009x28005 behind a 48x32 `ispe`: 2.3 GB, then a
        // crash). Its size limit is only consulted when decoding, so it is narrowed here to the checked size.
        struct heif_image_handle *target = source ? source : handle;
        int w = heif_image_handle_get_width(target), h = heif_image_handle_get_height(target);
        int side = w > h ? w : h;
        heif_context_set_maximum_image_size_limit(ctx, (side > 0 ? side : 0) + 1);
        // Rotation and mirroring (irot/imir) are applied, so the result is upright; 10-bit photos become 8-bit.
        options->ignore_transformations = 0;
        options->convert_hdr_to_8bit = 1;
        struct heif_error err = heif_decode_image(target, &img, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options);
        if (err.code != heif_error_Ok && err.subcode == heif_suberror_Security_limit_exceeded) {
            snprintf(report->message, FM_MSG_CAP, "its image data declares a larger canvas than its header's %dx%d (%s)", w, h,
                     err.message ? err.message : "size limit");
            s = FM_ERR_DECODE;
        } else {
            s = fm_heif_status(err, report);
        }
    }
    if (s == FM_OK) {
        int w = heif_image_get_width(img, heif_channel_interleaved), h = heif_image_get_height(img, heif_channel_interleaved);
        int stride = 0;
        const uint8_t *plane = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
        if (!plane || w <= 0 || h <= 0 || stride < w * 3 || (size_t)w * (size_t)h * 3 != out_size) {
            snprintf(report->message, FM_MSG_CAP, "decoded image is %dx%d, not the size its header announced", w, h);
            s = FM_ERR_DECODE;
        } else {
            for (int y = 0; y < h; y++) memcpy(out + (size_t)y * (size_t)w * 3, plane + (size_t)y * (size_t)stride, (size_t)w * 3);
            *out_width = (uint32_t)w; *out_height = (uint32_t)h;
        }
    }
    if (img) heif_image_release(img);
    if (options) heif_decoding_options_free(options);
    if (source) heif_image_handle_release(source);
    fm_heif_close(ctx, handle);
    return s;
}

fm_status fm_heif_exif(const uint8_t *data, size_t size, uint8_t *out, size_t out_size, fm_report *report) {
    fm_report_reset(report);
    if (!data || size == 0 || !out) return FM_ERR_ARGUMENT;
    struct heif_context *ctx = NULL;
    struct heif_image_handle *handle = NULL;
    fm_status s = fm_heif_open(data, size, &ctx, &handle, report);
    if (s == FM_OK) {
        heif_item_id exif_id;
        if (heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &exif_id, 1) != 1 ||
            heif_image_handle_get_metadata_size(handle, exif_id) != out_size) {
            snprintf(report->message, FM_MSG_CAP, "no Exif block of %zu bytes", out_size);
            s = FM_ERR_ARGUMENT;
        } else {
            s = fm_heif_status(heif_image_handle_get_metadata(handle, exif_id, out), report);
        }
    }
    fm_heif_close(ctx, handle);
    return s;
}
