#include "fm_image_shims.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// A decoder for the one case stage 1 decodes most: a baseline 4:2:0 YCbCr JPEG scaled to 1/8. libjpeg-turbo spends
// almost all of such a decode (tools/decode-split) Huffman-decoding AC coefficients that 1/8 scaling then ignores;
// here the luminance AC symbols are skipped several at a time through a table, without extracting their values.
//
// Output: exactly libjpeg-turbo's for the same request on x86-64 — luminance through its 1x1 reduced IDCT, chrominance
// through its 2x2 reduced IDCT (for 4:2:0 at 1/8 it scales chroma by IDCT, not by upsampling; its SSE2 version, whose
// integer widths differ from the C one's on extreme coefficients), then its YCbCr->RGB tables.
// Anything else — another sampling, progressive or arithmetic coding, 12-bit data, an Adobe or RGB colour hint,
// a missing table, a restart marker out of place, data that ends early, bytes libjpeg-turbo would warn about — makes
// it return 0 without a word, and the caller decodes with libjpeg-turbo, which then reports what it reports.
//
// Untrusted input: every read goes through a bounds check on the input; table indices are masked or range-checked;
// coefficient positions are checked before each store. One allocation (its tables), freed before it returns, and a
// per-thread copy of the last skip table (below).

enum { LOOK = 9, SKIP = 14 };

typedef struct {
    int defined;
    uint8_t look_len[1 << LOOK];   // code length for a 9-bit window whose code is at most 9 bits long, else 0
    uint8_t look_sym[1 << LOOK];
    int32_t maxcode[18];           // the largest code of each length (-1: none), for longer codes
    int32_t valoffset[18];
    uint8_t vals[256];
} fm_huff;

typedef struct {
    const uint8_t *p, *end;
    uint64_t acc;   // bits MSB first; the top `n` are valid
    int n;
    int fake;       // zero bits fed at the bottom of `acc` after the data stopped (a marker or the end)
    int stopped;    // the reader reached a marker or the end; `p` stays there
} fm_bits;

typedef struct {
    int quant_defined[4];
    uint16_t quant[4][64];         // natural order
    fm_huff dc[4], ac[4];
    uint32_t width, height;
    int sof;                       // 1 once a baseline frame header was read
    int ids[3], tq[3];
    int td[3], ta[3];
    unsigned restart;
    int saw_jfif;
} fm_jpeg8;

static const uint8_t fm_zigzag[64] = {
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55,
    62, 63};

// ---- Huffman tables --------------------------------------------------------------------------------------------------

// Canonical codes from the 16 counts (JPEG Annex C); 0 for a table libjpeg-turbo would refuse.
static int fm_huff_build(fm_huff *h, const uint8_t counts[16], const uint8_t *vals, int total, int dc) {
    memset(h->look_len, 0, sizeof h->look_len);
    if (total > 256) return 0;
    memcpy(h->vals, vals, (size_t)total);
    if (dc) {
        for (int i = 0; i < total; i++) if (vals[i] > 15) return 0;
    }
    int32_t code = 0;
    int index = 0;
    for (int len = 1; len <= 16; len++) {
        int count = counts[len - 1];
        h->valoffset[len] = index - code;
        h->maxcode[len] = count ? code + count - 1 : -1;
        for (int i = 0; i < count; i++, index++, code++) {
            if (code >= (1 << len)) return 0;   // no room left for this code (the check below, before filling)
            if (len <= LOOK) {
                int shift = LOOK - len;
                for (int fill = 0; fill < (1 << shift); fill++) {
                    int slot = (code << shift) | fill;
                    h->look_len[slot] = (uint8_t)len;
                    h->look_sym[slot] = vals[index];
                }
            }
        }
        if (code >= (1 << len)) return 0;   // more codes than this length holds (the all-ones code is not allowed)
        code <<= 1;
    }
    h->maxcode[17] = 0x7fffffff;           // a sentinel: no code is longer than 16 bits
    h->defined = 1;
    return 1;
}

// The symbol at the top of `window` (`avail` valid bits, MSB first); sets *len (0 = no code in those bits).
static inline __attribute__((always_inline)) int fm_huff_peek(const fm_huff *h, uint32_t window, int avail, int *len) {
    if (avail >= LOOK) {
        int slot = (int)(window >> (32 - LOOK));
        if (h->look_len[slot]) { *len = h->look_len[slot]; return h->look_sym[slot]; }
    }
    for (int l = 1; l <= 16 && l <= avail; l++) {
        int32_t code = (int32_t)(window >> (32 - l));
        if (h->maxcode[l] >= 0 && code <= h->maxcode[l]) {
            int at = h->valoffset[l] + code;
            if (at < 0 || at > 255) break;
            *len = l;
            return h->vals[at];
        }
    }
    *len = 0;
    return 0;
}

static void fm_huff_build_skip(const fm_huff *h, uint16_t skip[1 << SKIP]) {
    for (uint32_t v = 0; v < (1u << SKIP); v++) {
        int used = 0, advance = 0, eob = 0;
        for (;;) {
            int len;
            uint32_t window = (v << (32 - SKIP)) << used;
            int rs = fm_huff_peek(h, window, SKIP - used, &len);
            if (len == 0) break;
            int r = rs >> 4, s = rs & 15;
            if (used + len + s > SKIP) break;
            used += len + s;
            if (s == 0 && r != 15) { eob = 1; break; }
            advance += s ? r + 1 : 16;
        }
        skip[v] = (uint16_t)(used | advance << 5 | eob << 13);
    }
}

// For skipping the luminance AC symbols: what a 14-bit window holds completely (codes and value bits): bits used
// (0 = not one whole symbol) | coefficients advanced << 5 | ends with end-of-block << 13. The table of the last
// Huffman table this thread decoded with is kept: phone cameras write the same tables into every photo, and building
// one takes ~0.1 ms. The whole Huffman table is the key (it determines the skip table); per thread, so no lock.
static _Thread_local struct {
    int valid;
    fm_huff key;
    uint16_t skip[1 << SKIP];
} fm_skip_cache;

static const uint16_t *fm_skip_table(const fm_huff *h) {
    if (!fm_skip_cache.valid || memcmp(&fm_skip_cache.key, h, sizeof *h) != 0) {
        fm_skip_cache.valid = 0;
        fm_huff_build_skip(h, fm_skip_cache.skip);
        fm_skip_cache.key = *h;
        fm_skip_cache.valid = 1;
    }
    return fm_skip_cache.skip;
}

// ---- Bits ------------------------------------------------------------------------------------------------------------

static inline __attribute__((always_inline)) void fm_refill(fm_bits *b) {
    if (__builtin_expect(!b->stopped && b->end - b->p >= 8, 1)) {
        // Eight bytes at a time when none of them is 0xFF (no stuffing, no marker): as many whole bytes as fit,
        // without a branch on how many bits are left (that branch mispredicts; this one rarely does).
        uint64_t w;
        memcpy(&w, b->p, 8);
        w = __builtin_bswap64(w);
        uint64_t x = ~w;
        if (__builtin_expect(((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) == 0, 1)) {
            int bytes = (63 - b->n) >> 3;          // 0 when 56 or more bits are there (n never exceeds 63)
            int kept = b->n + 8 * bytes;           // 56...63
            b->acc |= (w >> b->n) & ~(~0ull >> kept);
            b->n = kept;
            b->p += bytes;
            return;
        }
    }
    while (b->n <= 55) {   // up to 63 bits, as above
        uint64_t c = 0;
        if (!b->stopped && b->p < b->end) {
            if (*b->p != 0xFF) {
                c = *b->p++;
            } else if (b->p + 1 < b->end && b->p[1] == 0x00) {
                c = 0xFF;
                b->p += 2;
            } else {
                b->stopped = 1;   // a marker (or a lone 0xFF at the end): stay on it
                b->fake += 8;
            }
        } else {
            b->stopped = 1;
            b->fake += 8;
        }
        b->acc |= c << (56 - b->n);
        b->n += 8;
    }
}

static inline __attribute__((always_inline)) uint32_t fm_window(fm_bits *b) { return (uint32_t)(b->acc >> 32); }

static inline __attribute__((always_inline)) void fm_drop(fm_bits *b, int count) {
    b->acc <<= count;
    b->n -= count;
}

// The signed value of `s` (1...15) magnitude bits: a leading 0 bit means negative. Without a branch: its sign is
// a coin toss, which a predictor cannot learn.
static inline __attribute__((always_inline)) int fm_extend(uint32_t v, int s) {
    int negative = ((int)v - (1 << (s - 1))) >> 31;   // -1 when v < 2^(s-1)
    return (int)v + (negative & (1 - (1 << s)));
}

// The next Huffman symbol; -1 when no code matches. The caller refilled: at least 56 bits are there, enough for a
// code (at most 16 bits) and its value bits (at most 15), so one refill serves a whole symbol.
static inline __attribute__((always_inline)) int fm_symbol(fm_bits *b, const fm_huff *h) {
    int len;
    int sym = fm_huff_peek(h, fm_window(b), 32, &len);
    if (len == 0) return -1;
    fm_drop(b, len);
    return sym;
}

static inline __attribute__((always_inline)) uint32_t fm_take(fm_bits *b, int s) {
    if (s == 0) return 0;
    uint32_t v = (uint32_t)(b->acc >> (64 - s));   // s <= 15 and at least 56 bits are there
    fm_drop(b, s);
    return v;
}

// The DC difference of a block (its Huffman symbol is the bit count, then the bits). 0 on a bad code.
static inline __attribute__((always_inline)) int fm_dc_diff(fm_bits *b, const fm_huff *h, int *diff) {
    fm_refill(b);
    int s = fm_symbol(b, h);
    if (s < 0) return 0;
    *diff = s ? fm_extend(fm_take(b, s), s) : 0;
    return 1;
}

// Skips a luminance block's AC symbols, as many as a 14-bit window holds at a time while none can reach the block's
// end; one at a time near it, ending exactly where libjpeg-turbo ends (after coefficient 63 or an end-of-block).
// The next window is taken before the refill, so the table lookups do not wait for the refill's load.
static inline __attribute__((always_inline)) int fm_skip_ac(fm_bits *b, const fm_huff *h, const uint16_t *skip) {
    fm_refill(b);
    uint32_t window = (uint32_t)(b->acc >> (64 - SKIP));
    int k = 1;
    for (;;) {
        uint16_t e = skip[window];
        int used = e & 31, advance = (e >> 5) & 255;
        if (__builtin_expect(used && k + advance < 64, 1)) {
            fm_drop(b, used);
            window = (uint32_t)(b->acc >> (64 - SKIP));
            fm_refill(b);
            if (e >> 13) return 1;
            k += advance;
            continue;
        }
        int rs = fm_symbol(b, h);   // at least 44 bits are there: a code and its value bits fit
        if (rs < 0) return 0;
        int r = rs >> 4, s = rs & 15;
        fm_take(b, s);
        fm_refill(b);
        if (s == 0 && r != 15) return 1;
        k += s ? r + 1 : 16;
        if (k >= 64) return 1;
        window = (uint32_t)(b->acc >> (64 - SKIP));
    }
}

// A chrominance block's AC coefficients into `coef` (natural order, zeroed by the caller). 0 on a bad code or a run
// past coefficient 63 (libjpeg-turbo would clamp it into 63; we leave such data to it). As in fm_skip_ac, the next
// 9-bit window is taken before each refill; a longer code is decoded from the refilled bits.
static inline __attribute__((always_inline)) int fm_read_ac(fm_bits *b, const fm_huff *h, int16_t coef[64]) {
    fm_refill(b);
    uint32_t window = (uint32_t)(b->acc >> (64 - LOOK));
    for (int k = 1; k < 64; k++) {
        int len = h->look_len[window], rs = h->look_sym[window];
        if (__builtin_expect(len == 0, 0)) {
            rs = fm_huff_peek(h, fm_window(b), 32, &len);
            if (len == 0) return 0;
        }
        fm_drop(b, len);
        int r = rs >> 4, s = rs & 15;
        if (s) {
            k += r;
            if (k > 63) return 0;
            coef[fm_zigzag[k]] = (int16_t)fm_extend(fm_take(b, s), s);
        } else {
            if (r != 15) break;
            k += 15;
        }
        window = (uint32_t)(b->acc >> (64 - LOOK));
        fm_refill(b);
    }
    return 1;
}

// ---- libjpeg-turbo's reduced IDCTs and colour conversion (its integer arithmetic, so the pixels are identical) -------

// Its post-IDCT range limit: (x + 128) clamped to 0...255, for x taken modulo 1024 as libjpeg-turbo's table does.
static inline __attribute__((always_inline)) uint8_t fm_idct_limit(int x) {
    int y = (int)((uint32_t)x << 22) >> 22;   // x modulo 1024 as a signed 10-bit value, -512...511 (no branch)
    y += 128;
    return (uint8_t)(y < 0 ? 0 : y > 255 ? 255 : y);
}

static inline __attribute__((always_inline)) uint8_t fm_clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

// 1/8 of the dequantised DC, rounded (its 1x1 IDCT).
static inline __attribute__((always_inline)) uint8_t fm_idct_1x1(int dc, int q) { return fm_idct_limit((dc * q + 4) >> 3); }

// Its 2x2 IDCT as libjpeg-turbo runs it on x86-64 (jsimd_idct_2x2_sse2, not jidctred.c): the same formula — the odd
// coefficients of rows and columns 1, 3, 5, 7 weighted by sqrt(2) times sums of cosines, 13-bit fixed point, 2 extra
// bits between the passes — with the SIMD code's integer widths, which only matter for extreme coefficients:
// dequantised values wrap to 16 bits, sums wrap at 32, the first pass's odd columns saturate to 16 bits, and the
// result saturates to -128...127 before the +128 (where jidctred.c's range table would wrap).
static inline __attribute__((always_inline)) int32_t fm_wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static inline __attribute__((always_inline)) int32_t fm_sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }

static inline __attribute__((always_inline)) int32_t fm_odd(int32_t x1, int32_t x3, int32_t x5, int32_t x7) {
    enum { C1 = 29692, C3 = -10426, C5 = 6967, C7 = -5906 };   // FIX(3.624509785), -FIX(1.272758580), ...
    return fm_wrap32((int64_t)(x1 * C1 + x3 * C3) + (int64_t)(x5 * C5 + x7 * C7));   // two pair sums, then a 32-bit add
}

static inline __attribute__((always_inline)) int32_t fm_descale(int32_t v, int bits) {
    return (int32_t)((uint32_t)v + (1u << (bits - 1))) >> bits;
}

static void fm_idct_2x2_scalar(const int16_t coef[64], const uint16_t q[64], uint8_t out[2][2]) {
    enum { C1 = 29692, C3 = -10426, C5 = 6967, C7 = -5906 };
    int32_t rows[2][8];
    static const int cols[5] = {0, 1, 3, 5, 7};
    for (int i = 0; i < 5; i++) {
        int c = cols[i];
        int16_t z[8];
        for (int r = 0; r < 8; r += r == 0 ? 1 : 2) z[r] = (int16_t)(coef[8 * r + c] * q[8 * r + c]);   // rows 0, 1, 3, 5, 7
        int32_t even = (int32_t)z[0] * 32768, odd = fm_odd(z[1], z[3], z[5], z[7]);
        rows[0][c] = fm_descale(fm_wrap32((int64_t)even + odd), 13);
        rows[1][c] = fm_descale(fm_wrap32((int64_t)even - odd), 13);
    }
    for (int r = 0; r < 2; r++) {
        const int32_t *w = rows[r];
        int32_t even = (int32_t)((uint32_t)w[0] << 15);
        int32_t odd = fm_odd(fm_sat16(w[1]), fm_sat16(w[3]), fm_sat16(w[5]), fm_sat16(w[7]));
        for (int side = 0; side < 2; side++) {
            int32_t x = fm_descale(fm_wrap32(side ? (int64_t)even - odd : (int64_t)even + odd), 20);
            out[r][side] = (uint8_t)((x < -128 ? -128 : x > 127 ? 127 : x) + 128);
        }
    }
}

// The same on SSE2 (every x86-64 CPU): one block in about a third of the scalar version's time.
static inline __attribute__((always_inline)) void fm_idct_2x2(const int16_t coef[64], const uint16_t q[64], uint8_t out[2][2]) {
#if defined(__SSE2__)
    enum { C1 = 29692, C3 = -10426, C5 = 6967, C7 = -5906 };
    // The first pass on all eight columns at once (columns 2, 4, 6 are computed and unused): the dequantised values
    // wrap to 16 bits (pmullw), each pair of odd products is exact in 32 bits (pmaddwd; no pair reaches 2^31), and
    // the sums wrap at 32 bits (paddd) — the scalar formula's widths exactly.
    __m128i z[5];
    static const int r5[5] = {0, 1, 3, 5, 7};
    for (int i = 0; i < 5; i++)
        z[i] = _mm_mullo_epi16(_mm_loadu_si128((const __m128i *)(coef + 8 * r5[i])),
                               _mm_loadu_si128((const __m128i *)(q + 8 * r5[i])));
    const __m128i c13 = _mm_set1_epi32((int32_t)((uint32_t)(uint16_t)C3 << 16 | (uint16_t)C1));
    const __m128i c57 = _mm_set1_epi32((int32_t)((uint32_t)(uint16_t)C7 << 16 | (uint16_t)C5));
    const __m128i half = _mm_set1_epi32(1 << 12);
    __m128i odd_lo = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(z[1], z[2]), c13),
                                   _mm_madd_epi16(_mm_unpacklo_epi16(z[3], z[4]), c57));
    __m128i odd_hi = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(z[1], z[2]), c13),
                                   _mm_madd_epi16(_mm_unpackhi_epi16(z[3], z[4]), c57));
    __m128i even_lo = _mm_srai_epi32(_mm_unpacklo_epi16(_mm_setzero_si128(), z[0]), 1);   // z0 * 32768
    __m128i even_hi = _mm_srai_epi32(_mm_unpackhi_epi16(_mm_setzero_si128(), z[0]), 1);
    __m128i r0_lo = _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(even_lo, odd_lo), half), 13);
    __m128i r0_hi = _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(even_hi, odd_hi), half), 13);
    __m128i r1_lo = _mm_srai_epi32(_mm_add_epi32(_mm_sub_epi32(even_lo, odd_lo), half), 13);
    __m128i r1_hi = _mm_srai_epi32(_mm_add_epi32(_mm_sub_epi32(even_hi, odd_hi), half), 13);
    // The second pass on both rows: odd columns saturated to 16 bits (packssdw), weighted (pmaddwd against
    // 0, C1, 0, C3, ...), summed with 32-bit wrap-around; lanes out[0][0], out[0][1], out[1][0], out[1][1].
    const __m128i k = _mm_setr_epi16(0, C1, 0, C3, 0, C5, 0, C7);
    __m128i m0 = _mm_madd_epi16(_mm_packs_epi32(r0_lo, r0_hi), k), m1 = _mm_madd_epi16(_mm_packs_epi32(r1_lo, r1_hi), k);
    __m128i t = _mm_add_epi32(_mm_unpacklo_epi64(m0, m1), _mm_unpackhi_epi64(m0, m1));
    __m128i odd = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1)));            // o0, o0, o1, o1
    const __m128i minus = _mm_setr_epi32(0, -1, 0, -1);
    odd = _mm_sub_epi32(_mm_xor_si128(odd, minus), minus);                                    // o0, -o0, o1, -o1
    __m128i even = _mm_slli_epi32(_mm_shuffle_epi32(_mm_unpacklo_epi32(r0_lo, r1_lo), _MM_SHUFFLE(1, 1, 0, 0)), 15);
    __m128i x = _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(even, odd), _mm_set1_epi32(1 << 19)), 20);
    x = _mm_packs_epi16(_mm_packs_epi32(x, x), _mm_setzero_si128());                           // -128...127
    uint32_t bytes = (uint32_t)_mm_cvtsi128_si32(x) ^ 0x80808080u;                            // + 128
    memcpy(out, &bytes, 4);
#else
    fm_idct_2x2_scalar(coef, q, out);
#endif
}

int fm_jpeg_eighth_idct_check(uint64_t seed, int blocks) {
    int mismatches = 0;
    uint64_t s = seed | 1;
    for (int n = 0; n < blocks; n++) {
        int16_t coef[64];
        uint16_t q[64];
        for (int i = 0; i < 64; i++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;   // xorshift64
            switch (n % 4) {
            case 0: coef[i] = (int16_t)s; q[i] = (uint16_t)(s >> 16); break;                         // anything
            case 1: coef[i] = (int16_t)((s & 1) ? 32767 : -32768); q[i] = (s & 2) ? 65535 : 255; break;  // extremes
            case 2: coef[i] = (s & 7) ? 0 : (int16_t)((int)((s >> 8) % 2047) - 1023); q[i] = (uint16_t)(1 + (s >> 20) % 255); break;
            default: coef[i] = (int16_t)((int)((s >> 8) % 65) - 32); q[i] = (uint16_t)(1 + (s >> 20) % 99); break;  // photo-like
            }
        }
        uint8_t a[2][2], b[2][2];
        fm_idct_2x2(coef, q, a);
        fm_idct_2x2_scalar(coef, q, b);
        mismatches += memcmp(a, b, sizeof a) != 0;
    }
    return mismatches;
}

typedef struct { int cr_r[256], cb_b[256], cr_g[256], cb_g[256]; } fm_ycc;

static void fm_ycc_tables(fm_ycc *t) {
    for (int i = 0; i < 256; i++) {
        int64_t x = i - 128;
        t->cr_r[i] = (int)((91881 * x + 32768) >> 16);      // FIX(1.40200)
        t->cb_b[i] = (int)((116130 * x + 32768) >> 16);     // FIX(1.77200)
        t->cr_g[i] = (int)(-46802 * x);                     // -FIX(0.71414)
        t->cb_g[i] = (int)(-22554 * x + 32768);             // -FIX(0.34414), plus one half
    }
}

// ---- Markers ---------------------------------------------------------------------------------------------------------

static inline __attribute__((always_inline)) int fm_u16(const uint8_t *p) { return p[0] << 8 | p[1]; }

// Reads the header up to and including SOS. Returns the offset of the entropy-coded data, or 0 to decline.
static size_t fm_read_header(fm_jpeg8 *j, const uint8_t *data, size_t size) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
    size_t at = 2;
    for (;;) {
        if (at + 4 > size || data[at] != 0xFF) return 0;
        while (at + 4 <= size && data[at + 1] == 0xFF) at++;   // fill bytes before a marker
        if (at + 4 > size) return 0;
        int marker = data[at + 1];
        int length = fm_u16(data + at + 2);
        if (length < 2 || at + 2 + (size_t)length > size) return 0;
        const uint8_t *seg = data + at + 4;
        size_t len = (size_t)length - 2;
        switch (marker) {
        case 0xC0: case 0xC1:   // baseline / extended sequential, Huffman
            if (j->sof || len != 15 || seg[0] != 8 || seg[5] != 3) return 0;
            j->height = (uint32_t)fm_u16(seg + 1);
            j->width = (uint32_t)fm_u16(seg + 3);
            if (j->width == 0 || j->height == 0 || j->width > 65500 || j->height > 65500) return 0;
            for (int c = 0; c < 3; c++) {
                j->ids[c] = seg[6 + 3 * c];
                int sampling = seg[7 + 3 * c];
                j->tq[c] = seg[8 + 3 * c];
                if (j->tq[c] > 3 || sampling != (c == 0 ? 0x22 : 0x11)) return 0;
            }
            j->sof = 1;
            break;
        case 0xC4: {   // Huffman tables
            size_t i = 0;
            while (i < len) {
                if (i + 17 > len) return 0;
                int tc = seg[i] >> 4, th = seg[i] & 15;
                if (tc > 1 || th > 3) return 0;
                int total = 0;
                for (int l = 0; l < 16; l++) total += seg[i + 1 + l];
                if (i + 17 + (size_t)total > len) return 0;
                fm_huff *h = tc ? &j->ac[th] : &j->dc[th];
                if (!fm_huff_build(h, seg + i + 1, seg + i + 17, total, tc == 0)) return 0;
                i += 17 + (size_t)total;
            }
            break;
        }
        case 0xDB: {   // quantisation tables (8-bit values only)
            size_t i = 0;
            while (i < len) {
                if (i + 65 > len || (seg[i] >> 4) != 0 || (seg[i] & 15) > 3) return 0;
                int tq = seg[i] & 15;
                for (int k = 0; k < 64; k++) j->quant[tq][fm_zigzag[k]] = seg[i + 1 + k];
                j->quant_defined[tq] = 1;
                i += 65;
            }
            break;
        }
        case 0xDD:   // restart interval
            if (len != 2) return 0;
            j->restart = (unsigned)fm_u16(seg);
            break;
        case 0xE0:   // JFIF: a major version other than 1 draws a warning from libjpeg-turbo
            if (len >= 14 && memcmp(seg, "JFIF", 5) == 0) {
                if (seg[5] != 1) return 0;
                j->saw_jfif = 1;
            }
            break;
        case 0xEE:   // Adobe: its colour transform flag decides the colour space; leave those files to libjpeg-turbo
            if (len >= 5 && memcmp(seg, "Adobe", 5) == 0) return 0;
            break;
        case 0xDA: {   // start of scan: one interleaved baseline scan of the three components in frame order
            if (!j->sof || len != 10 || seg[0] != 3) return 0;
            for (int c = 0; c < 3; c++) {
                if (seg[1 + 2 * c] != j->ids[c]) return 0;
                j->td[c] = seg[2 + 2 * c] >> 4;
                j->ta[c] = seg[2 + 2 * c] & 15;
                if (j->td[c] > 3 || j->ta[c] > 3 || !j->dc[j->td[c]].defined || !j->ac[j->ta[c]].defined) return 0;
                if (!j->quant_defined[j->tq[c]]) return 0;
            }
            if (seg[7] != 0 || seg[8] != 63 || seg[9] != 0) return 0;
            if (!j->saw_jfif && j->ids[0] == 'R' && j->ids[1] == 'G' && j->ids[2] == 'B') return 0;
            return at + 2 + (size_t)length;
        }
        default:
            // Other frame types (progressive, lossless, arithmetic), DNL, or a marker without a length.
            if ((marker >= 0xC2 && marker <= 0xCF) || marker == 0xDC || marker == 0xD8 || marker == 0xD9 ||
                (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) return 0;
            break;   // APPn, COM and the like: skipped
        }
        at += 2 + (size_t)length;
    }
}

// At a restart boundary or the end of the scan: nothing but padding may be left of the data, and the marker
// `expected` must follow. Consumes the marker.
static int fm_expect_marker(fm_bits *b, int expected) {
    if (b->n - b->fake >= 8) return 0;   // whole bytes left unread: libjpeg-turbo would warn and skip them
    if (b->p + 2 > b->end || b->p[0] != 0xFF || b->p[1] != expected) return 0;
    b->p += 2;
    b->acc = 0;
    b->n = 0;
    b->fake = 0;
    b->stopped = 0;
    return 1;
}

// The scan, compiled apart from the header parsing and on local copies of the bit reader and the colour tables (which
// the byte stores into `out` cannot alias): as the package builds it (-fPIC, frame pointers) 3-4 % faster than the
// same loop inlined into fm_decode (bench_12mp_1/2/3 in a C harness, best of 20).
static __attribute__((noinline)) int fm_scan(const fm_jpeg8 *j, fm_bits *bp, const fm_ycc *tp, const fm_huff *ya,
                                             const uint16_t *skip,
                                             const uint16_t *qy, const uint16_t *qb, const uint16_t *qr, uint8_t *out,
                                             uint32_t ow, uint32_t oh) {
    fm_bits b = *bp;
    const fm_ycc t = *tp;
    uint32_t mcux = (j->width + 15) / 16, mcuy = (j->height + 15) / 16;
    int pred[3] = {0, 0, 0};
    unsigned left = j->restart;
    int next_rst = 0;
    for (uint32_t my = 0; my < mcuy; my++) {
        for (uint32_t mx = 0; mx < mcux; mx++) {
            if (j->restart) {
                if (left == 0) {
                    if (!fm_expect_marker(&b, 0xD0 + next_rst)) return 0;
                    next_rst = (next_rst + 1) & 7;
                    pred[0] = pred[1] = pred[2] = 0;
                    left = j->restart;
                }
                left--;
            }
            uint8_t y[4];
            for (int blk = 0; blk < 4; blk++) {
                int diff;
                if (!fm_dc_diff(&b, &j->dc[j->td[0]], &diff)) return 0;
                pred[0] += diff;
                if (pred[0] < -32768 || pred[0] > 32767) return 0;
                if (!fm_skip_ac(&b, ya, skip)) return 0;
                y[blk] = fm_idct_1x1(pred[0], qy[0]);
            }
            uint8_t cb[2][2], cr[2][2];
            for (int c = 1; c <= 2; c++) {
                int16_t coef[64];
                memset(coef, 0, sizeof coef);
                int diff;
                if (!fm_dc_diff(&b, &j->dc[j->td[c]], &diff)) return 0;
                pred[c] += diff;
                if (pred[c] < -32768 || pred[c] > 32767) return 0;
                coef[0] = (int16_t)pred[c];
                if (!fm_read_ac(&b, &j->ac[j->ta[c]], coef)) return 0;
                fm_idct_2x2(coef, c == 1 ? qb : qr, c == 1 ? cb : cr);
            }
            if (b.n < b.fake) return 0;   // the data ran out inside this MCU
            for (int blk = 0; blk < 4; blk++) {
                uint32_t ox = 2 * mx + (blk & 1), oy = 2 * my + (blk >> 1);
                if (ox >= ow || oy >= oh) continue;
                int yy = y[blk], u = cb[blk >> 1][blk & 1], v = cr[blk >> 1][blk & 1];
                uint8_t *px = out + ((size_t)oy * ow + ox) * 3;
                px[0] = fm_clamp255(yy + t.cr_r[v]);
                px[1] = fm_clamp255(yy + (int)((t.cb_g[u] + t.cr_g[v]) >> 16));
                px[2] = fm_clamp255(yy + t.cb_b[u]);
            }
        }
    }
    *bp = b;
    return 1;
}

static int fm_decode(fm_jpeg8 *j, const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                     uint32_t *out_width, uint32_t *out_height) {
    size_t start = fm_read_header(j, data, size);
    if (start == 0) return 0;
    uint32_t ow = (j->width + 7) / 8, oh = (j->height + 7) / 8;
    if ((size_t)ow * oh * 3 != out_size) return 0;
    const fm_huff *ya = &j->ac[j->ta[0]];
    const uint16_t *skip = fm_skip_table(ya);
    const uint16_t *qy = j->quant[j->tq[0]], *qb = j->quant[j->tq[1]], *qr = j->quant[j->tq[2]];
    fm_ycc t;
    fm_ycc_tables(&t);
    fm_bits b = {data + start, data + size, 0, 0, 0, 0};
    if (!fm_scan(j, &b, &t, ya, skip, qy, qb, qr, out, ow, oh)) return 0;
    if (!fm_expect_marker(&b, 0xD9)) return 0;
    *out_width = ow;
    *out_height = oh;
    return 1;
}

int fm_jpeg_decode_eighth_fast(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                               uint32_t *out_width, uint32_t *out_height) {
    if (!data || !out) return 0;
    fm_jpeg8 *j = calloc(1, sizeof *j);   // its tables, about 12 KB
    if (!j) return 0;
    int ok = fm_decode(j, data, size, out, out_size, out_width, out_height);
    free(j);
    return ok;
}
