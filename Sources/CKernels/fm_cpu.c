#include "fm_kernels.h"

// CPUID answers for the float GEMM's kernel choice (GemmKernel.fastest), which Swift cannot ask.
#if defined(__x86_64__)
int fm_cpu_has_avx512f(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

int fm_cpu_has_fma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma");
}
#else
int fm_cpu_has_avx512f(void) { return 0; }
int fm_cpu_has_fma(void) { return 0; }
#endif
