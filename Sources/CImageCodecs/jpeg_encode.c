// JPEG encoding over libjpeg-turbo, into memory: baseline, at a quality, from grey, RGB, RGBA
// or BGRA rows. libjpeg's errors longjmp back through the error manager of jpeg_shim.h, as the
// decoder's do.
#include "CImageCodecs.h"
#include "jpeg_shim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

struct nr_jpeg_encoder {
    struct jpeg_compress_struct info;
    struct nr_jpeg_error error;
    unsigned char *buffer;  // set by jpeg_mem_dest; lives on the heap so it survives a longjmp
    unsigned long buffer_size;
};

int nr_jpeg_encode(
    const uint8_t *pixels, int width, int height, size_t bytes_per_row, int layout, int quality, uint8_t **output,
    size_t *output_size, char *message, size_t message_size) {
    *output = NULL;
    *output_size = 0;
    if (width <= 0 || height <= 0 || quality < 1 || quality > 100) {
        snprintf(message, message_size, "invalid size %dx%d or quality %d", width, height, quality);
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_jpeg_encoder *encoder = calloc(1, sizeof *encoder);
    if (!encoder) {
        return NR_CODEC_NO_MEMORY;
    }
    encoder->info.err = &encoder->error.base;
    nr_jpeg_install_errors(&encoder->error);
    if (setjmp(encoder->error.jump)) {
        snprintf(message, message_size, "%s", encoder->error.message);
        int status = encoder->error.status;
        jpeg_destroy_compress(&encoder->info);
        free(encoder->buffer);
        free(encoder);
        return status == NR_CODEC_OK ? NR_CODEC_CORRUPT : status;
    }
    jpeg_create_compress(&encoder->info);
    jpeg_mem_dest(&encoder->info, &encoder->buffer, &encoder->buffer_size);
    encoder->info.image_width = (JDIMENSION)width;
    encoder->info.image_height = (JDIMENSION)height;
    switch (layout) {
    case NR_LAYOUT_GRAY:
        encoder->info.input_components = 1;
        encoder->info.in_color_space = JCS_GRAYSCALE;
        break;
    case NR_LAYOUT_RGB:
        encoder->info.input_components = 3;
        encoder->info.in_color_space = JCS_EXT_RGB;
        break;
    case NR_LAYOUT_RGBA:
        encoder->info.input_components = 4;
        encoder->info.in_color_space = JCS_EXT_RGBA;
        break;
    default:
        encoder->info.input_components = 4;
        encoder->info.in_color_space = JCS_EXT_BGRA;
    }
    jpeg_set_defaults(&encoder->info);
    jpeg_set_quality(&encoder->info, quality, TRUE);
    jpeg_start_compress(&encoder->info, TRUE);
    while (encoder->info.next_scanline < encoder->info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)encoder->info.next_scanline * bytes_per_row);
        jpeg_write_scanlines(&encoder->info, &row, 1);
    }
    jpeg_finish_compress(&encoder->info);
    *output = encoder->buffer;
    *output_size = encoder->buffer_size;
    jpeg_destroy_compress(&encoder->info);
    free(encoder);
    return NR_CODEC_OK;
}

void nr_codec_free(void *block) { free(block); }
