// The two separable passes of NetRunnerImage's Pillow-exact resize, vectorised with AVX2 where the
// CPU has it (chosen at run time; Swift keeps its own portable loops for other CPUs).
//
// The arithmetic is Pillow's: 8-bit samples times 22-bit fixed-point weights summed in int32 from
// 1 << 21, shifted right by 22 and clamped to 0...255. Integer sums do not depend on the order of
// the additions, so these loops give the portable loops' bytes exactly.
//
// Invariants: every window `starts[i] ..< starts[i] + counts[i]` lies inside the source row; the
// horizontal loop reads 8 bytes at a time, two taps per load, and reads up to 5 bytes past a
// window's last sample only where that stays below `readable_end` (the source allocation's end);
// other windows take the scalar loop.
#include "CImageCodecs.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define NR_HAVE_AVX2_PATH 1
#endif

#define NR_PRECISION_BITS 22
#define NR_HALF (1 << (NR_PRECISION_BITS - 1))

static inline uint8_t nr_clip(int32_t value) {
    int32_t shifted = value >> NR_PRECISION_BITS;
    return shifted < 0 ? 0 : shifted > 255 ? 255 : (uint8_t)shifted;
}

int nr_resample_has_avx2(void) {
#ifdef NR_HAVE_AVX2_PATH
    // Computed once; a race between threads writes the same value.
    static volatile int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
#else
    return 0;
#endif
}

#ifdef NR_HAVE_AVX2_PATH

__attribute__((target("avx2"))) static void nr_horizontal_row(const uint8_t *row, int channels,
    const long *starts, const long *counts, const int32_t *weights, long taps, const int32_t *pair_weights,
    long pairs, long output_size, uint8_t *out, const uint8_t *readable_end) {
    for (long index = 0; index < output_size; index++) {
        long start = starts[index];
        long count = counts[index];
        long used = (count + 1) / 2;
        const uint8_t *pixel = row + start * channels;
        const uint8_t *last_load = pixel + (used - 1) * 2 * channels;
        if (used > 0 && last_load + 8 <= readable_end) {
            const __m256i *w = (const __m256i *)(pair_weights + index * pairs * 8);
            __m256i sum = _mm256_setzero_si256();
            for (long pair = 0; pair < used; pair++) {
                __m256i samples = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)pixel));
                sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(samples, _mm256_loadu_si256(w + pair)));
                pixel += 2 * channels;
            }
            int32_t lanes[8];
            _mm256_storeu_si256((__m256i *)lanes, sum);
            uint8_t *target = out + index * channels;
            for (int c = 0; c < channels; c++) {
                target[c] = nr_clip(NR_HALF + lanes[c] + lanes[channels + c]);
            }
        } else {
            const int32_t *w = weights + index * taps;
            for (int c = 0; c < channels; c++) {
                int32_t sum = NR_HALF;
                for (long tap = 0; tap < count; tap++) {
                    sum += (int32_t)row[(start + tap) * channels + c] * w[tap];
                }
                out[index * channels + c] = nr_clip(sum);
            }
        }
    }
}

__attribute__((target("avx2"))) static void nr_vertical_rows(const uint8_t *source, size_t source_stride,
    long row_base, long row_bytes, const long *starts, const long *counts, const int32_t *weights, long taps,
    long output_size, uint8_t *destination, size_t destination_stride, int32_t *accumulator) {
    for (long index = 0; index < output_size; index++) {
        long start = starts[index] - row_base;
        const int32_t *w = weights + index * taps;
        for (long byte = 0; byte < row_bytes; byte++) {
            accumulator[byte] = NR_HALF;
        }
        for (long tap = 0; tap < counts[index]; tap++) {
            const uint8_t *input = source + (size_t)(start + tap) * source_stride;
            __m256i weight = _mm256_set1_epi32(w[tap]);
            long byte = 0;
            for (; byte + 8 <= row_bytes; byte += 8) {
                __m256i samples = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(input + byte)));
                __m256i sum = _mm256_loadu_si256((const __m256i *)(accumulator + byte));
                sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(samples, weight));
                _mm256_storeu_si256((__m256i *)(accumulator + byte), sum);
            }
            for (; byte < row_bytes; byte++) {
                accumulator[byte] += (int32_t)input[byte] * w[tap];
            }
        }
        uint8_t *output = destination + (size_t)index * destination_stride;
        for (long byte = 0; byte < row_bytes; byte++) {
            output[byte] = nr_clip(accumulator[byte]);
        }
    }
}

#endif

int nr_resample_horizontal(const uint8_t *source, size_t source_stride, long first_row, long row_count,
    int channels, const long *starts, const long *counts, const int32_t *weights, long taps,
    const int32_t *pair_weights, long pairs, long output_size, uint8_t *destination, size_t destination_stride,
    const uint8_t *readable_end) {
#ifdef NR_HAVE_AVX2_PATH
    if ((channels != 3 && channels != 4) || !nr_resample_has_avx2()) {
        return 0;
    }
    for (long row = 0; row < row_count; row++) {
        nr_horizontal_row(source + (size_t)(first_row + row) * source_stride, channels, starts, counts, weights,
            taps, pair_weights, pairs, output_size, destination + (size_t)row * destination_stride, readable_end);
    }
    return 1;
#else
    (void)source; (void)source_stride; (void)first_row; (void)row_count; (void)channels; (void)starts;
    (void)counts; (void)weights; (void)taps; (void)pair_weights; (void)pairs; (void)output_size;
    (void)destination; (void)destination_stride; (void)readable_end;
    return 0;
#endif
}

int nr_resample_vertical(const uint8_t *source, size_t source_stride, long row_base, long row_bytes,
    const long *starts, const long *counts, const int32_t *weights, long taps, long output_size,
    uint8_t *destination, size_t destination_stride, int32_t *accumulator) {
#ifdef NR_HAVE_AVX2_PATH
    if (!nr_resample_has_avx2()) {
        return 0;
    }
    nr_vertical_rows(source, source_stride, row_base, row_bytes, starts, counts, weights, taps, output_size,
        destination, destination_stride, accumulator);
    return 1;
#else
    (void)source; (void)source_stride; (void)row_base; (void)row_bytes; (void)starts; (void)counts;
    (void)weights; (void)taps; (void)output_size; (void)destination; (void)destination_stride; (void)accumulator;
    return 0;
#endif
}
