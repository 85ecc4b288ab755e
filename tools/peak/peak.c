// The instruction peaks of one core, for the "% of peak" columns of docs/benchmarks.md: 24 independent accumulator
// chains (more than latency x throughput) of 512-bit FMA (FP32), VDPBF16PS (BF16) and VPDPBUSD (INT8), and 12 of
// 256-bit FMA (AVX2's 16 registers), register operands only, best of 20 runs of 20 M instructions each. Counts a
// multiply-add as two operations. What the CPU lacks (CPUID) is reported as such, not run.
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

#define CHAINS2 12
#define ITER2 1666667 // x 12 chains = 20 M instructions

__attribute__((target("avx2,fma"))) static double fp32_avx2(void) {
    __m256 acc[CHAINS2], a = _mm256_set1_ps(1.0000001f), b = _mm256_set1_ps(0.9999999f);
    for (int i = 0; i < CHAINS2; i++) acc[i] = _mm256_set1_ps((float)i);
    double t0 = now();
    for (long n = 0; n < ITER2; n++) {
        for (int i = 0; i < CHAINS2; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
        __asm__ volatile("" : "+x"(a));
    }
    double t = now() - t0;
    float lanes[8], sink = 0;
    for (int i = 0; i < CHAINS2; i++) { _mm256_storeu_ps(lanes, acc[i]); for (int l = 0; l < 8; l++) sink += lanes[l]; }
    if (sink == 1234.5f) printf("!");
    return (double)ITER2 * CHAINS2 * 8 * 2 / t / 1e9;
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
    int has[4] = {
        __builtin_cpu_supports("avx512f"),
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"),
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"),
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
    };
    const char *names[4] = {"fp32 fma 512    ", "bf16 vdpbf16ps  ", "int8 vpdpbusd   ", "fp32 fma 256    "};
    const char *units[4] = {"GFLOP/s", "GFLOP/s", "GOP/s", "GFLOP/s"};
    double best[4] = {0, 0, 0, 0};
    for (int r = 0; r < 20; r++) {
        double v[4] = {has[0] ? fp32() : 0, has[1] ? bf16() : 0, has[2] ? int8() : 0, has[3] ? fp32_avx2() : 0};
        for (int i = 0; i < 4; i++) if (v[i] > best[i]) best[i] = v[i];
    }
    for (int i = 0; i < 4; i++) {
        if (has[i]) printf("%s%7.1f %s\n", names[i], best[i], units[i]);
        else printf("%s   (this CPU lacks it)\n", names[i]);
    }
    return 0;
}
