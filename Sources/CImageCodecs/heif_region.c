// A HEIC grid's region: only the tiles it covers decoded, on a few threads (see heif_shim.h and
// `nr_heif_decode_region` in nr_formats.h).
#include "heif_shim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Maps a rectangle (x, y, width, height) between the stored image of `width` x `height` and
/// that image turned `angle` degrees counter-clockwise by `nr_plane_rotate` (at 90, stored
/// (sx, sy) shows at (sy, width - 1 - sx); at 270, at (height - 1 - sy, sx)): from the turned
/// image to the stored one (`to_stored`), or back.
static void nr_heif_rotate_rect(int angle, int to_stored, uint32_t width, uint32_t height, uint32_t rect[4]) {
    uint32_t x = rect[0], y = rect[1], w = rect[2], h = rect[3];
    switch (angle) {
    case 90:
        rect[0] = to_stored ? width - (y + h) : y;
        rect[1] = to_stored ? x : width - (x + w);
        break;
    case 180:
        rect[0] = width - (x + w);
        rect[1] = height - (y + h);
        return;
    case 270:
        rect[0] = to_stored ? y : height - (y + h);
        rect[1] = to_stored ? height - (x + w) : x;
        break;
    default: return;
    }
    rect[2] = h;
    rect[3] = w;
}

/// The tiles to decode and where they go, shared by the threads that decode them.
struct nr_heif_tile_job {
    struct nr_heif_decoder *decoder;
    const struct heif_decoding_options *options;
    struct heif_image_tiling tiling;
    uint32_t first_column, first_row, columns, rows;
    struct nr_plane *rgb;  // the tiles' rectangle of the stored image
    pthread_mutex_t lock;
    uint32_t next;
    int status;
    char message[NR_CODEC_MESSAGE_SIZE];
};

/// Decodes tiles until none are left, each pasted into its place.
static void *nr_heif_tile_worker(void *argument) {
    struct nr_heif_tile_job *job = argument;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        uint32_t index = job->next++;
        int failed = job->status != NR_CODEC_OK;
        pthread_mutex_unlock(&job->lock);
        if (failed || index >= job->columns * job->rows) {
            return NULL;
        }
        uint32_t column = job->first_column + index % job->columns, row = job->first_row + index / job->columns;
        struct heif_image *tile = NULL;
        struct heif_error error = heif_image_handle_decode_image_tile(job->decoder->handle, &tile,
            heif_colorspace_RGB, heif_chroma_interleaved_RGB, job->options, column, row);
        struct nr_plane view;
        int status = NR_CODEC_OK;
        if (error.code != heif_error_Ok) {
            status = nr_heif_status(error);
        } else if (!nr_plane_view(&view, tile, heif_channel_interleaved, 3) || view.width != job->tiling.tile_width
            || view.height != job->tiling.tile_height) {
            status = -1;  // another size than the grid says: left to libheif's whole decode
        } else {
            size_t x = (size_t)(column - job->first_column) * job->tiling.tile_width;
            size_t y = (size_t)(row - job->first_row) * job->tiling.tile_height;
            size_t w = job->rgb->width - x < view.width ? job->rgb->width - x : view.width;
            size_t h = job->rgb->height - y < view.height ? job->rgb->height - y : view.height;
            for (size_t line = 0; line < h; line++) {
                memcpy(job->rgb->data + (y + line) * job->rgb->stride + x * 3, view.data + line * view.stride, w * 3);
            }
        }
        if (tile) {
            heif_image_release(tile);
        }
        if (status != NR_CODEC_OK) {
            pthread_mutex_lock(&job->lock);
            if (job->status == NR_CODEC_OK) {
                job->status = status;
                snprintf(job->message, sizeof job->message, "%s", error.message ? error.message : "");
            }
            pthread_mutex_unlock(&job->lock);
        }
    }
}

/// Threads decoding a region's tiles at once, as libheif's own grid decode uses.
#define NR_HEIF_TILE_THREADS 4

int nr_heif_decode_region(nr_heif_decoder *decoder, int with_alpha, int left, int top, int width, int height,
    int *out_left, int *out_top, int *out_width, int *out_height) {
    if (!decoder || !decoder->handle || decoder->image || decoder->pixels || left < 0 || top < 0 || width <= 0
        || height <= 0) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    // A grid of 8-bit 4:2:0 tiles of even sizes without alpha, untransformed or only rotated by
    // even sides: there a tile's RGB is the whole decode's at the same pixels (nearest chroma
    // sample, no upsampling across tiles), and the rotation is done on the RGB as
    // `nr_heif_decode_heic` does it.
    struct nr_heif_step steps[NR_HEIF_MAX_STEPS];
    int count = nr_heif_steps(decoder, steps);
    int angle = count == 1 && steps[0].type == heif_item_property_type_transform_rotation ? steps[0].value : 0;
    enum heif_colorspace colorspace = heif_colorspace_undefined;
    enum heif_chroma chroma = heif_chroma_undefined;
    struct heif_image_tiling tiling;
    memset(&tiling, 0, sizeof tiling);
    if (with_alpha || count < 0 || count > 1 || (count == 1 && angle == 0)
        || heif_image_handle_has_alpha_channel(decoder->handle)
        || heif_image_handle_get_luma_bits_per_pixel(decoder->handle) != 8
        || heif_image_handle_get_chroma_bits_per_pixel(decoder->handle) != 8
        || heif_image_handle_get_preferred_decoding_colorspace(decoder->handle, &colorspace, &chroma).code
            != heif_error_Ok
        || colorspace != heif_colorspace_YCbCr || chroma != heif_chroma_420
        || heif_image_handle_get_image_tiling(decoder->handle, 0, &tiling).code != heif_error_Ok
        || tiling.num_columns * (uint64_t)tiling.num_rows < 2 || tiling.tile_width == 0 || tiling.tile_height == 0
        || nr_heif_tiles_misfit_chroma(&tiling, chroma) != 0 || (tiling.image_width & 1)
        || (tiling.image_height & 1)
        || (uint64_t)tiling.num_columns * tiling.tile_width < tiling.image_width
        || (uint64_t)tiling.num_rows * tiling.tile_height < tiling.image_height
        || (int)tiling.image_width != heif_image_handle_get_ispe_width(decoder->handle)
        || (int)tiling.image_height != heif_image_handle_get_ispe_height(decoder->handle)) {
        return -1;
    }
    uint32_t stored_width = tiling.image_width, stored_height = tiling.image_height;
    int turned = angle == 90 || angle == 270;
    uint32_t upright_width = turned ? stored_height : stored_width;
    uint32_t upright_height = turned ? stored_width : stored_height;
    if ((uint64_t)left + (uint64_t)width > upright_width || (uint64_t)top + (uint64_t)height > upright_height) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    uint32_t rect[4] = {(uint32_t)left, (uint32_t)top, (uint32_t)width, (uint32_t)height};
    nr_heif_rotate_rect(angle, 1, stored_width, stored_height, rect);
    struct nr_heif_tile_job job;
    memset(&job, 0, sizeof job);
    job.decoder = decoder;
    job.tiling = tiling;
    job.first_column = rect[0] / tiling.tile_width;
    job.first_row = rect[1] / tiling.tile_height;
    job.columns = (rect[0] + rect[2] - 1) / tiling.tile_width - job.first_column + 1;
    job.rows = (rect[1] + rect[3] - 1) / tiling.tile_height - job.first_row + 1;
    uint32_t x0 = job.first_column * tiling.tile_width, y0 = job.first_row * tiling.tile_height;
    uint32_t x1 = (job.first_column + job.columns) * tiling.tile_width;
    uint32_t y1 = (job.first_row + job.rows) * tiling.tile_height;
    x1 = x1 > stored_width ? stored_width : x1;
    y1 = y1 > stored_height ? stored_height : y1;
    if (job.columns * job.rows == tiling.num_columns * tiling.num_rows) {
        return -1;  // every tile: the whole decode
    }
    struct nr_plane rgb = {0};
    if (!nr_plane_alloc(&rgb, x1 - x0, y1 - y0, 3)) {
        snprintf(decoder->message, sizeof decoder->message, "no memory for the decoded image");
        return NR_CODEC_NO_MEMORY;
    }
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) {
        nr_plane_free(&rgb);
        snprintf(decoder->message, sizeof decoder->message, "no memory for libheif's options");
        return NR_CODEC_NO_MEMORY;
    }
    options->ignore_transformations = 1;
    job.options = options;
    job.rgb = &rgb;
    job.status = NR_CODEC_OK;
    pthread_mutex_init(&job.lock, NULL);
    pthread_t threads[NR_HEIF_TILE_THREADS];
    int started = 0;
    uint32_t wanted = job.columns * job.rows < NR_HEIF_TILE_THREADS ? job.columns * job.rows : NR_HEIF_TILE_THREADS;
    for (uint32_t index = 1; index < wanted; index++) {
        if (pthread_create(&threads[started], NULL, nr_heif_tile_worker, &job) == 0) {
            started++;
        }
    }
    nr_heif_tile_worker(&job);
    for (int index = 0; index < started; index++) {
        pthread_join(threads[index], NULL);
    }
    pthread_mutex_destroy(&job.lock);
    heif_decoding_options_free(options);
    if (job.status != NR_CODEC_OK) {
        nr_plane_free(&rgb);
        if (job.status != -1) {
            snprintf(decoder->message, sizeof decoder->message, "%s", job.message[0] ? job.message : "libheif error");
        }
        return job.status;
    }
    struct heif_image *none = NULL;
    int status = nr_heif_apply_rgb(decoder, steps, 0, count, &rgb);
    status = nr_heif_finish(decoder, status, &rgb, &none);
    if (status == NR_CODEC_OK) {
        uint32_t decoded[4] = {x0, y0, x1 - x0, y1 - y0};
        nr_heif_rotate_rect(angle, 0, stored_width, stored_height, decoded);
        *out_left = (int)decoded[0];
        *out_top = (int)decoded[1];
        *out_width = decoder->width;
        *out_height = decoder->height;
    }
    return status;
}
