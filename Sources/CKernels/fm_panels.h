#ifndef FM_PANELS_H
#define FM_PANELS_H
// The panel layout both reduced-precision GEMMs share with FoodVision's FP32 kernels: 32 output channels per panel,
// a remainder of at most 16 in a panel of 16 (most layers have N = 16 mod 32).
#define FM_NR 32
#define FM_MR 8

static inline int fm_panel_width(int n, int panel) {
    int full = n / FM_NR, rem = n % FM_NR;
    return (panel == full && rem > 0 && rem <= FM_NR / 2) ? FM_NR / 2 : FM_NR;
}

static inline int fm_panel_count(int n) { return (n + FM_NR - 1) / FM_NR; }

#if defined(__x86_64__)
#include <immintrin.h>

static inline __mmask16 fm_lanes(int left) { return left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1); }

// The float epilogue of both kernels for one row of 16 or 32 outputs: + residual, the ReLU6 clamp, a masked store
// (columns past N are never written; masked-off residual lanes are never read).
__attribute__((target("avx512f"), always_inline))
static inline void fm_store_row(__m512 v0, __m512 v1, int two, const float *res, int relu6, float *c,
                                __mmask16 m0, __mmask16 m1) {
    if (res) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, res));
        if (two) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, res + 16));
    }
    if (relu6) {
        __m512 zero = _mm512_setzero_ps(), six = _mm512_set1_ps(6.0f);
        v0 = _mm512_min_ps(_mm512_max_ps(v0, zero), six);
        if (two) v1 = _mm512_min_ps(_mm512_max_ps(v1, zero), six);
    }
    _mm512_mask_storeu_ps(c, m0, v0);
    if (two) _mm512_mask_storeu_ps(c + 16, m1, v1);
}
#endif

#endif
