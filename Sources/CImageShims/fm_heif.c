#include "fm_image_shims.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libheif/heif.h>

void fm_report_reset(fm_report *r);

// libheif is loaded on first use, not linked: with its codecs (x265, libde265, dav1d, aom) it cost every process ~3 ms
// before `main` (relocations and their initialisers), though few photos are HEIC. The header still gives the types and
// each function's signature; the default soname is the one libheif 1.x ships as.
#define FM_HEIF_FUNCTIONS(X) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_set_max_decoding_threads) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_decode_image) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_image_get_height) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_list_of_thumbnail_IDs) \
    X(heif_image_handle_get_metadata) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_thumbnail) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_release) \
    X(heif_image_release) \
    X(heif_init)

static struct {
#define X(name) __typeof__(&name) name;
    FM_HEIF_FUNCTIONS(X)
#undef X
} fm_heif_lib;

static pthread_once_t fm_heif_once = PTHREAD_ONCE_INIT;
static char fm_heif_load_error[FM_MSG_CAP];   // empty once loaded

static void fm_heif_load(void) {
    // FOODMOMENT_LIBHEIF: another libheif (a path, or a soname the loader finds) with the same interface.
    const char *asked = getenv("FOODMOMENT_LIBHEIF");
    const char *soname = asked && *asked ? asked : "libheif.so.1";
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(fm_heif_load_error, sizeof fm_heif_load_error, "cannot load %s (%s); install libheif1 (Debian: apt-get install libheif1) or set FOODMOMENT_LIBHEIF",
                 soname, why ? why : "unknown reason");
        return;
    }
#define X(name) \
    if (!(fm_heif_lib.name = (__typeof__(&name))dlsym(lib, #name))) { \
        snprintf(fm_heif_load_error, sizeof fm_heif_load_error, "%s has no %s (this build was compiled against libheif " LIBHEIF_VERSION ")", soname, #name); \
        return; \
    }
    FM_HEIF_FUNCTIONS(X)
#undef X
    // libheif loads its decoder plugins in heif_init (reference counted); once per process is enough.
    fm_heif_lib.heif_init(NULL);
}

/// 1 when libheif is loaded; otherwise 0, with the reason in `report`.
static int fm_heif_loaded(fm_report *report) {
    pthread_once(&fm_heif_once, fm_heif_load);
    if (fm_heif_load_error[0] == 0) return 1;
    snprintf(report->message, FM_MSG_CAP, "%s", fm_heif_load_error);
    return 0;
}

static fm_status fm_heif_status(struct heif_error err, fm_report *report) {
    if (err.code == heif_error_Ok) return FM_OK;
    snprintf(report->message, FM_MSG_CAP, "%s", err.message ? err.message : "libheif error");
    if (err.code == heif_error_Memory_allocation_error) return FM_ERR_MEMORY;
    if (err.subcode == heif_suberror_End_of_data) { report->premature_end = 1; return FM_ERR_TRUNCATED; }
    if (err.code == heif_error_Usage_error) return FM_ERR_ARGUMENT;
    return FM_ERR_DECODE;
}

// ---- Item references, checked before libheif sees the file ------------------------------------------------------------
// libheif 1.15 follows item references (`iref`: a grid's tiles, an alpha plane, a thumbnail) by recursion and does not
// notice a cycle: a 1.1 KB HEIC whose grid lists itself as its own tile overflowed the stack (a crash, not an error).
// So the references are read here — only the boxes on the way to `iref`, every length bounds-checked — and a file whose
// references form a cycle, or nest deeper than any real photo (a grid of tiles with alpha planes is 2 or 3 deep), is
// refused. A file whose boxes cannot be followed is left to libheif, which reports what it finds.

enum { FM_REF_MAX = 4096, FM_REF_TARGETS_MAX = 65536, FM_REF_DEPTH_MAX = 16 };

typedef struct { uint32_t from, first, count; } fm_ref;   // targets[first ..< first + count]

typedef struct {
    fm_ref refs[FM_REF_MAX];
    uint32_t targets[FM_REF_TARGETS_MAX];
    uint8_t on_path[FM_REF_MAX];
    uint8_t height[FM_REF_MAX];  // the longest chain of references from each (0: not known yet)
    int nrefs, ntargets;
} fm_ref_graph;

static uint32_t fm_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static uint64_t fm_ben(const uint8_t *p, int n) {   // n = 0 to 8 big-endian bytes
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

// The box at `at` inside [at, end): its type and payload, a box longer than what is left taken as ending at `end`;
// 0 when not even its header fits.
static int fm_box(const uint8_t *data, size_t at, size_t end, uint32_t *type, size_t *payload, size_t *next) {
    if (end < at || end - at < 8) return 0;
    uint64_t size = fm_be32(data + at);
    size_t header = 8;
    *type = fm_be32(data + at + 4);
    if (size == 1) {
        if (end - at < 16) return 0;
        size = (uint64_t)fm_be32(data + at + 8) << 32 | fm_be32(data + at + 12);
        header = 16;
    } else if (size == 0) {
        size = end - at;
    }
    if (size < header) return 0;
    if (size > end - at) size = end - at;   // cut short: read what is there (as a lenient reader might), never past it
    *payload = at + header;
    *next = at + (size_t)size;
    return 1;
}

// Reads the references of `iref` (payload [at, end)) the way libheif 1.15 does: each reference's box header is read but
// its size is not used — the IDs follow one after the other — and IDs are 32-bit in any version but 0. 0 when there
// are more references than the graph holds.
static int fm_read_iref(const uint8_t *data, size_t at, size_t end, fm_ref_graph *g) {
    if (end - at < 4) return 1;
    size_t idsize = data[at] == 0 ? 2 : 4;
    at += 4;
    for (;;) {
        if (end - at < 8) break;
        size_t p = at + 8;
        if (fm_be32(data + at) == 1) p += 8;                       // a 64-bit size follows
        if (fm_be32(data + at + 4) == 0x75756964) p += 16;         // 'uuid': its extended type follows
        if (p > end || end - p < idsize + 2) break;
        if (g->nrefs == FM_REF_MAX) return 0;
        fm_ref *r = &g->refs[g->nrefs];
        r->from = (uint32_t)fm_ben(data + p, (int)idsize);
        p += idsize;
        uint32_t count = (uint32_t)fm_ben(data + p, 2);
        p += 2;
        if ((size_t)count > (end - p) / idsize) count = (uint32_t)((end - p) / idsize);   // what is there
        if ((size_t)g->ntargets + count > FM_REF_TARGETS_MAX) return 0;
        r->first = (uint32_t)g->ntargets;
        r->count = count;
        for (uint32_t i = 0; i < count; i++, p += idsize) {
            g->targets[g->ntargets++] = (uint32_t)fm_ben(data + p, (int)idsize);
        }
        g->nrefs++;
        at = p;
    }
    return 1;
}

static int fm_ref_order(const void *a, const void *b) {
    uint32_t x = ((const fm_ref *)a)->from, y = ((const fm_ref *)b)->from;
    return x < y ? -1 : x > y;
}

// The length of the longest chain of references from reference `i` (memoised in `height`), or 0 when one reaches back
// onto the current path (a cycle) or is longer than FM_REF_DEPTH_MAX; the recursion is as deep as that limit at most.
static int fm_ref_height(fm_ref_graph *g, int i, int depth) {
    if (g->height[i]) return g->height[i];
    if (g->on_path[i] || depth > FM_REF_DEPTH_MAX) return 0;
    g->on_path[i] = 1;
    int height = 1;
    const fm_ref *r = &g->refs[i];
    for (uint32_t t = 0; t < r->count; t++) {
        uint32_t to = g->targets[r->first + t];
        int lo = 0, hi = g->nrefs;   // the first reference from `to` (sorted by `from`)
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (g->refs[mid].from < to) lo = mid + 1; else hi = mid;
        }
        for (int j = lo; j < g->nrefs && g->refs[j].from == to; j++) {
            int below = fm_ref_height(g, j, depth + 1);
            if (below == 0 || below + 1 > FM_REF_DEPTH_MAX) return 0;
            if (below + 1 > height) height = below + 1;
        }
    }
    g->on_path[i] = 0;
    g->height[i] = (uint8_t)height;
    return height;
}

// FM_OK, or FM_ERR_DECODE with a message when the item references form a cycle or nest too deeply. Every `iref` of
// every top-level `meta` is read into one graph: which of several libheif follows is its business, not ours.
static fm_status fm_heif_check_references(const uint8_t *data, size_t size, fm_report *report) {
    fm_ref_graph *g = NULL;
    int overflow = 0;
    uint32_t type;
    size_t payload, next;
    for (size_t at = 0; !overflow && fm_box(data, at, size, &type, &payload, &next); at = next) {
        if (type != 0x6D657461 || next - payload < 4) continue;   // 'meta' (a FullBox: version and flags first)
        uint32_t child;
        size_t inner, after;
        for (size_t c = payload + 4; !overflow && fm_box(data, c, next, &child, &inner, &after); c = after) {
            if (child != 0x69726566) continue;   // 'iref'
            if (!g && !(g = calloc(1, sizeof *g))) {
                snprintf(report->message, FM_MSG_CAP, "cannot allocate memory to check item references");
                return FM_ERR_MEMORY;
            }
            overflow = !fm_read_iref(data, inner, after, g);
        }
    }
    if (!g) return FM_OK;
    fm_status s = FM_OK;
    if (overflow) {
        snprintf(report->message, FM_MSG_CAP, "more than %d item references or %d referenced items", FM_REF_MAX, FM_REF_TARGETS_MAX);
        s = FM_ERR_DECODE;
    } else {
        qsort(g->refs, (size_t)g->nrefs, sizeof g->refs[0], fm_ref_order);
        for (int i = 0; i < g->nrefs && s == FM_OK; i++) {
            if (fm_ref_height(g, i, 0) == 0) {
                snprintf(report->message, FM_MSG_CAP, "its item references form a cycle or nest more than %d deep (from item %u)",
                         FM_REF_DEPTH_MAX, g->refs[i].from);
                s = FM_ERR_DECODE;
            }
        }
    }
    free(g);
    return s;
}

// ---- Canvas sizes of derived images, checked before libheif allocates them --------------------------------------------
// A grid (`grid`) or overlay (`iovl`) item carries its own output size in its data, independent of the `ispe` our pixel
// limit checks, and libheif 1.15 allocates that canvas as declared (a 1.2 KB file: 28009x28005, 2.3 GB, then a crash).
// So those sizes are read here — item types from `iinf`, their data through `iloc` (in the file or in `idat`) — and a
// canvas over the pixel limit is refused. Anything that does not parse is left to libheif (and to the size limit
// narrowed in fm_heif_decode_rgb).

enum { FM_DERIVED_MAX = 256 };

typedef struct {
    uint32_t ids[FM_DERIVED_MAX];
    uint32_t types[FM_DERIVED_MAX];
    int count;
    size_t idat, idat_end;   // payload of `idat` (idat_end 0: none)
} fm_derived;

// Grid and overlay items of an `iinf` payload [at, end) (infe version 2 and 3 carry the item type).
static void fm_read_iinf(const uint8_t *data, size_t at, size_t end, fm_derived *d) {
    if (end - at < 6) return;
    at += data[at] == 0 ? 6 : 8;   // FullBox, then a 16- or 32-bit entry count
    uint32_t type;
    size_t payload, next;
    for (; at < end && fm_box(data, at, end, &type, &payload, &next); at = next) {
        if (type != 0x696E6665 || next - payload < 4) continue;   // 'infe'
        int version = data[payload];
        size_t p = payload + 4, idsize = version == 3 ? 4 : 2;
        if (version < 2 || next - p < idsize + 2 + 4) continue;
        uint32_t id = (uint32_t)fm_ben(data + p, (int)idsize);
        uint32_t item_type = fm_be32(data + p + idsize + 2);
        if ((item_type == 0x67726964 || item_type == 0x696F766C) && d->count < FM_DERIVED_MAX) {   // 'grid', 'iovl'
            d->ids[d->count] = id;
            d->types[d->count++] = item_type;
        }
    }
}

// Up to `want` bytes of an item's data (its extents in order); the number copied, 0 when they cannot be located.
static size_t fm_item_bytes(const uint8_t *data, size_t size, const fm_derived *d, int method, uint64_t base,
                            const uint8_t *extents, int count, int index_size, int offset_size, int length_size,
                            uint8_t *out, size_t want) {
    size_t lo, hi;   // where offsets count from: the file (method 0) or `idat` (method 1)
    if (method == 0) { lo = 0; hi = size; }
    else if (method == 1 && d->idat_end) { lo = d->idat; hi = d->idat_end; }
    else return 0;
    size_t got = 0;
    for (int e = 0; e < count && got < want; e++) {
        const uint8_t *x = extents + (size_t)e * (size_t)(index_size + offset_size + length_size) + index_size;
        uint64_t offset = base + fm_ben(x, offset_size), length = fm_ben(x + offset_size, length_size);
        if (offset > hi - lo) return 0;
        size_t start = lo + (size_t)offset, avail = hi - start;
        if (length == 0 || length > avail) length = avail;   // 0: to the end of the file or idat
        for (size_t i = 0; i < length && got < want; i++) out[got++] = data[start + i];
    }
    return got;
}

// libheif 1.15 reads an `iloc` field only when its declared size is 4 or 8 bytes; any other size is read as nothing,
// the value 0.
static int fm_iloc_size_115(int declared) { return declared == 4 || declared == 8 ? declared : 0; }

// The largest canvas (width * height) that a grid or overlay of this `iloc` payload [at, end) declares; 0 if none.
// `as_libheif_115`: read the fields the way libheif 1.15 does (sizes other than 4 and 8 read as nothing, extent
// indices only in version 2); otherwise as the standard says and later libheif releases do (any size up to 8 bytes,
// indices in versions 1 and 2). The two disagree on files a fuzzer writes, and libheif allocates whatever canvas its
// own reading finds, so the caller asks both ways.
static uint64_t fm_largest_canvas(const uint8_t *data, size_t size, size_t at, size_t end, const fm_derived *d,
                                  int as_libheif_115, uint32_t *w_out, uint32_t *h_out) {
    if (end - at < 8) return 0;
    int version = data[at];
    int offset_size = data[at + 4] >> 4, length_size = data[at + 4] & 15;
    int base_size = data[at + 5] >> 4, index_size = data[at + 5] & 15;
    if (as_libheif_115) {
        offset_size = fm_iloc_size_115(offset_size);
        length_size = fm_iloc_size_115(length_size);
        base_size = fm_iloc_size_115(base_size);
        index_size = version == 2 ? fm_iloc_size_115(index_size) : 0;
    } else {
        if (version == 0) index_size = 0;
        if (offset_size > 8 || length_size > 8 || base_size > 8 || index_size > 8) return 0;
    }
    size_t p = at + 6;
    int wide = version == 2;
    if (end - p < (size_t)(wide ? 4 : 2)) return 0;
    uint32_t items = (uint32_t)fm_ben(data + p, wide ? 4 : 2);
    p += wide ? 4 : 2;
    uint64_t largest = 0;
    for (uint32_t i = 0; i < items; i++) {
        size_t head = (size_t)(wide ? 4 : 2) + (version >= 1 ? 2 : 0) + 2 + (size_t)base_size + 2;
        if (end - p < head) break;
        uint32_t id = (uint32_t)fm_ben(data + p, wide ? 4 : 2);
        size_t q = p + (wide ? 4 : 2);
        int method = 0;
        if (version >= 1) { method = data[q + 1] & 15; q += 2; }
        q += 2;   // data reference index
        uint64_t base = fm_ben(data + q, base_size);
        q += (size_t)base_size;
        int count = (int)fm_ben(data + q, 2);
        q += 2;
        size_t per = (size_t)(index_size + offset_size + length_size);
        if ((size_t)count > (end - q) / (per ? per : 1)) break;
        for (int k = 0; k < d->count; k++) {
            if (d->ids[k] != id) continue;
            uint8_t b[24];
            size_t got = fm_item_bytes(data, size, d, method, base, data + q, count, index_size, offset_size, length_size, b, sizeof b);
            // grid: version, flags, rows - 1, columns - 1, then the size; iovl: version, flags, 4 fill values, then the size.
            size_t at_size = d->types[k] == 0x67726964 ? 4 : 10;
            int fieldsize = got >= 2 && (b[1] & 1) ? 4 : 2;
            if (got < at_size + 2 * (size_t)fieldsize) continue;
            uint32_t w = (uint32_t)fm_ben(b + at_size, fieldsize), h = (uint32_t)fm_ben(b + at_size + fieldsize, fieldsize);
            if ((uint64_t)w * h > largest) { largest = (uint64_t)w * h; *w_out = w; *h_out = h; }
        }
        p = q + (size_t)count * per;
    }
    return largest;
}

// The largest canvas (width * height) that any grid or overlay of the file declares, read both ways where libheif
// releases disagree on the layout of `iloc`; 0 when none is found.
// `primary_only`: only the grid or overlay that `pitm` names.
static uint64_t fm_heif_largest_canvas(const uint8_t *data, size_t size, int primary_only, uint32_t *w_out, uint32_t *h_out) {
    fm_derived d;
    uint32_t type;
    size_t payload, next;
    uint64_t largest = 0;
    for (size_t at = 0; fm_box(data, at, size, &type, &payload, &next); at = next) {
        if (type != 0x6D657461 || next - payload < 4) continue;   // 'meta'
        memset(&d, 0, sizeof d);
        uint32_t child, primary = 0;
        size_t inner, after;
        for (size_t c = payload + 4; fm_box(data, c, next, &child, &inner, &after); c = after) {
            if (child == 0x69696E66) fm_read_iinf(data, inner, after, &d);                    // 'iinf'
            if (child == 0x69646174 && !d.idat_end) { d.idat = inner; d.idat_end = after; }   // 'idat'
            if (child == 0x7069746D && after - inner >= 6) {                                   // 'pitm'
                primary = (uint32_t)(data[inner] == 0 ? fm_ben(data + inner + 4, 2) : after - inner >= 8 ? fm_be32(data + inner + 4) : 0);
            }
        }
        if (primary_only) {   // keep only the primary item's entry
            int kept = 0;
            for (int k = 0; k < d.count; k++) {
                if (d.ids[k] == primary) { d.ids[kept] = d.ids[k]; d.types[kept++] = d.types[k]; }
            }
            d.count = kept;
        }
        if (d.count == 0) continue;
        for (size_t c = payload + 4; fm_box(data, c, next, &child, &inner, &after); c = after) {
            if (child != 0x696C6F63) continue;   // 'iloc'
            for (int as_libheif_115 = 0; as_libheif_115 <= 1; as_libheif_115++) {
                uint32_t w = 0, h = 0;
                uint64_t pixels = fm_largest_canvas(data, size, inner, after, &d, as_libheif_115, &w, &h);
                if (pixels > largest) { largest = pixels; *w_out = w; *h_out = h; }
            }
        }
    }
    return largest;
}

// FM_OK, or FM_ERR_LIMIT with a message when a grid or overlay declares a canvas of more than `max_pixels`.
static fm_status fm_heif_check_canvas(const uint8_t *data, size_t size, uint64_t max_pixels, fm_report *report) {
    uint32_t w = 0, h = 0;
    uint64_t pixels = fm_heif_largest_canvas(data, size, 0, &w, &h);
    if (pixels <= max_pixels) return FM_OK;
    snprintf(report->message, FM_MSG_CAP, "its image grid declares a %ux%u canvas = %llu pixels, over the limit of %llu pixels",
             w, h, (unsigned long long)pixels, (unsigned long long)max_pixels);
    return FM_ERR_LIMIT;
}

/// Context + primary image handle over caller-owned bytes (no copy): both released by fm_heif_close.
static fm_status fm_heif_open(const uint8_t *data, size_t size, struct heif_context **ctx, struct heif_image_handle **handle,
                              fm_report *report) {
    *handle = NULL;
    *ctx = NULL;
    if (!fm_heif_loaded(report)) return FM_ERR_UNAVAILABLE;
    fm_status checked = fm_heif_check_references(data, size, report);
    if (checked != FM_OK) return checked;
    *ctx = fm_heif_lib.heif_context_alloc();
    if (!*ctx) { snprintf(report->message, FM_MSG_CAP, "cannot allocate a libheif context"); return FM_ERR_MEMORY; }
    // One thread per image: the batch already decodes one photo per core.
    fm_heif_lib.heif_context_set_max_decoding_threads(*ctx, 0);
    fm_status s = fm_heif_status(fm_heif_lib.heif_context_read_from_memory_without_copy(*ctx, data, size, NULL), report);
    if (s == FM_OK) s = fm_heif_status(fm_heif_lib.heif_context_get_primary_image_handle(*ctx, handle), report);
    return s;
}

static void fm_heif_close(struct heif_context *ctx, struct heif_image_handle *handle) {
    if (handle) fm_heif_lib.heif_image_handle_release(handle);
    if (ctx) fm_heif_lib.heif_context_free(ctx);
}

/// The largest thumbnail of the primary image (NULL when it has none); release with heif_image_handle_release.
static struct heif_image_handle *fm_heif_largest_thumbnail(struct heif_image_handle *handle) {
    heif_item_id ids[8];
    int n = fm_heif_lib.heif_image_handle_get_list_of_thumbnail_IDs(handle, ids, 8);
    struct heif_image_handle *best = NULL;
    for (int i = 0; i < n; i++) {
        struct heif_image_handle *t = NULL;
        if (fm_heif_lib.heif_image_handle_get_thumbnail(handle, ids[i], &t).code != heif_error_Ok || !t) continue;
        if (!best || (int64_t)fm_heif_lib.heif_image_handle_get_width(t) * fm_heif_lib.heif_image_handle_get_height(t) >
                     (int64_t)fm_heif_lib.heif_image_handle_get_width(best) * fm_heif_lib.heif_image_handle_get_height(best)) {
            if (best) fm_heif_lib.heif_image_handle_release(best);
            best = t;
        } else {
            fm_heif_lib.heif_image_handle_release(t);
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
        int w = fm_heif_lib.heif_image_handle_get_width(handle), h = fm_heif_lib.heif_image_handle_get_height(handle);
        info->width = w > 0 ? (uint32_t)w : 0;
        info->height = h > 0 ? (uint32_t)h : 0;
        info->has_alpha = fm_heif_lib.heif_image_handle_has_alpha_channel(handle);
        struct heif_image_handle *thumb = fm_heif_largest_thumbnail(handle);
        if (thumb) {
            int tw = fm_heif_lib.heif_image_handle_get_width(thumb), th = fm_heif_lib.heif_image_handle_get_height(thumb);
            info->thumb_width = tw > 0 ? (uint32_t)tw : 0;
            info->thumb_height = th > 0 ? (uint32_t)th : 0;
            fm_heif_lib.heif_image_handle_release(thumb);
        }
        heif_item_id exif_id;
        if (fm_heif_lib.heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &exif_id, 1) == 1) {
            info->exif_size = fm_heif_lib.heif_image_handle_get_metadata_size(handle, exif_id);
        }
    }
    fm_heif_close(ctx, handle);
    return s;
}

fm_status fm_heif_decode_rgb(const uint8_t *data, size_t size, int use_thumbnail, uint64_t max_pixels, uint8_t *out,
                             size_t out_size, uint32_t *out_width, uint32_t *out_height, fm_report *report) {
    fm_report_reset(report);
    *out_width = 0; *out_height = 0;
    if (!data || size == 0 || !out) return FM_ERR_ARGUMENT;
    fm_status canvas = fm_heif_check_canvas(data, size, max_pixels, report);
    if (canvas != FM_OK) return canvas;
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
        options = fm_heif_lib.heif_decoding_options_alloc();
        if (!options) { snprintf(report->message, FM_MSG_CAP, "cannot allocate decoding options"); s = FM_ERR_MEMORY; }
    }
    if (s == FM_OK && !source) {
        // A grid image declares its canvas twice: in `ispe`, which our pixel limit checked, and in the grid item's own
        // data, which libheif allocates from (a 1.2 KB file declared 28009x28005 behind a 48x32 `ispe`: 2.3 GB, then a
        // crash). The primary's grid may not declare more pixels than its header. (A decoded thumbnail is another
        // item: libheif does not read the primary's grid then.)
        int w = fm_heif_lib.heif_image_handle_get_width(handle), h = fm_heif_lib.heif_image_handle_get_height(handle);
        uint32_t cw = 0, ch = 0;
        if (fm_heif_largest_canvas(data, size, 1, &cw, &ch) > (uint64_t)(w > 0 ? w : 0) * (uint64_t)(h > 0 ? h : 0)) {
            snprintf(report->message, FM_MSG_CAP, "its image grid declares a %ux%u canvas, larger than its header's %dx%d", cw, ch, w, h);
            s = FM_ERR_DECODE;
        }
    }
    if (s == FM_OK) {
        // libheif's own size limit, consulted only when decoding, narrowed to the checked size as a second layer. On its
        // own it would not do: it limits the longest side, which a wide, flat header (31280x32 in front of a 28009x28005
        // grid, a fuzzer input) lets through.
        struct heif_image_handle *target = source ? source : handle;
        int w = fm_heif_lib.heif_image_handle_get_width(target), h = fm_heif_lib.heif_image_handle_get_height(target);
        int side = w > h ? w : h;
        // The limit also applies to the coded bitstream (libheif 1.15.1-1+deb12u2, GHSA-v8qw-hwjv-44hw), whose size is
        // padded to whole coding blocks (64 px for HEVC, 128 for AV1): a 48x32 photo is coded 64x64. Round up to 128.
        int limit = side > 0 ? ((side + 127) / 128) * 128 : 0;
        fm_heif_lib.heif_context_set_maximum_image_size_limit(ctx, limit + 1);
        // Rotation and mirroring (irot/imir) are applied, so the result is upright; 10-bit photos become 8-bit.
        options->ignore_transformations = 0;
        options->convert_hdr_to_8bit = 1;
        struct heif_error err = fm_heif_lib.heif_decode_image(target, &img, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options);
        if (err.code != heif_error_Ok && err.subcode == heif_suberror_Security_limit_exceeded) {
            snprintf(report->message, FM_MSG_CAP, "its image data declares a larger canvas than its header's %dx%d (%s)", w, h,
                     err.message ? err.message : "size limit");
            s = FM_ERR_DECODE;
        } else {
            s = fm_heif_status(err, report);
        }
    }
    if (s == FM_OK) {
        int w = fm_heif_lib.heif_image_get_width(img, heif_channel_interleaved), h = fm_heif_lib.heif_image_get_height(img, heif_channel_interleaved);
        int stride = 0;
        const uint8_t *plane = fm_heif_lib.heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
        if (!plane || w <= 0 || h <= 0 || stride < w * 3 || (size_t)w * (size_t)h * 3 != out_size) {
            snprintf(report->message, FM_MSG_CAP, "decoded image is %dx%d, not the size its header announced", w, h);
            s = FM_ERR_DECODE;
        } else {
            for (int y = 0; y < h; y++) memcpy(out + (size_t)y * (size_t)w * 3, plane + (size_t)y * (size_t)stride, (size_t)w * 3);
            *out_width = (uint32_t)w; *out_height = (uint32_t)h;
        }
    }
    if (img) fm_heif_lib.heif_image_release(img);
    if (options) fm_heif_lib.heif_decoding_options_free(options);
    if (source) fm_heif_lib.heif_image_handle_release(source);
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
        if (fm_heif_lib.heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &exif_id, 1) != 1 ||
            fm_heif_lib.heif_image_handle_get_metadata_size(handle, exif_id) != out_size) {
            snprintf(report->message, FM_MSG_CAP, "no Exif block of %zu bytes", out_size);
            s = FM_ERR_ARGUMENT;
        } else {
            s = fm_heif_status(fm_heif_lib.heif_image_handle_get_metadata(handle, exif_id, out), report);
        }
    }
    fm_heif_close(ctx, handle);
    return s;
}
