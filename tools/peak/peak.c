// The instruction peaks of one core, for the "% of peak" columns of docs/benchmarks.md: 24 independent accumulator
// chains (more than latency x throughput) of 512-bit FMA (FP32), VDPBF16PS (BF16) and VPDPBUSD (INT8), register
// operands only, best of 20 runs of 20 M instructions each. Counts a multiply-add as two operations.
//   clang -O2 tools/peak/peak.c -o /tmp/peak && /tmp/peak
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

#define CHAINS 24
#define ITER 833333 // x 24 chains = 20 M instructions

__attribute__((target("avx512f"))) static double fp32(void) {
    __m512 acc[CHAINS], a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.9999999f);
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_ps((float)i);
    double t0 = now();
    for (long n = 0; n < ITER; n++) {
        for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
        __asm__ volatile("" : "+v"(a));
    }
    double t = now() - t0;
    float sink = 0;
    for (int i = 0; i < CHAINS; i++) sink += _mm512_reduce_add_ps(acc[i]);
    if (sink == 1234.5f) printf("!");
    return (double)ITER * CHAINS * 16 * 2 / t / 1e9;
}

__attribute__((target("avx512f,avx512bf16"))) static double bf16(void) {
    __m512 acc[CHAINS];
    __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3f00);
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_ps((float)i);
    double t0 = now();
    for (long n = 0; n < ITER; n++) {
        for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
        __asm__ volatile("" : "+v"(a));
    }
    double t = now() - t0;
    float sink = 0;
    for (int i = 0; i < CHAINS; i++) sink += _mm512_reduce_add_ps(acc[i]);
    if (sink == 1234.5f) printf("!");
    return (double)ITER * CHAINS * 32 * 2 / t / 1e9;
}

__attribute__((target("avx512f,avx512vnni"))) static double int8(void) {
    __m512i acc[CHAINS], a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_epi32(i);
    double t0 = now();
    for (long n = 0; n < ITER; n++) {
        for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
        __asm__ volatile("" : "+v"(a));
    }
    double t = now() - t0;
    long sink = 0;
    for (int i = 0; i < CHAINS; i++) sink += _mm512_reduce_add_epi32(acc[i]);
    if (sink == 12345) printf("!");
    return (double)ITER * CHAINS * 64 * 2 / t / 1e9;
}

int main(void) {
    double best[3] = {0, 0, 0};
    for (int r = 0; r < 20; r++) {
        double v[3] = {fp32(), bf16(), int8()};
        for (int i = 0; i < 3; i++) if (v[i] > best[i]) best[i] = v[i];
    }
    printf("fp32 fma        %7.1f GFLOP/s\nbf16 vdpbf16ps  %7.1f GFLOP/s\nint8 vpdpbusd   %7.1f GOP/s\n", best[0], best[1], best[2]);
    return 0;
}
