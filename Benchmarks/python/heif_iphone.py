#!/usr/bin/env python3
"""Writes a HEIC laid out as an iPhone writes one: the photo as a grid of 512x512 HEVC tiles
(the grid's own output size the photo's, the last row and column cropped) and a 320-pixel HEVC
thumbnail (`thmb`) made by an antialiased resize, through libheif's own encoding API (Debian's
libheif 1.19.7 from bookworm-backports with its x265 plugin, libheif-plugin-x265), by ctypes.

pillow-heif 1.8 writes neither grids nor thumbnails, and Debian's heif-enc scales a thumbnail
without filtering (and, from tiled input, from the first tile only): neither is what a phone
writes.

Usage: python heif_iphone.py SOURCE.jpg OUT.heic [--quality 75] [--preset ultrafast]
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util

import numpy as np
from PIL import Image, ImageOps

TILE = 512
THUMBNAIL = 320

HEVC, RGB, INTERLEAVED_RGB, INTERLEAVED = 1, 1, 10, 10


class HeifError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("subcode", ctypes.c_int), ("message", ctypes.c_char_p)]


def library() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("heif") or "libheif.so.1")
    p = ctypes.c_void_p
    for name, args in {
        "heif_context_get_encoder_for_format": [p, ctypes.c_int, ctypes.POINTER(p)],
        "heif_encoder_set_lossy_quality": [p, ctypes.c_int],
        "heif_encoder_set_parameter_string": [p, ctypes.c_char_p, ctypes.c_char_p],
        "heif_image_create": [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(p)],
        "heif_image_add_plane": [p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int],
        "heif_context_add_grid_image": [p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, p,
                                        ctypes.POINTER(p)],
        "heif_context_add_image_tile": [p, p, ctypes.c_uint32, ctypes.c_uint32, p, p],
        "heif_context_encode_image": [p, p, p, p, ctypes.POINTER(p)],
        "heif_context_assign_thumbnail": [p, p, p],
        "heif_item_add_raw_property": [p, ctypes.c_uint32, ctypes.c_uint32, p, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_uint32)],
        "heif_context_set_primary_image": [p, p],
        "heif_context_write_to_file": [p, ctypes.c_char_p],
    }.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = args, HeifError
    lib.heif_init.argtypes, lib.heif_init.restype = [p], HeifError
    check(lib.heif_init(None), "init")  # loads the plugins (x265)
    lib.heif_context_alloc.restype = p
    lib.heif_encoding_options_alloc.restype = p
    lib.heif_encoding_options_free.argtypes = [p]
    lib.heif_image_handle_get_item_id.argtypes, lib.heif_image_handle_get_item_id.restype = [p], ctypes.c_uint32
    lib.heif_image_get_plane.argtypes = [p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.heif_image_get_plane.restype = ctypes.POINTER(ctypes.c_uint8)
    for name in ("heif_context_free", "heif_encoder_release", "heif_image_release", "heif_image_handle_release"):
        getattr(lib, name).argtypes = [p]
    return lib


def check(error: HeifError, what: str) -> None:
    if error.code != 0:
        raise RuntimeError(f"libheif: {what}: {error.message.decode(errors='replace')}")


def heif_image(lib: ctypes.CDLL, pixels: np.ndarray) -> ctypes.c_void_p:
    """A libheif RGB image holding `pixels` (height x width x 3, uint8)."""
    height, width, _ = pixels.shape
    image = ctypes.c_void_p()
    check(lib.heif_image_create(width, height, RGB, INTERLEAVED_RGB, ctypes.byref(image)), "image")
    check(lib.heif_image_add_plane(image, INTERLEAVED, width, height, 8), "plane")
    stride = ctypes.c_int()
    plane = lib.heif_image_get_plane(image, INTERLEAVED, ctypes.byref(stride))
    rows = np.ctypeslib.as_array(plane, shape=(height, stride.value))
    rows[:, :width * 3] = pixels.reshape(height, width * 3)
    return image


def write(photo: Image.Image, path: str, quality: int = 75, preset: str = "ultrafast", tile: int = TILE,
          orientation: int = 1, thumbnail_size: int = THUMBNAIL) -> None:
    """Writes `photo` (RGB, as stored) to `path` as an iPhone-like HEIC: a grid of `tile` x `tile`
    tiles, shown turned as the EXIF `orientation` (1, 3, 6 or 8) says, as an iPhone writes a
    portrait photo: the sensor's landscape grid with an `irot` (written as a raw property:
    libheif 1.19's encoding option for it turns each tile of a grid on its own), and an upright
    thumbnail."""
    lib = library()
    context = lib.heif_context_alloc()
    encoder = ctypes.c_void_p()
    # libheif 1.19's grid dereferences its options: the defaults, allocated.
    options = lib.heif_encoding_options_alloc()
    images = []
    try:
        check(lib.heif_context_get_encoder_for_format(context, HEVC, ctypes.byref(encoder)), "encoder")
        check(lib.heif_encoder_set_lossy_quality(encoder, quality), "quality")
        check(lib.heif_encoder_set_parameter_string(encoder, b"preset", preset.encode()), "preset")
        width, height = photo.size
        columns, rows = -(-width // tile), -(-height // tile)
        grid = ctypes.c_void_p()
        check(lib.heif_context_add_grid_image(context, width, height, columns, rows, options, ctypes.byref(grid)),
              "grid")
        pixels = np.asarray(photo, dtype=np.uint8)
        for row in range(rows):
            for column in range(columns):
                block = np.zeros((tile, tile, 3), dtype=np.uint8)
                part = pixels[row * tile:(row + 1) * tile, column * tile:(column + 1) * tile]
                block[:part.shape[0], :part.shape[1]] = part
                image = heif_image(lib, block)
                images.append(image)
                check(lib.heif_context_add_image_tile(context, grid, column, row, image, encoder), "tile")
        # The thumbnail upright (libheif adds a clap to it, and an irot written after that would
        # be applied in the wrong order).
        upright = photo if orientation == 1 else photo.transpose(
            {3: Image.Transpose.ROTATE_180, 6: Image.Transpose.ROTATE_270, 8: Image.Transpose.ROTATE_90}[orientation])
        scale = thumbnail_size / max(width, height)
        small = upright.resize((max(1, round(upright.width * scale)), max(1, round(upright.height * scale))),
                               Image.Resampling.LANCZOS)
        thumbnail_image = heif_image(lib, np.asarray(small, dtype=np.uint8))
        images.append(thumbnail_image)
        thumbnail = ctypes.c_void_p()
        check(lib.heif_context_encode_image(context, thumbnail_image, encoder, options, ctypes.byref(thumbnail)),
              "thumbnail")
        # libheif 1.19's C function hands its two images on swapped (heif.h names the master
        # first, and the file then says the grid is the thumbnail's thumbnail): the thumbnail
        # first here, as heif-info confirms.
        check(lib.heif_context_assign_thumbnail(context, thumbnail, grid), "thmb")
        if orientation != 1:
            # The grid stored as the sensor saw it and turned by an irot, as an iPhone's.
            turns = {3: 2, 6: 3, 8: 1}[orientation]  # quarter turns counter-clockwise
            item = lib.heif_image_handle_get_item_id(grid)
            check(lib.heif_item_add_raw_property(context, item, int.from_bytes(b"irot", "big"), None,
                                                 bytes([turns]), 1, 1, None), "irot")
        check(lib.heif_context_set_primary_image(context, grid), "primary")
        check(lib.heif_context_write_to_file(context, path.encode()), "write")
        lib.heif_image_handle_release(thumbnail)
        lib.heif_image_handle_release(grid)
    finally:
        for image in images:
            lib.heif_image_release(image)
        if encoder:
            lib.heif_encoder_release(encoder)
        lib.heif_encoding_options_free(options)
        lib.heif_context_free(context)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--quality", type=int, default=75)
    ap.add_argument("--preset", default="ultrafast")
    args = ap.parse_args()
    with Image.open(args.source) as im:
        photo = ImageOps.exif_transpose(im).convert("RGB")
    write(photo, args.out, args.quality, args.preset)


if __name__ == "__main__":
    main()
