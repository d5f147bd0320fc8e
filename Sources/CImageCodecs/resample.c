// The two separable passes of NetRunnerImage's Pillow-exact resize, vectorised with AVX2 where the
// CPU has it (chosen at run time; Swift keeps its own portable loops for other CPUs).
//
// The arithmetic is Pillow's: 8-bit samples times 22-bit fixed-point weights summed in int32 from
// 1 << 21, shifted right by 22 and clamped to 0...255. Integer sums do not depend on the order of
// the additions, so these loops give the portable loops' bytes exactly.
//
// Invariants: every window `starts[i] ..< starts[i] + counts[i]` lies inside the source row; the
// horizontal loop reads 16 bytes at a time, four taps per load, and reads up to 13 bytes past a
// window's last sample only where that stays below `readable_end` (the source allocation's end);
// other windows take the scalar loop. Its weights are non-negative (Pillow's filters).
#include "CImageCodecs.h"

#include <string.h>

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

/// One row of the horizontal pass, four taps per step. A 16-byte load of four pixels is spread by
/// one shuffle into each channel's pairs of samples as int16 (taps 0-1 in the low half, 2-3 in
/// the high), and `madd` multiplies each pair by the two taps' weights and adds them. The
/// 22-bit weights do not fit int16, so each is split as `high * 2048 + low` and the two sums
/// are recombined at the end: `sum(p * w) = 2048 * sum(p * high) + sum(p * low)`, exactly, with
/// no overflow since the weights are non-negative and sum to 2^22 (each partial sum is at most
/// 255 * 2^22).
__attribute__((target("avx2"))) static void nr_horizontal_row(const uint8_t *row, int channels,
    const long *starts, const long *counts, const int32_t *weights, long taps, const int16_t *quad_weights,
    long quads, long output_size, uint8_t *out, const uint8_t *readable_end) {
    const __m256i spread = channels == 3
        ? _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
              6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1)
        : _mm256_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1,
              8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1);
    for (long index = 0; index < output_size; index++) {
        long start = starts[index];
        long count = counts[index];
        long used = (count + 3) / 4;
        const uint8_t *pixel = row + start * channels;
        const uint8_t *last_load = pixel + (used - 1) * 4 * channels;
        if (used > 0 && last_load + 16 <= readable_end) {
            const __m256i *w = (const __m256i *)(quad_weights + index * quads * 32);
            __m256i high = _mm256_setzero_si256();
            __m256i low = _mm256_setzero_si256();
            for (long quad = 0; quad < used; quad++) {
                __m256i four = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)pixel));
                __m256i samples = _mm256_shuffle_epi8(four, spread);
                high = _mm256_add_epi32(high, _mm256_madd_epi16(samples, _mm256_loadu_si256(w + 2 * quad)));
                low = _mm256_add_epi32(low, _mm256_madd_epi16(samples, _mm256_loadu_si256(w + 2 * quad + 1)));
                pixel += 4 * channels;
            }
            __m256i sum = _mm256_add_epi32(_mm256_slli_epi32(high, 11), low);
            __m128i total = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
            // nr_clip on each lane: shift, then saturate to 0...255 through int16.
            total = _mm_srai_epi32(_mm_add_epi32(total, _mm_set1_epi32(NR_HALF)), NR_PRECISION_BITS);
            __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(total, total), total);
            uint8_t *target = out + index * channels;
            int32_t packed = _mm_cvtsi128_si32(bytes);
            if (channels == 4 || index + 1 < output_size) {
                // 3 channels: the fourth byte is the next sample's first, written over next.
                memcpy(target, &packed, 4);
            } else {
                memcpy(target, &packed, 3);
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
    const int16_t *quad_weights, long quads, long output_size, uint8_t *destination, size_t destination_stride,
    const uint8_t *readable_end) {
#ifdef NR_HAVE_AVX2_PATH
    if ((channels != 3 && channels != 4) || !nr_resample_has_avx2()) {
        return 0;
    }
    for (long row = 0; row < row_count; row++) {
        nr_horizontal_row(source + (size_t)(first_row + row) * source_stride, channels, starts, counts, weights,
            taps, quad_weights, quads, output_size, destination + (size_t)row * destination_stride, readable_end);
    }
    return 1;
#else
    (void)source; (void)source_stride; (void)first_row; (void)row_count; (void)channels; (void)starts;
    (void)counts; (void)weights; (void)taps; (void)quad_weights; (void)quads; (void)output_size;
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
