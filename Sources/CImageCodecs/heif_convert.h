// The HEIF shim's own pixel work, which needs no libheif call: planes of 8-bit samples (ours or
// views of libheif's), their crop, rotation and mirror, and the YCbCr to RGB conversions done as
// libheif 1.23.6 (HEIC) and libavif 1.4.2 with libyuv (AVIF) do them (see heif_decode.c for why).
// Private to CImageCodecs: heif_decode.c, heif_region.c and heif_convert.c.
#ifndef NETRUNNER_HEIF_CONVERT_H
#define NETRUNNER_HEIF_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <libheif/heif.h>

/// One plane of `bytes`-byte pixels (1 for Y, Cb, Cr and alpha; 3 or 4 for interleaved RGB),
/// `stride` bytes apart: ours (`owned`), or a view of a libheif image's plane.
struct nr_plane {
    uint8_t *data;
    size_t stride;
    uint32_t width;
    uint32_t height;
    uint32_t bytes;
    int owned;
};

/// libyuv's fixed-point YCbCr to RGB constants (its `YuvConstants`): Y scale and bias, then
/// the Cb and Cr contributions, all x64.
struct nr_yuv_constants {
    int yg, yb, ub, ug, vg, vr;
};

void nr_plane_free(struct nr_plane *plane);

int nr_plane_alloc(struct nr_plane *plane, uint32_t width, uint32_t height, uint32_t bytes);

/// Keeps columns `left` to `right` and rows `top` to `bottom` (inclusive, inside the plane).
int nr_plane_crop(struct nr_plane *plane, uint32_t left, uint32_t top, uint32_t right, uint32_t bottom);

/// Rotates counter-clockwise by 90, 180 or 270 degrees, as libheif's `rotate_ccw`.
int nr_plane_rotate(struct nr_plane *plane, int angle);

/// Mirrors in place: left to right (`horizontal`), else top to bottom.
void nr_plane_mirror(struct nr_plane *plane, int horizontal);

/// libheif 1.23.6's bilinear 4:2:0 to 4:4:4 chroma upsampling (`Op_YCbCr420_bilinear_to_YCbCr444`,
/// whose border rows and columns 1.19 reads from the wrong samples), for a `width` x `height` image.
int nr_upsample_420_bilinear(struct nr_plane *chroma, uint32_t width, uint32_t height);

/// libheif's YCbCr to RGB coefficients for a matrix whose Kr and Kb are fixed (H.273), or its
/// defaults (BT.601) for an unspecified one; 0 for a matrix this file leaves to libheif.
int nr_heif_float_coefficients(int matrix, float *r_cr, float *g_cb, float *g_cr, float *b_cb);

/// Full-range 8-bit 4:4:4 YCbCr to interleaved RGB(A) as libheif's `Op_YCbCr_to_RGB<uint8_t>`
/// (floats). (A limited-range image is left to libheif: 1.23 makes its 4:4:4 copy full range
/// through conversions not followed here.)
void nr_ycbcr444_to_rgb_float(const struct nr_plane *luma, const struct nr_plane *cb, const struct nr_plane *cr,
    const struct nr_plane *alpha, float r_cr, float g_cb, float g_cr, float b_cb, struct nr_plane *rgb);

/// The constants libavif 1.4.2 hands libyuv for a matrix, range and primaries; 0 where it has
/// none (libavif then converts with its own code, and so does libheif here).
int nr_libyuv_constants(int matrix, int primaries, int full_range, struct nr_yuv_constants *k);

/// 8-bit YCbCr (4:2:0, 4:2:2 or 4:4:4) to interleaved RGB(A) as libavif 1.4.2 does through
/// libyuv with its default (bilinear) chroma upsampling.
int nr_ycbcr_to_rgb_libyuv(const struct nr_plane *luma, const struct nr_plane *cb, const struct nr_plane *cr,
    const struct nr_plane *alpha, enum heif_chroma chroma, const struct nr_yuv_constants *k, struct nr_plane *rgb);

#endif  // NETRUNNER_HEIF_CONVERT_H
