// PNG decoding and encoding over libpng, reading from and writing to memory only.
//
// Error handling: libpng calls our error function, which copies the message and longjmps
// back to the setjmp point armed at the top of every public function here. Reads never go
// past the end of the memory block: running out of data is a libpng error with the
// NR_CODEC_TRUNCATED status. Warnings are ignored (nothing is printed). Decoding never
// applies gamma or colour management, like Pillow, so pixels are the file's samples.
#include "CImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct nr_png_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size;
    size_t position;
    int status;
    int layout;
    png_bytep *rows;  // row pointers for png_read_image, freed by nr_png_close
    /// A 16-bit grey image: read as 16-bit grey (and alpha, from tRNS), then clipped to 8 bits
    /// into the layout as Pillow's "I;16" to "RGB" conversion does; `wide` holds it, freed by
    /// nr_png_close.
    int clip16;
    png_bytep wide;
    char message[NR_CODEC_MESSAGE_SIZE];
};

static void nr_png_error(png_structp png, png_const_charp text) {
    struct nr_png_decoder *decoder = png_get_error_ptr(png);
    if (decoder->status == NR_CODEC_OK) {
        decoder->status = NR_CODEC_CORRUPT;
    }
    snprintf(decoder->message, sizeof decoder->message, "%s", text ? text : "libpng error");
    png_longjmp(png, 1);
}

static void nr_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void nr_png_read(png_structp png, png_bytep out, size_t length) {
    struct nr_png_decoder *decoder = png_get_io_ptr(png);
    if (length > decoder->size - decoder->position) {
        decoder->status = NR_CODEC_TRUNCATED;
        png_error(png, "the data ends before the image does");
    }
    memcpy(out, decoder->data + decoder->position, length);
    decoder->position += length;
}

/// The most bytes libpng may allocate for one ancillary chunk (tEXt, zTXt, iTXt, iCCP, eXIf...),
/// decompressed size included. Real metadata is far smaller (ICC profiles are rarely over
/// 1 MB); without a limit a 141-byte file declaring a 2 GiB tEXt chunk makes libpng allocate
/// and zero 2 GiB.
#define NR_PNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
/// The most ancillary chunks libpng keeps (text, sPLT, unknown chunks), against files made of
/// millions of tiny chunks.
#define NR_PNG_CHUNK_CACHE_MAX 1000u

/// The ancillary chunks libpng is told to skip unread: nothing here uses them (no gamma or
/// colour management, no text; NetRunnerImage reads eXIf itself, bounds-checked). libpng 1.6
/// treats "chunk data is too large" (over the chunk malloc limit) as a benign error, that is a
/// warning, and then allocates and zeroes the declared length anyway; a skipped chunk is only
/// read through, in 1 KB pieces, from the memory block.
static const png_byte nr_png_skipped_chunks[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0"
                                                "sBIT\0sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt";

nr_png_decoder *nr_png_open(const uint8_t *data, size_t size, size_t max_pixels, int *status) {
    nr_png_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        *status = NR_CODEC_NO_MEMORY;
        return NULL;
    }
    decoder->data = data;
    decoder->size = size;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, nr_png_error, nr_png_warning);
    if (!decoder->png) {
        *status = NR_CODEC_NO_MEMORY;
        return decoder;
    }
    decoder->info = png_create_info_struct(decoder->png);
    if (!decoder->info) {
        *status = NR_CODEC_NO_MEMORY;
        return decoder;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        *status = decoder->status;
        return decoder;
    }
    png_set_read_fn(decoder->png, decoder, nr_png_read);
    // Each side is at most the pixel limit (the caller checks width x height itself); libpng
    // then refuses larger headers before allocating rows.
    png_uint_32 side = max_pixels < 0x7fffffffu ? (png_uint_32)max_pixels : 0x7fffffffu;
    png_set_user_limits(decoder->png, side ? side : 1, side ? side : 1);
    png_set_chunk_malloc_max(decoder->png, NR_PNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(decoder->png, NR_PNG_CHUNK_CACHE_MAX);
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_NEVER, nr_png_skipped_chunks,
        (int)(sizeof nr_png_skipped_chunks / 5));
    png_read_info(decoder->png, decoder->info);
    *status = NR_CODEC_OK;
    return decoder;
}

const char *nr_png_message(const nr_png_decoder *decoder) { return decoder ? decoder->message : ""; }

void nr_png_close(nr_png_decoder *decoder) {
    if (!decoder) {
        return;
    }
    if (decoder->png) {
        png_destroy_read_struct(&decoder->png, decoder->info ? &decoder->info : NULL, NULL);
    }
    free(decoder->rows);
    free(decoder->wide);
    free(decoder);
}

void nr_png_header(
    const nr_png_decoder *decoder, int *width, int *height, int *bit_depth, int *color_type, int *interlaced,
    int *has_alpha) {
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    *width = (int)png_get_image_width(png, info);
    *height = (int)png_get_image_height(png, info);
    *bit_depth = png_get_bit_depth(png, info);
    *color_type = png_get_color_type(png, info);
    *interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
    *has_alpha = (*color_type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
}

static int nr_png_layout_bytes(int layout) {
    switch (layout) {
    case NR_LAYOUT_GRAY: return 1;
    case NR_LAYOUT_RGB: return 3;
    default: return 4;
    }
}

int nr_png_configure(nr_png_decoder *decoder, int layout) {
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    decoder->status = NR_CODEC_OK;
    if (setjmp(png_jmpbuf(png))) {
        return decoder->status;
    }
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    int color = color_type & (PNG_COLOR_MASK_COLOR | PNG_COLOR_MASK_PALETTE);
    int alpha_channel = color_type & PNG_COLOR_MASK_ALPHA;
    int transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (layout == NR_LAYOUT_GRAY && color) {
        return NR_CODEC_UNSUPPORTED;
    }
    int wants_alpha = layout == NR_LAYOUT_RGBA || layout == NR_LAYOUT_BGRA;
    decoder->clip16 = bit_depth == 16 && color_type == PNG_COLOR_TYPE_GRAY;
    if (decoder->clip16) {
        // Pillow opens 16-bit grey as mode "I;16", which convert("RGB") clips (values over 255
        // become 255) where it keeps the high byte of every other 16-bit PNG: read the samples,
        // expand them in nr_png_decode.
        if (transparency && wants_alpha) {
            png_set_tRNS_to_alpha(png);
        }
        png_set_interlace_handling(png);
        png_read_update_info(png, info);
        size_t wide = (size_t)png_get_image_width(png, info) * (transparency && wants_alpha ? 4 : 2);
        if (png_get_rowbytes(png, info) != wide) {
            snprintf(decoder->message, sizeof decoder->message, "unexpected 16-bit row size %zu (wanted %zu)",
                (size_t)png_get_rowbytes(png, info), wide);
            return NR_CODEC_UNSUPPORTED;
        }
        decoder->layout = layout;
        return NR_CODEC_OK;
    }
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    }
    if (!color && bit_depth < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (transparency && wants_alpha) {
        png_set_tRNS_to_alpha(png);
    }
    if (bit_depth == 16) {
        png_set_strip_16(png);  // the high byte, as Pillow reads 16-bit colour and grey + alpha
    }
    if (!color && layout != NR_LAYOUT_GRAY) {
        png_set_gray_to_rgb(png);
    }
    // Palette expansion adds alpha from tRNS by itself; strip it too when it is not wanted.
    if ((alpha_channel || (color_type == PNG_COLOR_TYPE_PALETTE && transparency)) && !wants_alpha) {
        png_set_strip_alpha(png);
    }
    if (wants_alpha && !alpha_channel && !transparency) {
        png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    }
    if (layout == NR_LAYOUT_BGRA) {
        png_set_bgr(png);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t expected = (size_t)png_get_image_width(png, info) * (size_t)nr_png_layout_bytes(layout);
    if (png_get_rowbytes(png, info) != expected) {
        snprintf(decoder->message, sizeof decoder->message, "unexpected row size %zu after transformations (wanted %zu)",
            (size_t)png_get_rowbytes(png, info), expected);
        return NR_CODEC_UNSUPPORTED;
    }
    decoder->layout = layout;
    return NR_CODEC_OK;
}

int nr_png_decode(nr_png_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity) {
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    size_t width = png_get_image_width(png, info);
    size_t height = png_get_image_height(png, info);
    size_t row_bytes = width * (size_t)nr_png_layout_bytes(decoder->layout);
    if (bytes_per_row < row_bytes || height == 0 || (height - 1) * bytes_per_row + row_bytes > capacity) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    free(decoder->rows);
    decoder->rows = malloc(height * sizeof(png_bytep));
    if (!decoder->rows) {
        return NR_CODEC_NO_MEMORY;
    }
    size_t wide_bytes = decoder->clip16 ? png_get_rowbytes(png, info) : 0;
    if (decoder->clip16) {
        free(decoder->wide);
        decoder->wide = wide_bytes && SIZE_MAX / wide_bytes >= height ? malloc(wide_bytes * height) : NULL;
        if (!decoder->wide) {
            return NR_CODEC_NO_MEMORY;
        }
    }
    for (size_t y = 0; y < height; y++) {
        decoder->rows[y] = decoder->clip16 ? decoder->wide + y * wide_bytes : pixels + y * bytes_per_row;
    }
    decoder->status = NR_CODEC_OK;
    if (setjmp(png_jmpbuf(png))) {
        return decoder->status;
    }
    png_read_image(png, decoder->rows);
    if (decoder->clip16) {
        // Big-endian samples: grey, then alpha when tRNS became one.
        size_t step = wide_bytes / width, bytes = (size_t)nr_png_layout_bytes(decoder->layout);
        for (size_t y = 0; y < height; y++) {
            const png_byte *in = decoder->wide + y * wide_bytes;
            uint8_t *out = pixels + y * bytes_per_row;
            for (size_t x = 0; x < width; x++, in += step, out += bytes) {
                uint8_t grey = in[0] ? 255 : in[1];
                memset(out, grey, bytes < 3 ? bytes : 3);
                if (bytes == 4) {
                    out[3] = step == 4 ? in[2] : 255;
                }
            }
        }
    }
    return NR_CODEC_OK;
}

// MARK: Encoding

struct nr_png_encoder {
    png_structp png;
    png_infop info;
    uint8_t *buffer;
    size_t size;
    size_t capacity;
    int status;
    char message[NR_CODEC_MESSAGE_SIZE];
};

static void nr_png_encode_error(png_structp png, png_const_charp text) {
    struct nr_png_encoder *encoder = png_get_error_ptr(png);
    if (encoder->status == NR_CODEC_OK) {
        encoder->status = NR_CODEC_CORRUPT;
    }
    snprintf(encoder->message, sizeof encoder->message, "%s", text ? text : "libpng error");
    png_longjmp(png, 1);
}

static void nr_png_write(png_structp png, png_bytep bytes, size_t length) {
    struct nr_png_encoder *encoder = png_get_io_ptr(png);
    if (length > encoder->capacity - encoder->size) {
        size_t capacity = encoder->capacity ? encoder->capacity : 65536;
        while (length > capacity - encoder->size) {
            if (capacity > SIZE_MAX / 2) {
                encoder->status = NR_CODEC_NO_MEMORY;
                png_error(png, "PNG output too large");
            }
            capacity *= 2;
        }
        uint8_t *grown = realloc(encoder->buffer, capacity);
        if (!grown) {
            encoder->status = NR_CODEC_NO_MEMORY;
            png_error(png, "out of memory for the PNG output");
        }
        encoder->buffer = grown;
        encoder->capacity = capacity;
    }
    memcpy(encoder->buffer + encoder->size, bytes, length);
    encoder->size += length;
}

static void nr_png_flush(png_structp png) { (void)png; }

int nr_png_encode(
    const uint8_t *pixels, int width, int height, size_t bytes_per_row, int layout, uint8_t **output,
    size_t *output_size, char *message, size_t message_size) {
    *output = NULL;
    *output_size = 0;
    if (width <= 0 || height <= 0) {
        snprintf(message, message_size, "invalid size %dx%d", width, height);
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_png_encoder *encoder = calloc(1, sizeof *encoder);
    if (!encoder) {
        return NR_CODEC_NO_MEMORY;
    }
    encoder->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, encoder, nr_png_encode_error, nr_png_warning);
    if (encoder->png) {
        encoder->info = png_create_info_struct(encoder->png);
    }
    if (!encoder->png || !encoder->info) {
        png_destroy_write_struct(&encoder->png, NULL);
        free(encoder);
        return NR_CODEC_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(encoder->png))) {
        int status = encoder->status;
        snprintf(message, message_size, "%s", encoder->message);
        png_destroy_write_struct(&encoder->png, &encoder->info);
        free(encoder->buffer);
        free(encoder);
        return status;
    }
    png_set_write_fn(encoder->png, encoder, nr_png_write, nr_png_flush);
    int color_type;
    switch (layout) {
    case NR_LAYOUT_GRAY: color_type = PNG_COLOR_TYPE_GRAY; break;
    case NR_LAYOUT_RGB: color_type = PNG_COLOR_TYPE_RGB; break;
    default: color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    }
    png_set_IHDR(encoder->png, encoder->info, (png_uint_32)width, (png_uint_32)height, 8, color_type,
        PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(encoder->png, 6);
    png_write_info(encoder->png, encoder->info);
    if (layout == NR_LAYOUT_BGRA) {
        png_set_bgr(encoder->png);
    }
    for (int y = 0; y < height; y++) {
        png_write_row(encoder->png, (png_const_bytep)(pixels + (size_t)y * bytes_per_row));
    }
    png_write_end(encoder->png, encoder->info);
    *output = encoder->buffer;
    *output_size = encoder->size;
    png_destroy_write_struct(&encoder->png, &encoder->info);
    free(encoder);
    return NR_CODEC_OK;
}
