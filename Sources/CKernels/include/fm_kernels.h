#ifndef FM_KERNELS_H
#define FM_KERNELS_H
#include <stdint.h>

// Reduced-precision GEMM kernels for the CNN's 1x1 convolutions, in C because Swift cannot emit AVX-512 BF16
// instructions (`vdpbf16ps`). Compiled for those instructions with a function attribute, so the portable build
// still compiles; callers ask `fm_bf16_supported()` (CPUID, at run time) before calling a kernel.

/// 1 when this CPU executes AVX-512 F (32 vector registers: what the 8 x 32 float tiles need), else 0.
int fm_cpu_has_avx512f(void);

/// 1 when this CPU executes FMA3 (fused multiply-add), else 0.
int fm_cpu_has_fma(void);

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

/// 1 when this CPU executes AVX-512 VNNI (and AVX-512 F/BW/VL), else 0.
int fm_vnni_supported(void);

/// Bytes of int8 panels for an `n x k` weight matrix: the same panels as bf16, with `ceil(k/4)` quads of input
/// channels, four bytes per output channel per quad.
long fm_int8_packed_count(int n, int k);

/// Quantises row-major `[n][k]` float weights per output channel (symmetric: `w ≈ scale[j] * q`, q in -127...127) into
/// `dst` (`fm_int8_packed_count` bytes, padding zero), with `scales` and `sums` (the sum of each channel's q) padded to
/// whole panels of 32 (`(n + 31) / 32 * 32` values each, padding zero). Portable.
void fm_int8_pack(const float *weights, int n, int k, int8_t *dst, float *scales, int32_t *sums);

/// `C = epilogue(A * W^T + bias)` with each row of A quantised on the fly to unsigned 8 bits over its own range
/// (`a ≈ s_i * (q - z_i)`, asymmetric, round to nearest even), products summed exactly in 32-bit integers
/// (`vpdpbusd`), then `s_i * scale_j * (sum - z_i * sums_j) + bias_j` in float, `residual`, ReLU6 as in
/// `fm_gemm_bf16`. Requires `fm_vnni_supported()`.
void fm_gemm_int8(int m, int n, int k, const float *a, int lda, const int8_t *packed, const float *scales,
                  const int32_t *sums, const float *bias, float *c, int ldc, const float *residual, int ldr, int relu6);

/// The row quantisation of `fm_gemm_int8`, in portable C, for tests: `q` gets k bytes, returns the scale and sets `*zero`.
float fm_int8_quantize_row(const float *row, int k, uint8_t *q, int *zero);

#endif
