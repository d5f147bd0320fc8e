// Dot products of one vector with many rows: the inner loop of NetRunner's similarity search
// (EmbeddingIndex), in C so that it runs vectorised in debug builds too (Swift's SIMD types are
// not optimised at -Onone: 3,000 photos' near-duplicates took 39 s there, against about a
// second here). AVX2 with FMA where the CPU has them (chosen at run time), else a portable loop
// the compiler vectorises. Float sums in another order differ in their last bits: the two paths
// agree to about 1e-6, which no similarity threshold depends on.
//
// Invariants: `rows` holds at least `(first + count) * dimension` floats and `out` `count`.
#include "CImageCodecs.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define NR_HAVE_FMA_PATH 1
#endif

static float nr_dot_portable(const float *a, const float *b, size_t dimension) {
    float sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t index = 0;
    for (; index + 8 <= dimension; index += 8) {
        for (int lane = 0; lane < 8; lane++) sums[lane] += a[index + lane] * b[index + lane];
    }
    float total = 0;
    for (int lane = 0; lane < 8; lane++) total += sums[lane];
    for (; index < dimension; index++) total += a[index] * b[index];
    return total;
}

#ifdef NR_HAVE_FMA_PATH
__attribute__((target("avx2,fma"))) static float nr_dot_fma(const float *a, const float *b, size_t dimension) {
    __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
    size_t index = 0;
    for (; index + 16 <= dimension; index += 16) {
        sum0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + index), _mm256_loadu_ps(b + index), sum0);
        sum1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + index + 8), _mm256_loadu_ps(b + index + 8), sum1);
    }
    for (; index + 8 <= dimension; index += 8) {
        sum0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + index), _mm256_loadu_ps(b + index), sum0);
    }
    __m256 sum = _mm256_add_ps(sum0, sum1);
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_shuffle_ps(half, half, 1));
    float total = _mm_cvtss_f32(half);
    for (; index < dimension; index++) total += a[index] * b[index];
    return total;
}

static int nr_has_fma(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
    return known;
}
#endif

void nr_dot_rows(const float *query, const float *rows, size_t first, size_t count, size_t dimension, float *out) {
#ifdef NR_HAVE_FMA_PATH
    if (nr_has_fma()) {
        for (size_t row = 0; row < count; row++) out[row] = nr_dot_fma(query, rows + (first + row) * dimension, dimension);
        return;
    }
#endif
    for (size_t row = 0; row < count; row++) out[row] = nr_dot_portable(query, rows + (first + row) * dimension, dimension);
}
