#!/usr/bin/env python3
"""Writes the WebP, GIF, TIFF, HEIC and AVIF fixtures of Tests/NetRunnerImageTests and what
Pillow decodes from each (the reference NetRunnerImage is compared with).

Run from the repository root in a venv with tools/images/requirements-formats.txt (hash-pinned:
Pillow 13.0.0, which reads WebP, GIF, TIFF and AVIF itself, numpy, and pillow-heif 1.8.1 for
HEIC):

    python3 -m venv .venv-formats
    .venv-formats/bin/pip install --require-hashes -r tools/images/requirements-formats.txt
    .venv-formats/bin/python tools/images/make_format_fixtures.py

Every fixture is made from one committed photo (Tests/Fixtures/Photos/test/grace_hopper.jpg),
scaled to an odd size (131x97) so that row padding shows. Writes into Tests/Fixtures/Formats/:

  <name>.<ext>     the fixture
  <name>.rgb       Pillow's decode of it, as a user's code gets it: Image.open, the first frame,
                   ImageOps.exif_transpose, convert("RGB"); raw RGB rows
  formats.json     per fixture: the upright size, Pillow's mode before the conversion, the
                   library versions that decoded it, and what the fixture exercises

and the refused ones (a 16-bit TIFF, a CMYK TIFF, a planar TIFF) with the reason expected.
"""
from __future__ import annotations

import io
import json
import os

import numpy as np
import PIL
import pillow_heif
from PIL import Image, ImageOps, features

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "Formats")
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "grace_hopper.jpg")
SIZE = (131, 97)


def base() -> Image.Image:
    return Image.open(SOURCE).convert("RGB").resize(SIZE, Image.Resampling.BILINEAR)


def with_alpha(image: Image.Image) -> Image.Image:
    """The photo with a soft left-to-right alpha ramp and a fully transparent corner."""
    rgba = image.convert("RGBA")
    alpha = np.tile(np.linspace(40, 255, image.width, dtype=np.uint8), (image.height, 1))
    alpha[:20, :30] = 0
    rgba.putalpha(Image.fromarray(alpha, "L"))
    return rgba


def second_frame(image: Image.Image) -> Image.Image:
    return ImageOps.invert(image)


def fixtures() -> dict[str, tuple[str, bytes, str]]:
    """name -> (extension, file bytes, what it exercises)."""
    photo = base()
    made: dict[str, tuple[str, bytes, str]] = {}

    def save(name, ext, what, image, **options):
        buffer = io.BytesIO()
        image.save(buffer, **options)
        made[name] = (ext, buffer.getvalue(), what)

    save("webp_lossy", "webp", "lossy VP8, quality 80", photo, format="WEBP", quality=80)
    save("webp_lossless", "webp", "lossless VP8L", photo, format="WEBP", lossless=True)
    save("webp_alpha", "webp", "lossy with an alpha plane (ALPH)", with_alpha(photo), format="WEBP", quality=85)
    save("webp_animated", "webp", "an animation of two frames: the first is decoded", photo, format="WEBP",
         save_all=True, append_images=[second_frame(photo)], duration=100, quality=85)
    save("gif_palette", "gif", "GIF89a, an adaptive 256-colour global palette", photo.quantize(256), format="GIF")
    transparent = photo.quantize(64)
    save("gif_transparent", "gif", "a transparent index in the graphic control extension", transparent,
         format="GIF", transparency=5)
    save("gif_interlaced", "gif", "interlaced rows", photo.quantize(128), format="GIF", interlace=True)
    save("gif_animated", "gif", "two frames, each with its own local palette: the first is decoded",
         photo.quantize(200), format="GIF", save_all=True, append_images=[second_frame(photo).quantize(90)],
         duration=100)
    save("tiff_rgb_lzw", "tif", "8-bit RGB, LZW strips", photo, format="TIFF", compression="tiff_lzw")
    save("tiff_rgb_raw", "tif", "8-bit RGB, uncompressed, several strips", photo, format="TIFF",
         compression="raw", rowsperstrip=16)
    save("tiff_rgba_deflate", "tif", "8-bit RGBA (unassociated alpha), Deflate", with_alpha(photo), format="TIFF",
         compression="tiff_adobe_deflate")
    save("tiff_gray_packbits", "tif", "8-bit grey, PackBits", photo.convert("L"), format="TIFF",
         compression="packbits")
    save("tiff_jpeg", "tif", "JPEG-compressed YCbCr TIFF", photo, format="TIFF", compression="jpeg", quality=90)
    rotated = Image.Exif()
    rotated[0x0112] = 6
    save("tiff_orientation6", "tif", "the Orientation tag 6 (rotate 90 clockwise to view)", photo, format="TIFF",
         compression="tiff_lzw", exif=rotated.tobytes())
    save("heic_plain", "heic", "HEVC, 8-bit 4:2:0, quality 90", photo, format="HEIF", quality=90)
    save("heic_irot", "heic", "HEVC with an irot (the EXIF orientation 6 as HEIF stores it)", photo,
         format="HEIF", quality=90, exif=rotated.tobytes())
    save("heic_alpha", "heic", "HEVC with an alpha auxiliary image", with_alpha(photo), format="HEIF", quality=90)
    save("avif_plain", "avif", "AV1, 8-bit 4:2:0, quality 90", photo, format="AVIF", quality=90)
    return made


def refused() -> dict[str, tuple[str, bytes, str]]:
    photo = base()
    made = {}
    buffer = io.BytesIO()
    deep = Image.fromarray(np.asarray(photo.convert("L"), dtype=np.uint16) * 257)
    deep.save(buffer, format="TIFF")
    made["tiff_gray16"] = ("tif", buffer.getvalue(), "16 bits per sample")
    buffer = io.BytesIO()
    photo.convert("CMYK").save(buffer, format="TIFF")
    made["tiff_cmyk"] = ("tif", buffer.getvalue(), "CMYK (separated) TIFF")
    return made


def main() -> None:
    pillow_heif.register_heif_opener()
    os.makedirs(OUT, exist_ok=True)
    index: dict = {
        "pillow": PIL.__version__, "pillow_heif": pillow_heif.__version__,
        "libheif": pillow_heif.libheif_info()["libheif"], "libwebp": features.version("webp"),
        "libtiff": features.version("libtiff"), "libavif": features.version("avif"),
        "source": "Tests/Fixtures/Photos/test/grace_hopper.jpg scaled to 131x97 (BILINEAR)",
        "decoded": {}, "refused": {},
    }
    for name, (ext, data, what) in fixtures().items():
        with open(os.path.join(OUT, f"{name}.{ext}"), "wb") as handle:
            handle.write(data)
        image = Image.open(io.BytesIO(data))
        mode = image.mode
        upright = ImageOps.exif_transpose(image).convert("RGB")
        with open(os.path.join(OUT, f"{name}.rgb"), "wb") as handle:
            handle.write(upright.tobytes())
        index["decoded"][f"{name}.{ext}"] = {"width": upright.width, "height": upright.height, "mode": mode,
                                              "exercises": what}
    for name, (ext, data, what) in refused().items():
        with open(os.path.join(OUT, f"{name}.{ext}"), "wb") as handle:
            handle.write(data)
        index["refused"][f"{name}.{ext}"] = what
    with open(os.path.join(OUT, "formats.json"), "w", encoding="utf-8") as handle:
        json.dump(index, handle, indent=2, sort_keys=True)
        handle.write("\n")
    print(f"wrote {len(index['decoded'])} fixtures and {len(index['refused'])} refused ones to {OUT}")


if __name__ == "__main__":
    main()
