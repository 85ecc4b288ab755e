#include "fm_kernels.h"
#include "fm_panels.h"
#include <math.h>
#include <string.h>

long fm_int8_packed_count(int n, int k) {
    long quads = (k + 3) / 4, total = 0;
    for (int p = 0; p < fm_panel_count(n); p++) total += quads * 4 * fm_panel_width(n, p);
    return total;
}

void fm_int8_pack(const float *w, int n, int k, int8_t *dst, float *scales, int32_t *sums) {
    int padded = (n + FM_NR - 1) / FM_NR * FM_NR;
    for (int j = 0; j < padded; j++) { scales[j] = 0; sums[j] = 0; }
    long quads = (k + 3) / 4;
    int8_t *panel = dst;
    for (int p = 0; p < fm_panel_count(n); p++) {
        int width = fm_panel_width(n, p), j0 = p * FM_NR;
        // Each weight row read once, front to back, as fm_bf16_pack does (the panels interleave 32 rows), in loops
        // the compiler vectorises; columns past N and the last quad's padding are zero.
        for (int col = 0; col < width; col++) {
            int8_t *out = panel + 4 * col;
            long step = 4L * width;
            int j = j0 + col;
            if (j >= n) {
                for (long q = 0; q < quads; q++) memset(out + q * step, 0, 4);
                continue;
            }
            const float *row = w + (long)j * k;
            // The largest magnitude, compared as bit patterns (the same order for non-negative floats; a NaN counts
            // as 0, as it never wins the float comparison).
            uint32_t top = 0;
            for (int kk = 0; kk < k; kk++) {
                uint32_t bits;
                memcpy(&bits, &row[kk], 4);
                bits &= 0x7fffffffu;
                bits = bits > 0x7f800000u ? 0 : bits;
                top = bits > top ? bits : top;
            }
            float m;
            memcpy(&m, &top, 4);
            float scale = m > 0 ? m / 127 : 1;
            scales[j] = scale;
            int32_t sum = 0;
            for (int k0 = 0; k0 < k; k0 += 256) {
                int8_t chunk[256] = {0};
                int count = k - k0 < 256 ? k - k0 : 256;
                for (int i = 0; i < count; i++) {
                    // lrintf without the call: adding and taking away 1.5 * 2^23 rounds to the nearest integer, ties
                    // to even, for |x| < 2^22 (here |x| <= 127); a NaN becomes INT_MIN (then -127) as with lrintf.
                    float x = row[k0 + i] / scale;
                    float r = (x + 12582912.0f) - 12582912.0f;
                    int t = r >= -2147483648.0f && r < 2147483648.0f ? (int)r : INT32_MIN;
                    int v = t < -127 ? -127 : t > 127 ? 127 : t;
                    chunk[i] = (int8_t)v;
                    sum += v;
                }
                for (int q = 0; q < (count + 3) / 4; q++) memcpy(out + (k0 / 4 + q) * step, chunk + 4 * q, 4);
            }
            sums[j] = sum;
        }
        panel += quads * 4 * width;
    }
}

// The row's range always includes 0, so zero (padding, ReLU's zeros) is exact; an all-zero row gets scale 1.
static inline float row_scale(float lo, float hi, int *zero) {
    float scale = (hi - lo) / 255;
    if (!(scale > 0)) scale = 1;
    long z = lrintf(-lo / scale);
    *zero = (int)(z < 0 ? 0 : z > 255 ? 255 : z);
    return scale;
}

float fm_int8_quantize_row(const float *row, int k, uint8_t *q, int *zero) {
    float lo = 0, hi = 0;
    for (int i = 0; i < k; i++) { if (row[i] < lo) lo = row[i]; if (row[i] > hi) hi = row[i]; }
    float scale = row_scale(lo, hi, zero), inv = 1.0f / scale;
    for (int i = 0; i < k; i++) {
        long v = lrintf(row[i] * inv) + *zero;
        q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    return scale;
}

#if defined(__x86_64__)
#include <immintrin.h>

int fm_vnni_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512vnni");
}

#define FM_INT8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define FM_Q_SCRATCH 32768
#define FM_Q_ROWS (FM_Q_SCRATCH / 64)


// Each row over its own range, as fm_int8_quantize_row does it (same float operations, same rounding), padded with
// zero bytes to `stride`.
FM_INT8_TARGET
static void quantize_rows(const float *a, int lda, int rows, int k, uint8_t *dst, int stride, float *scales, int *zeros) {
    for (int r = 0; r < rows; r++) {
        const float *src = a + (long)r * lda;
        __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
        for (int kk = 0; kk < k; kk += 16) {
            __m512 v = _mm512_maskz_loadu_ps(fm_lanes(k - kk), src + kk); // masked lanes read 0, inside the range anyway
            lo = _mm512_min_ps(lo, v);
            hi = _mm512_max_ps(hi, v);
        }
        int zero;
        float scale = row_scale(_mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi), &zero);
        scales[r] = scale;
        zeros[r] = zero;
        __m512 inv = _mm512_set1_ps(1.0f / scale);
        __m512i z = _mm512_set1_epi32(zero), top = _mm512_set1_epi32(255), bottom = _mm512_setzero_si512();
        uint8_t *out = dst + (long)r * stride;
        for (int kk = 0; kk < stride; kk += 16) {
            __mmask16 m = fm_lanes(k - kk);
            __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + kk), inv)), z);
            q = _mm512_maskz_mov_epi32(m, _mm512_min_epi32(_mm512_max_epi32(q, bottom), top));
            _mm_storeu_si128((__m128i *)(out + kk), _mm512_cvtepi32_epi8(q));
        }
    }
}

FM_INT8_TARGET __attribute__((always_inline))
static inline void tile(const int ROWS, const int TWO, int quads, const uint8_t *a, int astride, const int8_t *b,
                        const float *rowScale, const int *rowZero, const float *scales, const int32_t *sums,
                        const float *bias, float *c, int ldc, const float *res, int ldr, int relu6,
                        __mmask16 m0, __mmask16 m1) {
    __m512i acc0[FM_MR], acc1[FM_MR];
    for (int r = 0; r < ROWS; r++) { acc0[r] = _mm512_setzero_si512(); acc1[r] = _mm512_setzero_si512(); }
    const int width = TWO ? 32 : 16;
    for (int q = 0; q < quads; q++) {
        __m512i w0 = _mm512_loadu_si512((const void *)(b + (long)q * 4 * width));
        __m512i w1 = TWO ? _mm512_loadu_si512((const void *)(b + (long)q * 4 * width + 64)) : w0;
        for (int r = 0; r < ROWS; r++) {
            int32_t x4;
            memcpy(&x4, a + (long)r * astride + 4 * q, 4);
            __m512i x = _mm512_set1_epi32(x4);
            acc0[r] = _mm512_dpbusd_epi32(acc0[r], x, w0);
            if (TWO) acc1[r] = _mm512_dpbusd_epi32(acc1[r], x, w1);
        }
    }
    __m512 s0 = _mm512_loadu_ps(scales), s1 = TWO ? _mm512_loadu_ps(scales + 16) : s0;
    __m512i u0 = _mm512_loadu_si512((const void *)sums), u1 = TWO ? _mm512_loadu_si512((const void *)(sums + 16)) : u0;
    __m512 b0 = _mm512_loadu_ps(bias), b1 = TWO ? _mm512_loadu_ps(bias + 16) : b0;
    for (int r = 0; r < ROWS; r++) {
        __m512i z = _mm512_set1_epi32(rowZero[r]);
        __m512 sr = _mm512_set1_ps(rowScale[r]);
        __m512 v0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc0[r], _mm512_mullo_epi32(z, u0))),
                                    _mm512_mul_ps(sr, s0), b0);
        __m512 v1 = _mm512_setzero_ps();
        if (TWO) v1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc1[r], _mm512_mullo_epi32(z, u1))),
                                      _mm512_mul_ps(sr, s1), b1);
        fm_store_row(v0, v1, TWO, res ? res + (long)r * ldr : 0, relu6, c + (long)r * ldc, m0, m1);
    }
}

FM_INT8_TARGET
static void tile_rows(int rows, int two, int quads, const uint8_t *a, int astride, const int8_t *b, const float *rowScale,
                      const int *rowZero, const float *scales, const int32_t *sums, const float *bias, float *c, int ldc,
                      const float *res, int ldr, int relu6, __mmask16 m0, __mmask16 m1) {
#define FM_TILE(R) \
    case R: \
        if (two) tile(R, 1, quads, a, astride, b, rowScale, rowZero, scales, sums, bias, c, ldc, res, ldr, relu6, m0, m1); \
        else tile(R, 0, quads, a, astride, b, rowScale, rowZero, scales, sums, bias, c, ldc, res, ldr, relu6, m0, m1); \
        break;
    switch (rows) {
        FM_TILE(1) FM_TILE(2) FM_TILE(3) FM_TILE(4) FM_TILE(5) FM_TILE(6) FM_TILE(7) FM_TILE(8)
        default: break;
    }
#undef FM_TILE
}

FM_INT8_TARGET
void fm_gemm_int8(int m, int n, int k, const float *a, int lda, const int8_t *packed, const float *scales,
                  const int32_t *sums, const float *bias, float *c, int ldc, const float *residual, int ldr, int relu6) {
    static _Thread_local uint8_t scratch[FM_Q_SCRATCH] __attribute__((aligned(64)));
    static _Thread_local float rowScale[FM_Q_ROWS];
    static _Thread_local int rowZero[FM_Q_ROWS];
    int quads = (k + 3) / 4;
    int astride = (4 * quads + 63) / 64 * 64;
    int mc = FM_Q_SCRATCH / astride / FM_MR * FM_MR;
    if (mc > FM_Q_ROWS) mc = FM_Q_ROWS;
    if (mc < FM_MR) return; // k > 4096: the caller keeps such layers in float
    int panels = fm_panel_count(n);
    for (int i0 = 0; i0 < m; i0 += mc) {
        int rowsBlock = m - i0 < mc ? m - i0 : mc;
        quantize_rows(a + (long)i0 * lda, lda, rowsBlock, k, scratch, astride, rowScale, rowZero);
        const int8_t *bp = packed;
        for (int p = 0; p < panels; p++) {
            int width = fm_panel_width(n, p), j0 = p * FM_NR;
            int cols = n - j0 < width ? n - j0 : width;
            __mmask16 m0 = fm_lanes(cols), m1 = fm_lanes(cols - 16);
            int two = width == FM_NR;
            for (int r0 = 0; r0 < rowsBlock; r0 += FM_MR) {
                int rows = rowsBlock - r0 < FM_MR ? rowsBlock - r0 : FM_MR;
                long row = i0 + r0;
                tile_rows(rows, two, quads, scratch + (long)r0 * astride, astride, bp, rowScale + r0, rowZero + r0,
                          scales + j0, sums + j0, bias + j0, c + row * ldc + j0, ldc,
                          residual ? residual + row * ldr + j0 : 0, ldr, relu6, m0, m1);
            }
            bp += (long)quads * 4 * width;
        }
    }
}

#else

int fm_vnni_supported(void) { return 0; }

void fm_gemm_int8(int m, int n, int k, const float *a, int lda, const int8_t *packed, const float *scales,
                  const int32_t *sums, const float *bias, float *c, int ldc, const float *residual, int ldr, int relu6) {
    (void)m; (void)n; (void)k; (void)a; (void)lda; (void)packed; (void)scales; (void)sums; (void)bias; (void)c; (void)ldc;
    (void)residual; (void)ldr; (void)relu6;
}

#endif
