// The instruction peaks of one core, for the "% of peak" columns of docs/benchmarks.md: 24 independent accumulator
// chains (more than latency x throughput) of 512-bit FMA (FP32), VDPBF16PS (BF16) and VPDPBUSD (INT8), 12 of 256-bit
// FMA (AVX2's 16 registers) and 4 of AVX2's two INT8 sequences (below), register operands only, best of 20 runs of
// 20 M instructions (INT8 AVX2: steps) each. Counts a multiply-add as two operations. What the CPU lacks (CPUID) is
// reported as such, not run.
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

// AVX2 has no 8-bit dot product: u8 x s8 products are summed in pairs to 16 bits (VPMADDUBSW), then widened to 32
// bits in pairs with a multiply by one (VPMADDWD) and added, or added in 16 bits for a few steps (VPADDW), which is
// half the multiplies and why AVX2 INT8 code quantises to 7 bits. Each chain has its own operands, or the compiler
// would compute one product for all chains.
#define CHAINS3 4
#define ITER3 5000000 // x 4 chains = 20 M dot-product steps of 32 multiply-adds

__attribute__((target("avx2"))) static double int8_avx2(int widen) {
    __m256i acc[CHAINS3], a[CHAINS3], b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
    for (int i = 0; i < CHAINS3; i++) { acc[i] = _mm256_setzero_si256(); a[i] = _mm256_set1_epi8((char)(3 + i)); }
    double t0 = now();
    if (widen) {
        for (long n = 0; n < ITER3; n++) {
            for (int i = 0; i < CHAINS3; i++)
                acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a[i], b), ones));
            __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]));
        }
    } else {
        for (long n = 0; n < ITER3; n++) {
            for (int i = 0; i < CHAINS3; i++) acc[i] = _mm256_add_epi16(acc[i], _mm256_maddubs_epi16(a[i], b));
            __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]));
        }
    }
    double t = now() - t0;
    int lanes[8]; long sink = 0;
    for (int i = 0; i < CHAINS3; i++) { _mm256_storeu_si256((__m256i *)lanes, acc[i]); for (int l = 0; l < 8; l++) sink += lanes[l]; }
    if (sink == 12345) printf("!");
    return (double)ITER3 * CHAINS3 * 32 * 2 / t / 1e9;
}

int main(void) {
    enum { KINDS = 6 };
    int has[KINDS] = {
        __builtin_cpu_supports("avx512f"),
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"),
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"),
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
        __builtin_cpu_supports("avx2"),
        __builtin_cpu_supports("avx2"),
    };
    const char *names[KINDS] = {"fp32 fma 512    ", "bf16 vdpbf16ps  ", "int8 vpdpbusd   ", "fp32 fma 256    ",
                                "int8 avx2 32-bit", "int8 avx2 16-bit"};
    const char *units[KINDS] = {"GFLOP/s", "GFLOP/s", "GOP/s", "GFLOP/s", "GOP/s", "GOP/s"};
    double best[KINDS] = {0};
    for (int r = 0; r < 20; r++) {
        double v[KINDS] = {has[0] ? fp32() : 0, has[1] ? bf16() : 0, has[2] ? int8() : 0, has[3] ? fp32_avx2() : 0,
                           has[4] ? int8_avx2(1) : 0, has[5] ? int8_avx2(0) : 0};
        for (int i = 0; i < KINDS; i++) if (v[i] > best[i]) best[i] = v[i];
    }
    for (int i = 0; i < KINDS; i++) {
        if (has[i]) printf("%s%7.1f %s\n", names[i], best[i], units[i]);
        else printf("%s   (this CPU lacks it)\n", names[i]);
    }
    return 0;
}
