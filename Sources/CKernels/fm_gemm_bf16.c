#include "fm_kernels.h"
#include "fm_panels.h"
#include <string.h>

long fm_bf16_packed_count(int n, int k) {
    long pairs = (k + 1) / 2, total = 0;
    for (int p = 0; p < fm_panel_count(n); p++) total += pairs * 2 * fm_panel_width(n, p);
    return total;
}

uint16_t fm_bf16_round(float value) {
    uint32_t bits;
    memcpy(&bits, &value, 4);
    if ((bits & 0x7f800000u) == 0x7f800000u) {
        // Infinity stays infinity; a NaN stays a (quiet) NaN instead of rounding into infinity.
        return (uint16_t)((bits >> 16) | ((bits & 0x007fffffu) ? 0x40u : 0u));
    }
    if ((bits & 0x7f800000u) == 0) bits &= 0x80000000u; // denormals flush to signed zero, as vcvtne2ps2bf16 does
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

void fm_bf16_pack(const float *w, int n, int k, uint16_t *dst) {
    long pairs = (k + 1) / 2;
    uint16_t *panel = dst;
    for (int p = 0; p < fm_panel_count(n); p++) {
        int width = fm_panel_width(n, p), j0 = p * FM_NR;
        // Each weight row read once, front to back (the panels interleave 32 rows; reading them in lockstep cost
        // four times as much at load); columns past N and the odd K's last half-pair are zero.
        for (int col = 0; col < width; col++) {
            uint16_t *out = panel + 2 * col;
            long step = 2L * width;
            if (j0 + col >= n) {
                for (long q = 0; q < pairs; q++) out[q * step] = out[q * step + 1] = 0;
                continue;
            }
            const float *row = w + (long)(j0 + col) * k;
            for (long q = 0; q < k / 2; q++) {
                out[q * step] = fm_bf16_round(row[2 * q]);
                out[q * step + 1] = fm_bf16_round(row[2 * q + 1]);
            }
            if (k & 1) {
                out[(pairs - 1) * step] = fm_bf16_round(row[k - 1]);
                out[(pairs - 1) * step + 1] = 0;
            }
        }
        panel += pairs * 2 * width;
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

int fm_bf16_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512bf16");
}

#define FM_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// Rows of A converted to bf16 pairs, a block at a time: a block this size stays in L1 while every panel sweeps it.
#define FM_A_SCRATCH 16384

FM_BF16_TARGET
static void convert_rows(const float *a, int lda, int rows, int k, uint16_t *dst, int stride) {
    for (int r = 0; r < rows; r++) {
        const float *src = a + (long)r * lda;
        uint16_t *out = dst + (long)r * stride;
        int kk = 0;
        for (; kk + 32 <= k; kk += 32) {
            __m512 lo = _mm512_loadu_ps(src + kk), hi = _mm512_loadu_ps(src + kk + 16);
            _mm512_storeu_si512((void *)(out + kk), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        }
        if (kk < stride) {
            // The tail and the pad to the stride: masked loads read zeros past k.
            int left = k - kk;
            __mmask16 m0 = fm_lanes(left), m1 = fm_lanes(left - 16);
            __m512 lo = _mm512_maskz_loadu_ps(m0, src + kk), hi = _mm512_maskz_loadu_ps(m1, src + kk + 16);
            int pad = stride - kk;
            __mmask32 ms = pad >= 32 ? 0xffffffffu : (__mmask32)((1u << pad) - 1);
            _mm512_mask_storeu_epi16(out + kk, ms, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        }
    }
}

// One tile: ROWS rows (1 to 8) by 16 or 32 columns (TWO = 0 or 1), every pair of k, then the epilogue.
// Always inlined with constant ROWS and TWO, so the accumulators live in registers.
FM_BF16_TARGET __attribute__((always_inline))
static inline void tile(const int ROWS, const int TWO, int pairs, const uint16_t *a, int astride, const uint16_t *b,
                        const float *bias, float *c, int ldc, const float *res, int ldr, int relu6,
                        __mmask16 m0, __mmask16 m1) {
    __m512 acc0[FM_MR], acc1[FM_MR];
    __m512 b0init = _mm512_loadu_ps(bias), b1init = TWO ? _mm512_loadu_ps(bias + 16) : _mm512_setzero_ps();
    for (int r = 0; r < ROWS; r++) { acc0[r] = b0init; acc1[r] = b1init; }
    const int width = TWO ? 32 : 16;
    const uint32_t *ap = (const uint32_t *)a;
    int as = astride / 2;
    for (int q = 0; q < pairs; q++) {
        __m512bh w0 = (__m512bh)_mm512_loadu_si512((const void *)(b + (long)q * 2 * width));
        __m512bh w1 = TWO ? (__m512bh)_mm512_loadu_si512((const void *)(b + (long)q * 2 * width + 32)) : w0;
        for (int r = 0; r < ROWS; r++) {
            __m512bh x = (__m512bh)_mm512_set1_epi32((int)ap[(long)r * as + q]);
            acc0[r] = _mm512_dpbf16_ps(acc0[r], x, w0);
            if (TWO) acc1[r] = _mm512_dpbf16_ps(acc1[r], x, w1);
        }
    }
    for (int r = 0; r < ROWS; r++)
        fm_store_row(acc0[r], acc1[r], TWO, res ? res + (long)r * ldr : 0, relu6, c + (long)r * ldc, m0, m1);
}

FM_BF16_TARGET
static void tile_rows(int rows, int two, int pairs, const uint16_t *a, int astride, const uint16_t *b, const float *bias,
                      float *c, int ldc, const float *res, int ldr, int relu6, __mmask16 m0, __mmask16 m1) {
#define FM_TILE(R) \
    case R: \
        if (two) tile(R, 1, pairs, a, astride, b, bias, c, ldc, res, ldr, relu6, m0, m1); \
        else tile(R, 0, pairs, a, astride, b, bias, c, ldc, res, ldr, relu6, m0, m1); \
        break;
    switch (rows) {
        FM_TILE(1) FM_TILE(2) FM_TILE(3) FM_TILE(4) FM_TILE(5) FM_TILE(6) FM_TILE(7) FM_TILE(8)
        default: break;
    }
#undef FM_TILE
}

FM_BF16_TARGET
void fm_gemm_bf16(int m, int n, int k, const float *a, int lda, const uint16_t *packed, const float *bias,
                  float *c, int ldc, const float *residual, int ldr, int relu6) {
    static _Thread_local uint16_t scratch[FM_A_SCRATCH] __attribute__((aligned(64)));
    int pairs = (k + 1) / 2;
    // Each converted row padded to a multiple of 32 values, so its conversion ends in whole vectors.
    int astride = (2 * pairs + 31) / 32 * 32;
    int mc = FM_A_SCRATCH / astride / FM_MR * FM_MR;
    if (mc < FM_MR) mc = FM_MR; // k > 2048 never occurs in these networks; guarded anyway below
    int panels = fm_panel_count(n);
    for (int i0 = 0; i0 < m; i0 += mc) {
        int rowsBlock = m - i0 < mc ? m - i0 : mc;
        if ((long)rowsBlock * astride > FM_A_SCRATCH) return; // cannot happen for k <= 2048 (checked by the caller)
        convert_rows(a + (long)i0 * lda, lda, rowsBlock, k, scratch, astride);
        const uint16_t *bp = packed;
        for (int p = 0; p < panels; p++) {
            int width = fm_panel_width(n, p), j0 = p * FM_NR;
            int cols = n - j0 < width ? n - j0 : width;
            __mmask16 m0 = fm_lanes(cols), m1 = fm_lanes(cols - 16);
            int two = width == FM_NR;
            for (int r0 = 0; r0 < rowsBlock; r0 += FM_MR) {
                int rows = rowsBlock - r0 < FM_MR ? rowsBlock - r0 : FM_MR;
                long row = i0 + r0;
                tile_rows(rows, two, pairs, scratch + (long)r0 * astride, astride, bp, bias + j0,
                          c + row * ldc + j0, ldc, residual ? residual + row * ldr + j0 : 0, ldr, relu6, m0, m1);
            }
            bp += (long)pairs * 2 * width;
        }
    }
}

#else

int fm_bf16_supported(void) { return 0; }

void fm_gemm_bf16(int m, int n, int k, const float *a, int lda, const uint16_t *packed, const float *bias,
                  float *c, int ldc, const float *residual, int ldr, int relu6) {
    (void)m; (void)n; (void)k; (void)a; (void)lda; (void)packed; (void)bias; (void)c; (void)ldc; (void)residual;
    (void)ldr; (void)relu6;
}

#endif
