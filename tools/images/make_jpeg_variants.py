#!/usr/bin/env python3
"""Writes the JPEG variants that prove region decoding gives a full decode's pixels.

Tests/NetRunnerImageTests/Codecs/RegionDecodingTests.swift decodes each file whole and as its
centre square (DecodingOptions.region) at several DCT scales and pixel formats, and compares
the kept pixels and the model input made from them byte for byte. The files cover what changes
how libjpeg-turbo reconstructs a pixel from its neighbours: chroma subsampling 4:4:4, 4:2:2 and
4:2:0, baseline and progressive, greyscale, restart markers, EXIF orientations that swap the
axes, landscape and portrait (the square is cut from the columns or from the rows), and sizes
whose crop starts off the 8- and 16-pixel block grid.

Made from Tests/Fixtures/Photos/test/coffee.jpg (CC0, see Photos/SOURCES.md) with Pillow:

    .venv-test/bin/python tools/images/make_jpeg_variants.py

Writes Tests/Fixtures/ImageReference/variants/*.jpg (about 10 KB each). Nothing else reads them.
"""
from __future__ import annotations

import os

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "coffee.jpg")
OUT = os.path.join(ROOT, "Tests", "Fixtures", "ImageReference", "variants")


def exif_with_orientation(n: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = n
    return exif.tobytes()


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    with Image.open(SOURCE) as im:
        photo = im.convert("RGB")
    wide = photo.resize((203, 133), Image.LANCZOS)
    tall = photo.crop((100, 0, 400, 400)).resize((141, 211), Image.LANCZOS)
    # Long enough that whole iMCU rows are skipped above and below the square.
    slim = photo.crop((200, 0, 330, 400)).resize((117, 361), Image.LANCZOS)
    variants = {
        "wide_444.jpg": (wide, dict(quality=90, subsampling=0)),
        "wide_422.jpg": (wide, dict(quality=90, subsampling=1)),
        "wide_420.jpg": (wide, dict(quality=90, subsampling=2)),
        "wide_420_progressive.jpg": (wide, dict(quality=90, subsampling=2, progressive=True)),
        "wide_444_progressive.jpg": (wide, dict(quality=85, subsampling=0, progressive=True)),
        "wide_gray.jpg": (wide.convert("L"), dict(quality=90)),
        "tall_420.jpg": (tall, dict(quality=90, subsampling=2)),
        "tall_422_progressive.jpg": (tall, dict(quality=90, subsampling=1, progressive=True)),
        "tall_gray_progressive.jpg": (tall.convert("L"), dict(quality=90, progressive=True)),
        "slim_420.jpg": (slim, dict(quality=90, subsampling=2)),
        "slim_420_progressive.jpg": (slim, dict(quality=90, subsampling=2, progressive=True)),
        "wide_420_restarts.jpg": (wide, dict(quality=90, subsampling=2, restart_marker_blocks=3)),
        # Stored wide, shown tall (6: turn right, 8: turn left) and mirrored across the diagonal (7).
        "wide_420_orientation6.jpg": (wide, dict(quality=90, subsampling=2, exif=exif_with_orientation(6))),
        "wide_422_orientation8.jpg": (wide, dict(quality=90, subsampling=1, exif=exif_with_orientation(8))),
        "tall_420_orientation7.jpg": (tall, dict(quality=90, subsampling=2, exif=exif_with_orientation(7))),
        "tall_444_orientation3.jpg": (tall, dict(quality=90, subsampling=0, exif=exif_with_orientation(3))),
    }
    for name, (image, options) in variants.items():
        image.save(os.path.join(OUT, name), "JPEG", **options)
        print(name, os.path.getsize(os.path.join(OUT, name)))


if __name__ == "__main__":
    main()
