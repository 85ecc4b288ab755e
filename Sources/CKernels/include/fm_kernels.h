#ifndef FM_KERNELS_H
#define FM_KERNELS_H
#include <stdint.h>

// Reduced-precision GEMM kernels for the CNN's 1x1 convolutions, in C because Swift cannot emit AVX-512 BF16
// instructions (`vdpbf16ps`). Compiled for those instructions with a function attribute, so the portable build
// still compiles; callers ask `fm_bf16_supported()` (CPUID, at run time) before calling a kernel.

/// 1 when this CPU executes AVX-512 BF16 (and AVX-512 F/BW/VL), else 0.
int fm_bf16_supported(void);

/// Bytes of bf16 panels for an `n x k` weight matrix: panels of 32 output channels (a last remainder of at most 16 in a
/// panel of 16), each `ceil(k/2)` pairs of rows, two input channels interleaved per output channel.
long fm_bf16_packed_count(int n, int k);

/// Packs row-major `[n][k]` float weights into `dst` (`fm_bf16_packed_count` values), rounding to nearest even;
/// padding is zero. Portable (no special instructions).
void fm_bf16_pack(const float *weights, int n, int k, uint16_t *dst);

/// Rounds a float to bf16 (nearest, ties to even), as `fm_bf16_pack` and the kernel's activation conversion do.
uint16_t fm_bf16_round(float value);

/// `C[m x n] = epilogue(bf16(A[m x k]) * bf16(W)^T + bias)` with float accumulation: bias (n floats, required), then
/// `residual` (optional, leading dimension `ldr`), then a clamp to [0, 6] when `relu6` is non-zero.
/// Requires `fm_bf16_supported()`.
void fm_gemm_bf16(int m, int n, int k, const float *a, int lda, const uint16_t *packed, const float *bias,
                  float *c, int ldc, const float *residual, int ldr, int relu6);

#endif
