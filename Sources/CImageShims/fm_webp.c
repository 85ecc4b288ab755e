#include "fm_image_shims.h"

#include <stdio.h>
#include <string.h>
#include <webp/decode.h>

void fm_report_reset(fm_report *r);

static fm_status fm_webp_status(VP8StatusCode code, fm_report *report) {
    switch (code) {
    case VP8_STATUS_OK: return FM_OK;
    case VP8_STATUS_OUT_OF_MEMORY: snprintf(report->message, FM_MSG_CAP, "libwebp ran out of memory"); return FM_ERR_MEMORY;
    case VP8_STATUS_NOT_ENOUGH_DATA:
        report->premature_end = 1;
        snprintf(report->message, FM_MSG_CAP, "the WebP data ends early");
        return FM_ERR_TRUNCATED;
    case VP8_STATUS_UNSUPPORTED_FEATURE: snprintf(report->message, FM_MSG_CAP, "a WebP feature libwebp does not decode"); return FM_ERR_DECODE;
    case VP8_STATUS_INVALID_PARAM: snprintf(report->message, FM_MSG_CAP, "invalid WebP parameters"); return FM_ERR_DECODE;
    default: snprintf(report->message, FM_MSG_CAP, "corrupt WebP bitstream (libwebp status %d)", (int)code); return FM_ERR_DECODE;
    }
}

fm_status fm_webp_info_read(const uint8_t *data, size_t size, fm_webp_info *info, fm_report *report) {
    fm_report_reset(report);
    memset(info, 0, sizeof *info);
    if (!data || size == 0) return FM_ERR_ARGUMENT;
    WebPBitstreamFeatures f;
    fm_status s = fm_webp_status(WebPGetFeatures(data, size, &f), report);
    if (s != FM_OK) return s;
    info->width = f.width > 0 ? (uint32_t)f.width : 0;
    info->height = f.height > 0 ? (uint32_t)f.height : 0;
    info->has_alpha = f.has_alpha;
    info->has_animation = f.has_animation;
    return FM_OK;
}

fm_status fm_webp_decode_rgb(const uint8_t *data, size_t size, uint32_t width, uint32_t height, uint8_t *out, size_t out_size,
                             fm_report *report) {
    fm_report_reset(report);
    if (!data || size == 0 || !out || width == 0 || height == 0 || (size_t)width * height * 3 != out_size) return FM_ERR_ARGUMENT;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) { snprintf(report->message, FM_MSG_CAP, "libwebp version mismatch"); return FM_ERR_DECODE; }
    fm_status s = fm_webp_status(WebPGetFeatures(data, size, &config.input), report);
    if (s != FM_OK) return s;
    if (config.input.has_animation) { snprintf(report->message, FM_MSG_CAP, "animated WebP (only still images are read)"); return FM_ERR_DECODE; }
    // Decoded straight into the caller's buffer, scaled by libwebp when a smaller size was asked for.
    if ((int)width != config.input.width || (int)height != config.input.height) {
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)width;
        config.options.scaled_height = (int)height;
    }
    config.output.colorspace = MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = out;
    config.output.u.RGBA.stride = (int)width * 3;
    config.output.u.RGBA.size = out_size;
    s = fm_webp_status(WebPDecode(data, size, &config), report);
    WebPFreeDecBuffer(&config.output);
    return s;
}
