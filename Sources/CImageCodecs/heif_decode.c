// The primary image of a HEIF (HEIC) or AVIF decoded as Python's readers decode it
// (`nr_heif_decode`): the planes viewed, the transformations read and applied, the YCbCr
// converted; the decoder itself (opening, limits, thumbnails, the copy out) is heif_shim.c's.
//
// The same RGB as Python's readers, byte for byte (tools/images/make_format_fixtures.py): the
// coded YCbCr is the same (HEVC and AV1 decoding are normative), so what differs is the
// conversion to RGB, which is done here (its pixel work in heif_convert.c) where libheif 1.19's
// differs:
//
// - HEIC, as pillow-heif 1.8.1 (libheif 1.23.6, default decoding options: the nearest chroma
//   sample for 4:2:0 to RGB). libheif 1.19 converts alike, but where a transformation meets an
//   odd size of subsampled chroma (a rotation, a mirror or a crop of 4:2:0 with an odd side or
//   offset) libheif upsamples the chroma to 4:4:4 first, and 1.19's bilinear upsampler reads
//   the wrong chroma samples along the image's borders (fixed in 1.23.6); 1.19 also keeps the
//   wrong chroma after a clean-aperture crop and a rotation of an odd side. So a transformed
//   HEIC is decoded untransformed, and its transformations are applied here: on the RGB where
//   no step needs 4:4:4 (each step then commutes with the nearest-sample conversion), else on
//   the YCbCr planes up to that step, upsampled as 1.23.6 does, converted with libheif's
//   floating-point arithmetic, then on the RGB.
// - AVIF, as Pillow 13 (libavif 1.4.2 with its libyuv: chroma upsampled bilinearly, libyuv's
//   fixed-point matrices). The YCbCr is converted here with the same arithmetic, then the
//   transformations are applied to the RGB (Pillow turns irot and imir into the EXIF
//   orientation, which the reference transposes after the conversion).
// Other layouts are converted by libheif, as before, and may differ from Python's: a HEIC in
// limited range, of more than 8 bits or 4:2:2 whose transformation needs 4:4:4 (1.23 makes that
// copy full range through conversions not followed here); an AVIF of more than 8 bits, with
// premultiplied alpha or a matrix libyuv lacks. An AVIF's clean aperture is applied (Pillow
// ignores it). The pixels of a view into libheif's image are turned in place or copied once.
#include "heif_shim.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>
#include <libheif/heif_items.h>
#include <libheif/heif_properties.h>

// MARK: Planes

/// A view of one of libheif's 8-bit planes (or its interleaved RGB), valid while the image is.
int nr_plane_view(struct nr_plane *plane, struct heif_image *image, enum heif_channel channel, uint32_t bytes) {
    int stride = 0;
    uint8_t *data = heif_image_get_plane(image, channel, &stride);
    int width = heif_image_get_width(image, channel);
    int height = heif_image_get_height(image, channel);
    memset(plane, 0, sizeof *plane);
    if (!data || width <= 0 || height <= 0 || stride <= 0 || (size_t)stride < (size_t)width * bytes
        || heif_image_get_bits_per_pixel_range(image, channel) != 8) {
        return 0;
    }
    *plane = (struct nr_plane){data, (size_t)stride, (uint32_t)width, (uint32_t)height, bytes, 0};
    return 1;
}

// MARK: Transformations

/// The primary image's transformations in order; -1 when there are too many or one is invalid.
int nr_heif_steps(const struct nr_heif_decoder *decoder, struct nr_heif_step *steps) {
    heif_item_id item = heif_image_handle_get_item_id(decoder->handle);
    int count = heif_item_get_transformation_properties(decoder->context, item, NULL, 0);
    if (count < 0 || count > NR_HEIF_MAX_STEPS) {
        return -1;
    }
    heif_property_id ids[NR_HEIF_MAX_STEPS];
    count = heif_item_get_transformation_properties(decoder->context, item, ids, count);
    for (int index = 0; index < count; index++) {
        steps[index].property = ids[index];
        steps[index].type = heif_item_get_property_type(decoder->context, item, ids[index]);
        steps[index].value = 0;
        if (steps[index].type == heif_item_property_type_transform_rotation) {
            steps[index].value = heif_item_get_property_transform_rotation_ccw(decoder->context, item, ids[index]);
            if (steps[index].value != 0 && steps[index].value != 90 && steps[index].value != 180
                && steps[index].value != 270) {
                return -1;
            }
        } else if (steps[index].type == heif_item_property_type_transform_mirror) {
            enum heif_transform_mirror_direction direction =
                heif_item_get_property_transform_mirror(decoder->context, item, ids[index]);
            if (direction == heif_transform_mirror_direction_invalid) {
                return -1;
            }
            steps[index].value = direction == heif_transform_mirror_direction_horizontal;
        } else if (steps[index].type != heif_item_property_type_transform_crop) {
            return -1;
        }
    }
    return count;
}

/// The rectangle a clean aperture keeps of a `width` x `height` image, as libheif computes and
/// clamps it; 0 when it is empty.
static int nr_heif_crop_rectangle(const struct nr_heif_decoder *decoder, heif_property_id property, uint32_t width,
    uint32_t height, uint32_t *left, uint32_t *top, uint32_t *right, uint32_t *bottom) {
    int l = 0, t = 0, r = 0, b = 0;
    heif_item_get_property_transform_crop_borders(decoder->context, heif_image_handle_get_item_id(decoder->handle),
        property, (int)width, (int)height, &l, &t, &r, &b);
    int64_t x0 = l, y0 = t, x1 = (int64_t)width - 1 - r, y1 = (int64_t)height - 1 - b;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= (int64_t)width ? (int64_t)width - 1 : x1;
    y1 = y1 >= (int64_t)height ? (int64_t)height - 1 : y1;
    if (x0 > x1 || y0 > y1) {
        return 0;
    }
    *left = (uint32_t)x0;
    *top = (uint32_t)y0;
    *right = (uint32_t)x1;
    *bottom = (uint32_t)y1;
    return 1;
}

/// Whether libheif 1.23 turns 4:2:0 chroma into 4:4:4 before this step, on an image of this size.
static int nr_heif_step_needs_444(const struct nr_heif_decoder *decoder, const struct nr_heif_step *step,
    uint32_t width, uint32_t height) {
    int odd_width = width & 1, odd_height = height & 1;
    switch (step->type) {
    case heif_item_property_type_transform_rotation:
        return (step->value == 90 && odd_width) || (step->value == 180 && (odd_width || odd_height))
            || (step->value == 270 && odd_height);
    case heif_item_property_type_transform_mirror: return odd_width || odd_height;
    default: {
        uint32_t left = 0, top = 0, right = 0, bottom = 0;
        return nr_heif_crop_rectangle(decoder, step->property, width, height, &left, &top, &right, &bottom)
            && ((left & 1) || (top & 1));
    }
    }
}

/// Applies one step to a plane of an image of this size (`subsampled`: a 4:2:0 chroma plane,
/// cropped as libheif 1.23 crops chroma). NR_CODEC_OK, NR_CODEC_NO_MEMORY, or -1 for a clean
/// aperture that keeps nothing (libheif's error then).
static int nr_heif_apply(const struct nr_heif_decoder *decoder, const struct nr_heif_step *step,
    struct nr_plane *plane, uint32_t width, uint32_t height, int subsampled) {
    switch (step->type) {
    case heif_item_property_type_transform_rotation:
        return nr_plane_rotate(plane, step->value) ? NR_CODEC_OK : NR_CODEC_NO_MEMORY;
    case heif_item_property_type_transform_mirror: nr_plane_mirror(plane, step->value); return NR_CODEC_OK;
    default: {
        uint32_t left = 0, top = 0, right = 0, bottom = 0;
        if (!nr_heif_crop_rectangle(decoder, step->property, width, height, &left, &top, &right, &bottom)) {
            return -1;
        }
        int shift = subsampled ? 1 : 0;
        int kept = nr_plane_crop(plane, left >> shift, top >> shift, right >> shift, bottom >> shift);
        return kept ? NR_CODEC_OK : NR_CODEC_NO_MEMORY;
    }
    }
}

/// Applies the steps from `first` to an interleaved RGB(A) plane.
int nr_heif_apply_rgb(nr_heif_decoder *decoder, const struct nr_heif_step *steps, int first, int count,
    struct nr_plane *rgb) {
    int status = NR_CODEC_OK;
    for (int index = first; index < count && status == NR_CODEC_OK; index++) {
        status = nr_heif_apply(decoder, &steps[index], rgb, rgb->width, rgb->height, 0);
    }
    return status;
}

/// Hands the RGB(A) over as the answer: ours, or libheif's image that it views.
int nr_heif_finish(nr_heif_decoder *decoder, int status, struct nr_plane *rgb, struct heif_image **image) {
    if (status == NR_CODEC_NO_MEMORY) {
        snprintf(decoder->message, sizeof decoder->message, "no memory for the decoded image");
    }
    if (status == NR_CODEC_OK) {
        decoder->width = (int)rgb->width;
        decoder->height = (int)rgb->height;
        decoder->channels = (int)rgb->bytes;
        if (rgb->owned) {
            decoder->pixels = rgb->data;
            rgb->data = NULL;
            rgb->owned = 0;
        } else {
            decoder->image = *image;
            *image = NULL;
        }
    }
    nr_plane_free(rgb);
    if (*image) {
        heif_image_release(*image);
        *image = NULL;
    }
    return status;
}

/// The size after a step.
static void nr_heif_step_size(const struct nr_heif_decoder *decoder, const struct nr_heif_step *step,
    uint32_t *width, uint32_t *height) {
    if (step->type == heif_item_property_type_transform_rotation && (step->value == 90 || step->value == 270)) {
        uint32_t swap = *width;
        *width = *height;
        *height = swap;
    } else if (step->type == heif_item_property_type_transform_crop) {
        uint32_t left = 0, top = 0, right = 0, bottom = 0;
        if (nr_heif_crop_rectangle(decoder, step->property, *width, *height, &left, &top, &right, &bottom)) {
            *width = right - left + 1;
            *height = bottom - top + 1;
        }
    }
}

// MARK: Decoding

/// Decodes the untransformed image as libheif `colorspace`/`chroma`, with the options pillow-heif
/// passes (libheif's defaults).
static int nr_heif_decode_untransformed(nr_heif_decoder *decoder, enum heif_colorspace colorspace,
    enum heif_chroma chroma, struct heif_image **image) {
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) {
        snprintf(decoder->message, sizeof decoder->message, "no memory for libheif's options");
        return NR_CODEC_NO_MEMORY;
    }
    options->ignore_transformations = 1;
    struct heif_error error = heif_decode_image(decoder->handle, image, colorspace, chroma, options);
    heif_decoding_options_free(options);
    if (error.code != heif_error_Ok) {
        *image = NULL;
        return nr_heif_fail(decoder, error);
    }
    return NR_CODEC_OK;
}

/// The nclx values the coded image carries (libheif's defaults without any).
static void nr_heif_nclx(const struct heif_image *image, int *matrix, int *primaries, int *full_range) {
    *matrix = 2;
    *primaries = 2;
    *full_range = 1;
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_get_nclx_color_profile(image, &nclx).code == heif_error_Ok && nclx) {
        *matrix = (int)nclx->matrix_coefficients;
        *primaries = (int)nclx->color_primaries;
        *full_range = nclx->full_range_flag;
        heif_nclx_color_profile_free(nclx);
    }
}

/// AVIF as Pillow: 8-bit YCbCr converted with libyuv's arithmetic, then transformed. Returns -1
/// to leave the file to libheif.
static int nr_heif_decode_avif(nr_heif_decoder *decoder, int with_alpha, const struct nr_heif_step *steps, int count) {
    if (heif_image_handle_get_luma_bits_per_pixel(decoder->handle) != 8
        || heif_image_handle_get_chroma_bits_per_pixel(decoder->handle) != 8
        || (with_alpha && heif_image_handle_is_premultiplied_alpha(decoder->handle))) {
        return -1;
    }
    enum heif_colorspace colorspace = heif_colorspace_undefined;
    enum heif_chroma chroma = heif_chroma_undefined;
    if (heif_image_handle_get_preferred_decoding_colorspace(decoder->handle, &colorspace, &chroma).code
            != heif_error_Ok
        || colorspace != heif_colorspace_YCbCr
        || (chroma != heif_chroma_420 && chroma != heif_chroma_422 && chroma != heif_chroma_444)) {
        return -1;
    }
    struct heif_image *image = NULL;
    int status = nr_heif_decode_untransformed(decoder, heif_colorspace_YCbCr, chroma, &image);
    if (status != NR_CODEC_OK) {
        return status;
    }
    int matrix, primaries, full_range;
    nr_heif_nclx(image, &matrix, &primaries, &full_range);
    struct nr_yuv_constants k;
    struct nr_plane luma, cb, cr, alpha, rgb = {0};
    int have_alpha = with_alpha && heif_image_has_channel(image, heif_channel_Alpha);
    status = NR_CODEC_OK;
    if (heif_image_get_chroma_format(image) != chroma || !nr_libyuv_constants(matrix, primaries, full_range, &k)
        || !nr_plane_view(&luma, image, heif_channel_Y, 1) || !nr_plane_view(&cb, image, heif_channel_Cb, 1)
        || !nr_plane_view(&cr, image, heif_channel_Cr, 1)
        || (have_alpha
            && (!nr_plane_view(&alpha, image, heif_channel_Alpha, 1) || alpha.width != luma.width
                || alpha.height != luma.height))) {
        status = -1;
    } else if (!nr_plane_alloc(&rgb, luma.width, luma.height, with_alpha ? 4 : 3)) {
        status = NR_CODEC_NO_MEMORY;
    } else if (!nr_ycbcr_to_rgb_libyuv(&luma, &cb, &cr, have_alpha ? &alpha : NULL, chroma, &k, &rgb)) {
        status = -1;
    }
    if (status == NR_CODEC_OK) {
        status = nr_heif_apply_rgb(decoder, steps, 0, count, &rgb);
    }
    return nr_heif_finish(decoder, status, &rgb, &image);
}

/// A transformed HEIC as pillow-heif's libheif 1.23.6: see the top of this file. Returns -1 to
/// leave the file to libheif.
static int nr_heif_decode_heic(nr_heif_decoder *decoder, int with_alpha, const struct nr_heif_step *steps, int count) {
    enum heif_colorspace colorspace = heif_colorspace_undefined;
    enum heif_chroma chroma = heif_chroma_undefined;
    if (heif_image_handle_get_preferred_decoding_colorspace(decoder->handle, &colorspace, &chroma).code
        != heif_error_Ok) {
        return -1;
    }
    if (colorspace == heif_colorspace_YCbCr && chroma == heif_chroma_422) {
        return -1;  // libheif's 4:2:2 rules and upsampler, not followed here
    }
    // The untransformed size, as the file declares it (checked against the decode below), and
    // the first step that needs 4:4:4 chroma (`count` if none).
    int ispe_width = heif_image_handle_get_ispe_width(decoder->handle);
    int ispe_height = heif_image_handle_get_ispe_height(decoder->handle);
    if (ispe_width <= 0 || ispe_height <= 0) {
        return -1;
    }
    uint32_t width = (uint32_t)ispe_width, height = (uint32_t)ispe_height;
    int first = count;
    if (colorspace == heif_colorspace_YCbCr && chroma == heif_chroma_420) {
        uint32_t w = width, h = height;
        for (int index = 0; index < count && first == count; index++) {
            if (nr_heif_step_needs_444(decoder, &steps[index], w, h)) {
                first = index;
            }
            nr_heif_step_size(decoder, &steps[index], &w, &h);
        }
    }
    uint32_t bytes = with_alpha ? 4 : 3;
    struct nr_plane rgb = {0};
    struct heif_image *image = NULL;
    int status;
    if (first == count) {
        // No step needs 4:4:4: each commutes with the nearest-sample conversion.
        status = nr_heif_decode_untransformed(decoder, heif_colorspace_RGB,
            with_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &image);
        if (status != NR_CODEC_OK) {
            return status;
        }
        status = nr_plane_view(&rgb, image, heif_channel_interleaved, bytes) && rgb.width == width
                && rgb.height == height
            ? nr_heif_apply_rgb(decoder, steps, 0, count, &rgb)
            : -1;
        return nr_heif_finish(decoder, status, &rgb, &image);
    }
    if (with_alpha || heif_image_handle_get_luma_bits_per_pixel(decoder->handle) != 8
        || heif_image_handle_get_chroma_bits_per_pixel(decoder->handle) != 8) {
        return -1;
    }
    struct heif_color_profile_nclx *declared = NULL;
    if (heif_image_handle_get_nclx_color_profile(decoder->handle, &declared).code == heif_error_Ok && declared) {
        int limited = !declared->full_range_flag;
        heif_nclx_color_profile_free(declared);
        if (limited) {
            return -1;  // known before decoding (also checked on the decoded image)
        }
    }
    status = nr_heif_decode_untransformed(decoder, heif_colorspace_YCbCr, heif_chroma_420, &image);
    if (status != NR_CODEC_OK) {
        return status;
    }
    int matrix, primaries, full_range;
    float r_cr, g_cb, g_cr, b_cb;
    nr_heif_nclx(image, &matrix, &primaries, &full_range);
    struct nr_plane luma, cb, cr;
    status = NR_CODEC_OK;
    if (!full_range || !nr_heif_float_coefficients(matrix, &r_cr, &g_cb, &g_cr, &b_cb)
        || heif_image_get_chroma_format(image) != heif_chroma_420 || !nr_plane_view(&luma, image, heif_channel_Y, 1)
        || !nr_plane_view(&cb, image, heif_channel_Cb, 1) || !nr_plane_view(&cr, image, heif_channel_Cr, 1)
        || luma.width != width || luma.height != height) {
        status = -1;
        memset(&luma, 0, sizeof luma);
        memset(&cb, 0, sizeof cb);
        memset(&cr, 0, sizeof cr);
    }
    // The steps before the first that needs 4:4:4, on the planes (in place on libheif's).
    uint32_t w = width, h = height;
    for (int index = 0; index < first && status == NR_CODEC_OK; index++) {
        status = nr_heif_apply(decoder, &steps[index], &luma, w, h, 0);
        if (status == NR_CODEC_OK) {
            status = nr_heif_apply(decoder, &steps[index], &cb, w, h, 1);
        }
        if (status == NR_CODEC_OK) {
            status = nr_heif_apply(decoder, &steps[index], &cr, w, h, 1);
        }
        nr_heif_step_size(decoder, &steps[index], &w, &h);
    }
    if (status == NR_CODEC_OK && (luma.width != w || luma.height != h)) {
        status = -1;
    }
    if (status == NR_CODEC_OK
        && (!nr_upsample_420_bilinear(&cb, w, h) || !nr_upsample_420_bilinear(&cr, w, h)
            || !nr_plane_alloc(&rgb, w, h, bytes))) {
        status = NR_CODEC_NO_MEMORY;
    }
    if (status == NR_CODEC_OK) {
        nr_ycbcr444_to_rgb_float(&luma, &cb, &cr, NULL, r_cr, g_cb, g_cr, b_cb, &rgb);
        status = nr_heif_apply_rgb(decoder, steps, first, count, &rgb);
    }
    nr_plane_free(&luma);
    nr_plane_free(&cb);
    nr_plane_free(&cr);
    return nr_heif_finish(decoder, status, &rgb, &image);
}

int nr_heif_decode(nr_heif_decoder *decoder, int with_alpha, int as_libavif, int *width, int *height) {
    if (!decoder || !decoder->handle || decoder->image || decoder->pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_heif_step steps[NR_HEIF_MAX_STEPS];
    int count = nr_heif_steps(decoder, steps);
    int status = -1;
    if (count >= 0 && as_libavif) {
        status = nr_heif_decode_avif(decoder, with_alpha, steps, count);
    } else if (count > 0) {
        status = nr_heif_decode_heic(decoder, with_alpha, steps, count);
    }
    if (status == NR_CODEC_OK) {
        *width = decoder->width;
        *height = decoder->height;
        return NR_CODEC_OK;
    }
    if (status != -1) {
        return status;
    }
    // libheif's own decode: an untransformed HEIC (its conversion is pillow-heif's), or a layout
    // left to it.
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
    decoder->width = *width;
    decoder->height = *height;
    decoder->channels = with_alpha ? 4 : 3;
    return NR_CODEC_OK;
}
