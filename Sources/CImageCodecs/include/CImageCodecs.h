// CImageCodecs: thin C shims over libjpeg-turbo and libpng for NetRunnerImage.
//
// Every libjpeg/libpng call happens inside a function of this target that has set up its own
// setjmp point, so a library error longjmps back into C and never through Swift frames.
// Decoders read only from the memory block they were opened with (never past `size`), and
// report failures as an NR_CODEC_* status plus a message copied into the handle.
#ifndef NETRUNNER_CIMAGECODECS_H
#define NETRUNNER_CIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The libpng version the process runs with, as a number (10639 for 1.6.39).
unsigned int nr_png_library_version(void);

/// The libjpeg API version the shims were compiled against (62 for libjpeg-turbo's 6b API).
int nr_jpeg_library_version(void);

/// Status codes returned by every decoder and encoder function.
enum {
    NR_CODEC_OK = 0,
    /// The data ended before the image did.
    NR_CODEC_TRUNCATED = 1,
    /// The library rejected the data; the handle's message says why.
    NR_CODEC_CORRUPT = 2,
    /// The image is valid but uses a feature the shim does not decode.
    NR_CODEC_UNSUPPORTED = 3,
    /// Memory could not be allocated.
    NR_CODEC_NO_MEMORY = 4,
    /// The caller passed arguments the shim cannot honour (a bug in the caller).
    NR_CODEC_BAD_ARGUMENT = 5,
};

/// Pixel layouts the shims read and write; the numbers match nothing outside this header.
enum {
    NR_LAYOUT_GRAY = 0,
    NR_LAYOUT_RGB = 1,
    NR_LAYOUT_RGBA = 2,
    NR_LAYOUT_BGRA = 3,
};

/// Size of the message buffer inside decoder handles.
#define NR_CODEC_MESSAGE_SIZE 200

// MARK: JPEG decoding

/// An open JPEG decoder over a memory block (opaque).
typedef struct nr_jpeg_decoder nr_jpeg_decoder;

/// Creates a decoder and reads the JPEG header from `data` (which must stay valid until
/// `nr_jpeg_close`). On failure `*status` says why and the returned handle still carries the
/// message (it is NULL only when no memory was available).
nr_jpeg_decoder *nr_jpeg_open(const uint8_t *data, size_t size, int *status);

/// The message of the last failure, or "".
const char *nr_jpeg_message(const nr_jpeg_decoder *decoder);

/// Frees the decoder; NULL is allowed.
void nr_jpeg_close(nr_jpeg_decoder *decoder);

/// The dimensions stored in the header, and the number of colour components (1 gray, 3
/// YCbCr/RGB, 4 CMYK/YCCK).
void nr_jpeg_header(const nr_jpeg_decoder *decoder, int *width, int *height, int *components);

/// Every scan of a progressive JPEG is read.
#define NR_JPEG_SCANS_ALL 0
/// At 1/8 only the DC scans of a progressive JPEG are read: libjpeg-turbo's 1x1 inverse DCT
/// reads nothing else, so the pixels are those of a decode of every scan. (Its 2x2 and 4x4
/// ones read coefficients up to the block's highest frequencies, so other scales read all.)
#define NR_JPEG_SCANS_EXACT 1
/// At 1/8, 1/4 and 1/2 only the scans that carry a coefficient of the block's top-left 1x1,
/// 2x2 or 4x4 corner are read, and refinements of what was dropped are dropped: the pixels are
/// close to, not equal to, those of a decode of every scan.
#define NR_JPEG_SCANS_APPROXIMATE 2

/// Chooses the output layout, the DCT scale `scale_num / 8` (1...8) and which scans of a
/// progressive file to read (NR_JPEG_SCANS_*), and reports the output size libjpeg will
/// produce.
int nr_jpeg_configure(
    nr_jpeg_decoder *decoder, int layout, int scale_num, int scans, int *out_width, int *out_height);

/// Decodes the whole image into `pixels` (rows of `bytes_per_row`; `capacity` bytes in all).
/// A premature end of data (libjpeg's "Premature end of JPEG file" warning) is reported as
/// NR_CODEC_TRUNCATED, and the "Corrupt JPEG data" warnings as NR_CODEC_CORRUPT, instead of
/// returning a partly grey image. libjpeg reads ahead, so a file missing only its EOI marker
/// also counts as truncated (Pillow refuses it too: "image file is truncated").
int nr_jpeg_decode(nr_jpeg_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity);

/// Starts decoding a region of the configured output: only the columns around
/// `left ..< left + width` that libjpeg-turbo's `jpeg_crop_scanline` keeps. The columns it
/// will decode start at `*out_left` (at or before `left`, on an iMCU boundary, with a margin
/// so that chroma upsampling sees the same neighbours as in a full decode) and number
/// `*out_width`. Then call `nr_jpeg_read_region` once, with a buffer of that width.
int nr_jpeg_start_region(nr_jpeg_decoder *decoder, int left, int width, int *out_left, int *out_width);

/// Decodes the rows `top ..< top + height` of the region `nr_jpeg_start_region` started into
/// `pixels` (`height` rows of `bytes_per_row`, each at least the region's width). Rows above
/// are skipped (entropy-decoded only), and so are the rows below, so that a file cut short
/// anywhere fails as in `nr_jpeg_decode`. The pixels are byte for byte those of a full decode.
int nr_jpeg_read_region(nr_jpeg_decoder *decoder, int top, int height, uint8_t *pixels, size_t bytes_per_row,
    size_t capacity);

// MARK: PNG decoding

/// An open PNG decoder over a memory block (opaque).
typedef struct nr_png_decoder nr_png_decoder;

/// Creates a decoder and reads the PNG header chunks from `data` (which must stay valid until
/// `nr_png_close`). Width and height are each limited to `max_pixels`, ancillary chunks to
/// 8 MB each (decompressed) and 1000 in all, and the ancillary chunks the decoder has no use
/// for (text, ICC profiles, gamma, eXIf...) are skipped unread, so a huge declared chunk costs
/// nothing.
nr_png_decoder *nr_png_open(const uint8_t *data, size_t size, size_t max_pixels, int *status);

/// The message of the last failure, or "".
const char *nr_png_message(const nr_png_decoder *decoder);

/// Frees the decoder; NULL is allowed.
void nr_png_close(nr_png_decoder *decoder);

/// The header: size, bit depth, PNG colour type, whether it is interlaced and whether it has
/// transparency (an alpha channel or a tRNS chunk).
void nr_png_header(
    const nr_png_decoder *decoder, int *width, int *height, int *bit_depth, int *color_type, int *interlaced,
    int *has_alpha);

/// Sets up the transformations to 8-bit `layout`. Returns NR_CODEC_UNSUPPORTED for a colour
/// PNG asked for NR_LAYOUT_GRAY (the caller converts instead).
int nr_png_configure(nr_png_decoder *decoder, int layout);

/// Decodes all rows (interlaced images included) into `pixels`.
int nr_png_decode(nr_png_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity);

// MARK: Encoding

/// Encodes pixels as a PNG (8-bit, no interlace). On success `*output` is a malloc'd block of
/// `*output_size` bytes the caller frees with `nr_codec_free`. `message` receives up to
/// `message_size` bytes of text on failure.
int nr_png_encode(
    const uint8_t *pixels, int width, int height, size_t bytes_per_row, int layout, uint8_t **output,
    size_t *output_size, char *message, size_t message_size);

/// Encodes pixels as a baseline JPEG of `quality` (1...100); alpha is ignored. Same contract
/// as `nr_png_encode`.
int nr_jpeg_encode(
    const uint8_t *pixels, int width, int height, size_t bytes_per_row, int layout, int quality, uint8_t **output,
    size_t *output_size, char *message, size_t message_size);

/// Frees a block returned by an encoder.
void nr_codec_free(void *block);

#ifdef __cplusplus
}
#endif


// MARK: Resampling (resample.c)

/// 1 when the CPU runs the AVX2 loops of `nr_resample_horizontal` and `nr_resample_vertical`.
int nr_resample_has_avx2(void);

/// The horizontal pass of the Pillow-exact resize over `row_count` rows from `first_row`, for 3
/// or 4 bytes per pixel, with AVX2. `weights` holds `taps` per output pixel; `quad_weights` holds,
/// per output pixel, `quads` pairs of 16 int16 vectors: four taps' weights split as
/// `w = high * 2048 + low` (the high parts' vector, then the low parts'), taps 0-1 in the low
/// 128 bits and 2-3 in the high, each tap's part once per channel, zero past the count (see
/// ResampleCoefficients.swift). Weights must lie in 0...2^22, as Pillow's filters' do. Reads
/// stay below `readable_end`. Returns 0, having done nothing, when the CPU lacks AVX2 or the
/// channel count is another: the caller then runs its own loop.
int nr_resample_horizontal(const uint8_t *source, size_t source_stride, long first_row, long row_count,
    int channels, const long *starts, const long *counts, const int32_t *weights, long taps,
    const int16_t *quad_weights, long quads, long output_size, uint8_t *destination, size_t destination_stride,
    const uint8_t *readable_end);

/// The vertical pass: output row `i` is the weighted sum of source rows `starts[i] - row_base`
/// onwards (`counts[i]` of them), `row_bytes` bytes each; `accumulator` holds `row_bytes` int32.
/// Returns 0, having done nothing, when the CPU lacks AVX2.
int nr_resample_vertical(const uint8_t *source, size_t source_stride, long row_base, long row_bytes,
    const long *starts, const long *counts, const int32_t *weights, long taps, long output_size,
    uint8_t *destination, size_t destination_stride, int32_t *accumulator);

// MARK: Similarity (dot_rows.c)

/// `out[i]` = the dot product of `query` with row `first + i` of `rows` (rows of `dimension`
/// floats, one after another), for `i` in 0..<`count`: AVX2 and FMA where the CPU has them.
void nr_dot_rows(const float *query, const float *rows, size_t first, size_t count, size_t dimension, float *out);

#endif  // NETRUNNER_CIMAGECODECS_H

#include "nr_formats.h"
#include "nr_sandbox.h"
