// HEIF (HEIC) and AVIF decoding over libheif, with its HEVC (libde265) and AV1 (dav1d, aom)
// decoders, from memory.
//
// libheif reports errors as values (no longjmp, nothing printed). The primary image is decoded
// with its transformations applied (irot, imir, clap), as HEIF requires and as pillow-heif
// does, so the EXIF orientation a HEIF may also carry is not applied again.
//
// Where libheif 1.19's conversion to RGB differs from Python's readers (pillow-heif for HEIC,
// Pillow for AVIF), heif_decode.c converts and transforms the primary image itself.
//
// Bounded before any decoding (libheif 1.19's security limits, from the caller's pixel limit):
// the image's pixels, its tiles and every box's children. A grid's own output size (its
// descriptor) and tile count are reported beside the `ispe` size, because a file can declare a
// small `ispe` over a huge grid: the caller checks both before calling `nr_heif_decode`.
#include "CImageCodecs.h"
#include "heif_shim.h"
#include "nr_formats.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>
#include <libheif/heif.h>
#include <libheif/heif_items.h>
#include <libheif/heif_properties.h>
#include <tiffio.h>
#include <webp/decode.h>

/// The most items (tiles, thumbnails, metadata) and children of any box a file may declare: a
/// phone's 12 MP HEIC has about 50 items, a 100 MP grid of 512x512 tiles about 400.
#define NR_HEIF_MAX_ITEMS 4096
#define NR_HEIF_MAX_CHILDREN 4096

static pthread_once_t nr_heif_once = PTHREAD_ONCE_INIT;

static void nr_heif_initialise(void) {
    // Reference counted by libheif; never undone, the decoders stay for the process's life.
    heif_init(NULL);
}

void nr_heif_prepare(void) {
    pthread_once(&nr_heif_once, nr_heif_initialise);
}

int nr_heif_status(struct heif_error error) {
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

int nr_heif_fail(struct nr_heif_decoder *decoder, struct heif_error error) {
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
    free(decoder->pixels);
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

int nr_heif_tiles_misfit_chroma(const struct heif_image_tiling *tiling, enum heif_chroma chroma) {
    if ((tiling->tile_width & 1) && chroma == heif_chroma_422) {
        return 422;
    }
    return ((tiling->tile_width & 1) || (tiling->tile_height & 1)) && chroma == heif_chroma_420 ? 420 : 0;
}

int nr_heif_tiling(nr_heif_decoder *decoder, uint32_t *width, uint32_t *height, uint32_t *tiles,
    uint32_t *tile_width, uint32_t *tile_height, int *misfit_chroma) {
    if (!decoder || !decoder->handle) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    // The coded tiles' parity, before any rotation swaps their sides, against the chroma of the
    // grid's tiles (libheif 1.19 takes the grid's from its first tile, and refuses a grid whose
    // tiles differ: heif_suberror_Wrong_tile_image_chroma_format).
    *misfit_chroma = 0;
    heif_item_id item = heif_image_handle_get_item_id(decoder->handle);
    if (heif_item_get_item_type(decoder->context, item) == heif_fourcc('g', 'r', 'i', 'd')) {
        struct heif_image_tiling coded;
        memset(&coded, 0, sizeof coded);
        enum heif_colorspace colorspace = heif_colorspace_undefined;
        enum heif_chroma chroma = heif_chroma_undefined;
        struct heif_error error = heif_image_handle_get_image_tiling(decoder->handle, 0, &coded);
        if (error.code == heif_error_Ok) {
            error = heif_image_handle_get_preferred_decoding_colorspace(decoder->handle, &colorspace, &chroma);
        }
        if (error.code != heif_error_Ok) {
            return nr_heif_fail(decoder, error);
        }
        *misfit_chroma = nr_heif_tiles_misfit_chroma(&coded, chroma);
        // The grid's descriptor and its ispe must give one size: libheif 1.23 refuses a grid
        // that decodes to another size than its ispe, where 1.19 decodes it and reports the
        // ispe's (a 192x128 grid whose ispe says 190x126, or 194x130).
        int ispe_width = heif_image_handle_get_ispe_width(decoder->handle);
        int ispe_height = heif_image_handle_get_ispe_height(decoder->handle);
        if (ispe_width < 0 || ispe_height < 0 || (uint32_t)ispe_width != coded.image_width
            || (uint32_t)ispe_height != coded.image_height) {
            snprintf(decoder->message, sizeof decoder->message,
                "the grid's descriptor says %ux%u and its ispe %dx%d; a grid must decode to its ispe's size",
                coded.image_width, coded.image_height, ispe_width, ispe_height);
            return NR_CODEC_CORRUPT;
        }
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

int nr_heif_use_thumbnail(nr_heif_decoder *decoder, uint32_t min_width, uint32_t min_height, int *width,
    int *height) {
    if (!decoder || !decoder->handle || decoder->image || decoder->pixels || min_width == 0 || min_height == 0) {
        return 0;
    }
    uint64_t primary_width = (uint64_t)heif_image_handle_get_width(decoder->handle);
    uint64_t primary_height = (uint64_t)heif_image_handle_get_height(decoder->handle);
    int count = heif_image_handle_get_number_of_thumbnails(decoder->handle);
    if (count <= 0 || primary_width == 0 || primary_height == 0) {
        return 0;
    }
    // The security limits bound the items a file may declare; a phone writes one thumbnail.
    heif_item_id ids[16];
    count = heif_image_handle_get_list_of_thumbnail_IDs(decoder->handle, ids, count < 16 ? count : 16);
    struct heif_image_handle *best = NULL;
    uint64_t best_pixels = 0;
    for (int index = 0; index < count; index++) {
        struct heif_image_handle *thumbnail = NULL;
        if (heif_image_handle_get_thumbnail(decoder->handle, ids[index], &thumbnail).code != heif_error_Ok) {
            continue;
        }
        // Sizes after the thumbnail's own transformations, as the primary's.
        uint64_t w = (uint64_t)heif_image_handle_get_width(thumbnail);
        uint64_t h = (uint64_t)heif_image_handle_get_height(thumbnail);
        // Large enough, smaller than the image, and the image's shape to within two of the
        // thumbnail's pixels (an encoder rounds its sides, to even ones for 4:2:0; crops and
        // boxes are placed in proportion on each axis): a thumbnail of another shape, or turned
        // another way, is not the image.
        uint64_t across = w * primary_height > h * primary_width ? w * primary_height - h * primary_width
                                                                 : h * primary_width - w * primary_height;
        uint64_t longer = primary_width > primary_height ? primary_width : primary_height;
        int usable = w >= min_width && h >= min_height && w < primary_width && h < primary_height
            && across <= 2 * longer
            && !heif_image_handle_has_alpha_channel(thumbnail) == !heif_image_handle_has_alpha_channel(decoder->handle);
        if (usable && (!best || w * h < best_pixels)) {
            if (best) {
                heif_image_handle_release(best);
            }
            best = thumbnail;
            best_pixels = w * h;
        } else {
            heif_image_handle_release(thumbnail);
        }
    }
    if (!best) {
        return 0;
    }
    heif_image_handle_release(decoder->handle);
    decoder->handle = best;
    *width = heif_image_handle_get_width(best);
    *height = heif_image_handle_get_height(best);
    return 1;
}


int nr_heif_copy(nr_heif_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity) {
    if (!decoder || (!decoder->image && !decoder->pixels) || !pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    size_t width = (size_t)decoder->width, height = (size_t)decoder->height;
    size_t row = width * (size_t)decoder->channels, stride = row;
    const uint8_t *plane = decoder->pixels;
    if (!plane) {
        int libheif_stride = 0;
        plane = heif_image_get_plane_readonly(decoder->image, heif_channel_interleaved, &libheif_stride);
        stride = libheif_stride > 0 ? (size_t)libheif_stride : 0;
    }
    if (!plane || stride < row || bytes_per_row < row || capacity / bytes_per_row < height) {
        snprintf(decoder->message, sizeof decoder->message, "the destination is too small");
        return NR_CODEC_BAD_ARGUMENT;
    }
    for (size_t y = 0; y < height; y++) {
        memcpy(pixels + y * bytes_per_row, plane + y * stride, row);
    }
    return NR_CODEC_OK;
}

void nr_formats_versions(char *out, size_t size) {
    int webp = WebPGetDecoderVersion();
    snprintf(out, size, "libwebp %d.%d.%d, giflib %d.%d.%d, %s, libheif %s", (webp >> 16) & 0xff, (webp >> 8) & 0xff,
        webp & 0xff, GIFLIB_MAJOR, GIFLIB_MINOR, GIFLIB_RELEASE, TIFFGetVersion(), heif_get_version());
}
