// HEIF (HEIC) and AVIF decoding over libheif, with its HEVC (libde265) and AV1 (dav1d, aom)
// decoders, from memory.
//
// libheif reports errors as values (no longjmp, nothing printed). The primary image is decoded
// with its transformations applied (irot, imir, clap), as HEIF requires and as pillow-heif
// does, so the EXIF orientation a HEIF may also carry is not applied again.
//
// Bounded before any decoding (libheif 1.19's security limits, from the caller's pixel limit):
// the image's pixels, its tiles and every box's children. A grid's own output size (its
// descriptor) and tile count are reported beside the `ispe` size, because a file can declare a
// small `ispe` over a huge grid: the caller checks both before calling `nr_heif_decode`.
#include "CImageCodecs.h"
#include "nr_formats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>
#include <libheif/heif.h>
#include <tiffio.h>
#include <webp/decode.h>

struct nr_heif_decoder {
    struct heif_context *context;
    struct heif_image_handle *handle;
    struct heif_image *image;
    int channels;
    char message[NR_CODEC_MESSAGE_SIZE];
};

/// The most items (tiles, thumbnails, metadata) and children of any box a file may declare: a
/// phone's 12 MP HEIC has about 50 items, a 100 MP grid of 512x512 tiles about 400.
#define NR_HEIF_MAX_ITEMS 4096
#define NR_HEIF_MAX_CHILDREN 4096

static pthread_once_t nr_heif_once = PTHREAD_ONCE_INIT;

static void nr_heif_initialise(void) {
    // Reference counted by libheif; never undone, the decoders stay for the process's life.
    heif_init(NULL);
}

static int nr_heif_status(struct heif_error error) {
    if (error.code == heif_error_Ok) {
        return NR_CODEC_OK;
    }
    if (error.subcode == heif_suberror_End_of_data) {
        return NR_CODEC_TRUNCATED;
    }
    if (error.subcode == heif_suberror_Security_limit_exceeded) {
        // A side past the limit, refused from the header: libheif's message gives the size.
        return NR_CODEC_UNSUPPORTED;
    }
    switch (error.code) {
    case heif_error_Memory_allocation_error: return NR_CODEC_NO_MEMORY;
    case heif_error_Unsupported_feature:
    case heif_error_Unsupported_filetype: return NR_CODEC_UNSUPPORTED;
    default: return NR_CODEC_CORRUPT;
    }
}

static int nr_heif_fail(struct nr_heif_decoder *decoder, struct heif_error error) {
    snprintf(decoder->message, sizeof decoder->message, "%s", error.message ? error.message : "libheif error");
    return nr_heif_status(error);
}

nr_heif_decoder *nr_heif_open(const uint8_t *data, size_t size, uint64_t max_pixels, uint64_t max_tiles,
    int *status) {
    pthread_once(&nr_heif_once, nr_heif_initialise);
    struct nr_heif_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        *status = NR_CODEC_NO_MEMORY;
        return NULL;
    }
    decoder->context = heif_context_alloc();
    if (!decoder->context) {
        snprintf(decoder->message, sizeof decoder->message, "no memory for a libheif context");
        *status = NR_CODEC_NO_MEMORY;
        return decoder;
    }
    struct heif_security_limits *limits = heif_context_get_security_limits(decoder->context);
    if (limits) {
        // libheif's own defaults (1 gigapixel, 5,000 tiles...) are far past what a request may
        // cost; 0 would disable a limit, so both stay at least 1.
        limits->max_image_size_pixels = max_pixels > 0 ? max_pixels : 1;
        limits->max_number_of_tiles = max_tiles > 0 ? max_tiles : 1;
        if (limits->max_children_per_box == 0 || limits->max_children_per_box > NR_HEIF_MAX_CHILDREN) {
            limits->max_children_per_box = NR_HEIF_MAX_CHILDREN;
        }
        if (limits->max_items == 0 || limits->max_items > NR_HEIF_MAX_ITEMS) {
            limits->max_items = NR_HEIF_MAX_ITEMS;
        }
    }
    struct heif_error error = heif_context_read_from_memory_without_copy(decoder->context, data, size, NULL);
    if (error.code == heif_error_Ok) {
        error = heif_context_get_primary_image_handle(decoder->context, &decoder->handle);
    }
    *status = error.code == heif_error_Ok ? NR_CODEC_OK : nr_heif_fail(decoder, error);
    return decoder;
}

const char *nr_heif_message(const nr_heif_decoder *decoder) {
    return decoder ? decoder->message : "";
}

void nr_heif_close(nr_heif_decoder *decoder) {
    if (!decoder) {
        return;
    }
    if (decoder->image) {
        heif_image_release(decoder->image);
    }
    if (decoder->handle) {
        heif_image_handle_release(decoder->handle);
    }
    if (decoder->context) {
        heif_context_free(decoder->context);
    }
    free(decoder);
}

void nr_heif_header(const nr_heif_decoder *decoder, int *width, int *height, int *has_alpha) {
    *width = decoder->handle ? heif_image_handle_get_width(decoder->handle) : 0;
    *height = decoder->handle ? heif_image_handle_get_height(decoder->handle) : 0;
    *has_alpha = decoder->handle ? heif_image_handle_has_alpha_channel(decoder->handle) : 0;
}

int nr_heif_tiling(nr_heif_decoder *decoder, uint32_t *width, uint32_t *height, uint32_t *tiles,
    uint32_t *tile_width, uint32_t *tile_height) {
    if (!decoder || !decoder->handle) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct heif_image_tiling tiling;
    memset(&tiling, 0, sizeof tiling);
    struct heif_error error = heif_image_handle_get_image_tiling(decoder->handle, 1, &tiling);
    if (error.code != heif_error_Ok) {
        return nr_heif_fail(decoder, error);
    }
    uint64_t count = (uint64_t)tiling.num_columns * (uint64_t)tiling.num_rows;
    *width = tiling.image_width;
    *height = tiling.image_height;
    *tiles = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    *tile_width = tiling.tile_width;
    *tile_height = tiling.tile_height;
    return NR_CODEC_OK;
}

int nr_heif_decode(nr_heif_decoder *decoder, int with_alpha, int *width, int *height) {
    if (!decoder || !decoder->handle || decoder->image) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    enum heif_chroma chroma = with_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB;
    struct heif_error error = heif_decode_image(decoder->handle, &decoder->image, heif_colorspace_RGB, chroma, NULL);
    if (error.code != heif_error_Ok) {
        decoder->image = NULL;
        return nr_heif_fail(decoder, error);
    }
    *width = heif_image_get_width(decoder->image, heif_channel_interleaved);
    *height = heif_image_get_height(decoder->image, heif_channel_interleaved);
    if (*width <= 0 || *height <= 0 || heif_image_get_bits_per_pixel_range(decoder->image, heif_channel_interleaved) != 8) {
        snprintf(decoder->message, sizeof decoder->message, "libheif decoded no 8-bit image");
        return NR_CODEC_CORRUPT;
    }
    decoder->channels = with_alpha ? 4 : 3;
    return NR_CODEC_OK;
}

int nr_heif_copy(nr_heif_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity) {
    if (!decoder || !decoder->image || !pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(decoder->image, heif_channel_interleaved, &stride);
    size_t width = (size_t)heif_image_get_width(decoder->image, heif_channel_interleaved);
    size_t height = (size_t)heif_image_get_height(decoder->image, heif_channel_interleaved);
    size_t row = width * (size_t)decoder->channels;
    if (!plane || stride <= 0 || (size_t)stride < row || bytes_per_row < row || capacity / bytes_per_row < height) {
        snprintf(decoder->message, sizeof decoder->message, "the destination is too small");
        return NR_CODEC_BAD_ARGUMENT;
    }
    for (size_t y = 0; y < height; y++) {
        memcpy(pixels + y * bytes_per_row, plane + y * (size_t)stride, row);
    }
    return NR_CODEC_OK;
}

void nr_formats_versions(char *out, size_t size) {
    int webp = WebPGetDecoderVersion();
    snprintf(out, size, "libwebp %d.%d.%d, giflib %d.%d.%d, %s, libheif %s", (webp >> 16) & 0xff, (webp >> 8) & 0xff,
        webp & 0xff, GIFLIB_MAJOR, GIFLIB_MINOR, GIFLIB_RELEASE, TIFFGetVersion(), heif_get_version());
}
