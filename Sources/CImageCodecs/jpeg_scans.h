// Which scans of a progressive JPEG a scaled decode reads: the file's scan script walked without
// decoding anything, and a copy of the file made without the scans it does not need (see
// `ProgressiveScans`). Private to CImageCodecs: jpeg_shim.c and jpeg_scans.c.
#ifndef NETRUNNER_JPEG_SCANS_H
#define NETRUNNER_JPEG_SCANS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

/// Files may not have more scans than this. Each scan of a progressive JPEG is one more pass
/// over the whole image's coefficients, and an empty scan takes a few bytes, so a small
/// hostile file with hundreds of scans ("scan bomb") costs hundreds of full passes. Encoders
/// write far fewer: libjpeg's and Pillow's progressive scripts 10 (6 for grey), mozjpeg's
/// optimised ones a few dozen at most; libjpeg-turbo's own tools consider 500 unreasonable.
#define NR_JPEG_MAX_SCANS 100

/// Copies the progressive JPEG `data` into `out` (room for `size` bytes) without the scans a
/// decode needs none of: a scan is kept when it carries a coefficient in the top-left
/// `corners[c]`x`corners[c]` of a block of its component `c` and, for a refinement scan, when
/// every scan before it that it refines was kept (a refinement decoded against other history
/// would be garbage). Every
/// marker other than a dropped scan is copied as it is, so a file cut short stays cut short.
/// Returns the new size, or 0 when nothing is dropped or the file does anything unusual
/// (more than NR_JPEG_MAX_SCANS scans, an inconsistent progression, bytes between markers,
/// an unknown or repeated component id, a dropped scan cut short by the end of the data or
/// followed by an end of image with bytes after it, block smoothing that would tell the two
/// reads apart): libjpeg then reads the whole file and judges it. `*smoothing` says whether
/// the copy may smooth blocks as `info` says (1) or must not (0: a read of every scan would
/// not), so that the copy's pixels at 1x1 are those of a read of every scan.
size_t nr_jpeg_keep_scans(const uint8_t *data, size_t size, const struct jpeg_decompress_struct *info,
    const int *corners, uint8_t *out, int *smoothing);

#endif
