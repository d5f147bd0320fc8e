// The photo formats beyond JPEG and PNG, each over Debian's own library: WebP (libwebp and
// libwebpdemux), GIF (giflib), TIFF (libtiff) and HEIF/AVIF (libheif, with its HEVC and AV1
// decoders). Same conventions as CImageCodecs.h: reads only from the memory block given, never
// past `size`; statuses are NR_CODEC_*; messages are copied into a buffer of
// NR_CODEC_MESSAGE_SIZE bytes; nothing is printed. Each decoder reports the image's size
// before any pixel memory exists, so that the caller can refuse a decompression bomb first;
// the pixel memory is the caller's.
#ifndef NETRUNNER_NR_FORMATS_H
#define NETRUNNER_NR_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The versions of the four libraries the process runs with, as text ("libwebp 1.2.4, ...").
void nr_formats_versions(char *out, size_t size);

// MARK: WebP

/// Reads a WebP file's header: the canvas size, whether it has alpha, and whether it is an
/// animation (then the first frame is what `nr_webp_decode` gives, composed on the canvas).
int nr_webp_info(const uint8_t *data, size_t size, int *width, int *height, int *has_alpha, int *animated,
    char *message);

/// Decodes the still image, or the first frame of an animation, as 8-bit RGB or (`with_alpha`)
/// straight RGBA into `pixels` (the size `nr_webp_info` gave; rows of `bytes_per_row`). A still
/// can be decoded scaled to `scaled_width` x `scaled_height` (libwebp's rescaler; 0 and 0 for
/// the stored size); an animation cannot.
int nr_webp_decode(const uint8_t *data, size_t size, int with_alpha, int scaled_width, int scaled_height,
    uint8_t *pixels, size_t bytes_per_row, size_t capacity, char *message);

// MARK: GIF

/// Reads a GIF's logical screen size.
int nr_gif_info(const uint8_t *data, size_t size, int *width, int *height, char *message);

/// Decodes the first frame onto the logical screen as 8-bit RGB, as Pillow does: pixels the
/// frame does not cover take the colour of the frame's transparent index if it has one, else of
/// index 0; colours come from the frame's local colour table, else the global one, else grey.
/// A frame reaching past the screen is cropped to it; one whose rows to read (its width times
/// the rows up to the screen's last, or all of an interlaced frame's) pass `max_pixels` is
/// refused with NR_CODEC_UNSUPPORTED before any row is decompressed.
int nr_gif_decode(const uint8_t *data, size_t size, uint64_t max_pixels, uint8_t *pixels, size_t bytes_per_row,
    size_t capacity, char *message);

// MARK: TIFF

/// Reads the first directory of a TIFF: its size, samples per pixel of the decoded layout (1
/// grey, 3 RGB, 4 RGBA) and the Orientation tag (1...8, 1 when absent). Refuses with
/// NR_CODEC_UNSUPPORTED, naming what it found, everything but 8-bit contiguous grey, RGB and
/// RGB with one extra (alpha) sample, and JPEG-compressed YCbCr.
int nr_tiff_info(const uint8_t *data, size_t size, int *width, int *height, int *samples, int *orientation,
    char *message);

/// Decodes the first directory's pixels, in the layout `nr_tiff_info` gave (1, 3 or 4 bytes
/// per pixel), into `pixels`.
int nr_tiff_decode(const uint8_t *data, size_t size, uint8_t *pixels, size_t bytes_per_row, size_t capacity,
    char *message);

// MARK: HEIF and AVIF

/// An open HEIF/AVIF file (opaque): the primary image of a libheif context.
typedef struct nr_heif_decoder nr_heif_decoder;

/// Opens the file and its primary image, with libheif's security limits set: images of more
/// than `max_pixels` pixels and grids of more than `max_tiles` tiles are refused by libheif
/// before decoding. NULL only without memory; otherwise check `*status`.
nr_heif_decoder *nr_heif_open(const uint8_t *data, size_t size, uint64_t max_pixels, uint64_t max_tiles,
    int *status);

/// The message of the last failure, or "".
const char *nr_heif_message(const nr_heif_decoder *decoder);

/// Frees the decoder and the decoded image; NULL is allowed.
void nr_heif_close(nr_heif_decoder *decoder);

/// The primary image's size as it will be displayed (rotation, mirroring and crop applied),
/// and whether it has an alpha channel.
void nr_heif_header(const nr_heif_decoder *decoder, int *width, int *height, int *has_alpha);

/// Decodes the smallest thumbnail (`thmb`) of the primary image instead of the image itself, when
/// one is at least `min_width` x `min_height` after its transformations, smaller than the image,
/// of the image's shape (to within two of the thumbnail's pixels) and with alpha as the image has
/// it. Returns 1 and the thumbnail's size when one is chosen (`nr_heif_header` and
/// `nr_heif_tiling` then describe it), 0 when none is (nothing changes). Call before
/// `nr_heif_decode`.
int nr_heif_use_thumbnail(nr_heif_decoder *decoder, uint32_t min_width, uint32_t min_height, int *width,
    int *height);

/// The size `nr_heif_decode` will really produce and the tiles it will decode: for a grid, its
/// descriptor's output size (which may differ from the `ispe` size of `nr_heif_header`), its
/// tile count and the size of one tile; for a single image, its size and 1 tile of that size.
/// `misfit_chroma` is 420 or 422 when the image is a grid whose coded tiles have a side that
/// chroma subsampling halves (an odd width with 4:2:0 or 4:2:2, an odd height with 4:2:0):
/// libheif 1.19 pastes such tiles' chroma past the end of its plane (a heap overflow), so the
/// caller refuses the file; 0 otherwise.
int nr_heif_tiling(nr_heif_decoder *decoder, uint32_t *width, uint32_t *height, uint32_t *tiles,
    uint32_t *tile_width, uint32_t *tile_height, int *misfit_chroma);

/// Decodes the primary image with its transformations applied, as 8-bit RGB or RGBA, and
/// reports the decoded size (the caller allocates for it, then calls `nr_heif_copy`). The RGB
/// is pillow-heif's (libheif 1.23) for a HEIC, Pillow's (libavif and libyuv) when `as_libavif`.
int nr_heif_decode(nr_heif_decoder *decoder, int with_alpha, int as_libavif, int *width, int *height);

/// Decodes only the grid tiles of the primary image that cover the rectangle (in the pixels of
/// the image as displayed), instead of `nr_heif_decode`, and reports the rectangle decoded
/// (whole tiles, turned as the image is): its pixels are those a whole decode gives there.
/// Returns -1 when it would decode every tile or the file is not one it handles (not a grid of
/// 8-bit 4:2:0 tiles of even sizes without alpha, untransformed or only rotated; AVIF's RGB is
/// not libheif's): call `nr_heif_decode` then.
int nr_heif_decode_region(nr_heif_decoder *decoder, int with_alpha, int left, int top, int width, int height,
    int *out_left, int *out_top, int *out_width, int *out_height);

/// Copies the decoded image's rows into `pixels`.
int nr_heif_copy(nr_heif_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
