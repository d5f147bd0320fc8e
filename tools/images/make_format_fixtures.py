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
scaled to an odd size (131x97) so that row padding shows. Writes into Tests/Fixtures/Formats/
(or $FORMATS_OUT):

  <name>.<ext>     the fixture
  <name>.rgb       Pillow's decode of it, as a user's code gets it: Image.open, the first frame,
                   ImageOps.exif_transpose, convert("RGB"); raw RGB rows
  formats.json     per fixture: the upright size, Pillow's mode before the conversion, the
                   library versions that decoded it, and what the fixture exercises

and the refused ones (a CMYK TIFF) with the reason expected. Pillow writes no 16-bit RGB(A)
TIFF or PNG, so those are written here (write_tiff, write_png: plain baseline files, strips or
tiles, raw or Deflate, either byte order); Pillow reads them as any other.
"""
from __future__ import annotations

import io
import json
import os
import struct
import zlib

import numpy as np
import PIL
import pillow_heif
from PIL import Image, ImageOps, features

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("FORMATS_OUT") or os.path.join(ROOT, "Tests", "Fixtures", "Formats")
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


def write_tiff(samples: np.ndarray, photometric: int, *, big_endian: bool = False, deflate: bool = False,
               tile: int = 0, extra: int | None = None, rows_per_strip: int = 16) -> bytes:
    """A baseline TIFF of 16-bit `samples` (height x width x channels, uint16): contiguous, in
    strips of `rows_per_strip` rows or `tile` x `tile` tiles, raw or Adobe Deflate, one IFD;
    `extra` is the ExtraSamples value of a fourth sample (0 unspecified, 1 associated alpha,
    2 unassociated)."""
    height, width, channels = samples.shape
    order = ">" if big_endian else "<"
    data = samples.astype(order + "u2")
    if tile:
        pieces = []
        for y in range(0, height, tile):
            for x in range(0, width, tile):
                block = np.zeros((tile, tile, channels), dtype=data.dtype)
                part = data[y:y + tile, x:x + tile]
                block[:part.shape[0], :part.shape[1]] = part
                pieces.append(block.tobytes())
    else:
        pieces = [data[y:y + rows_per_strip].tobytes() for y in range(0, height, rows_per_strip)]
    if deflate:
        pieces = [zlib.compress(piece, 9) for piece in pieces]
    head = 8
    blob = b"".join(pieces)
    offsets, position = [], head
    for piece in pieces:
        offsets.append(position)
        position += len(piece)
    bits_at = position
    extra_data = struct.pack(order + "H" * channels, *([16] * channels))
    tags = [
        (256, 4, [width]), (257, 4, [height]), (258, 3, [16] * channels), (259, 3, [8 if deflate else 1]),
        (262, 3, [photometric]), (277, 3, [channels]), (284, 3, [1]),
    ]
    if tile:
        tags += [(322, 3, [tile]), (323, 3, [tile]), (324, 4, offsets), (325, 4, [len(p) for p in pieces])]
    else:
        tags += [(273, 4, offsets), (278, 3, [rows_per_strip]), (279, 4, [len(p) for p in pieces])]
    if extra is not None:
        tags.append((338, 3, [extra]))
    tags.sort()
    # Values that do not fit in an entry go after the pixel data, then the IFD.
    tail = bytearray(extra_data)
    entries = []
    for tag, kind, values in tags:
        packed = struct.pack(order + ("H" if kind == 3 else "I") * len(values), *values)
        if len(packed) <= 4:
            entries.append(struct.pack(order + "HHI", tag, kind, len(values)) + packed.ljust(4, b"\0"))
        else:
            at = bits_at + len(tail)
            tail += packed
            entries.append(struct.pack(order + "HHII", tag, kind, len(values), at))
    if len(tail) % 2:
        tail += b"\0"
    ifd_at = bits_at + len(tail)
    ifd = struct.pack(order + "H", len(entries)) + b"".join(entries) + struct.pack(order + "I", 0)
    magic = b"MM\0*" if big_endian else b"II*\0"
    return magic + struct.pack(order + "I", ifd_at) + blob + bytes(tail) + ifd


def write_png(samples: np.ndarray, colour_type: int) -> bytes:
    """A non-interlaced 16-bit PNG of `samples` (height x width x channels, uint16)."""
    height, width, _ = samples.shape
    rows = b"".join(b"\0" + row.astype(">u2").tobytes() for row in samples)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 16, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def deep(image: Image.Image, scale: int = 257, offset: int = 0) -> np.ndarray:
    """The photo's samples as 16-bit ones: value * scale + offset, clipped (height x width x channels)."""
    values = np.asarray(image, dtype=np.int64)
    if values.ndim == 2:
        values = values[:, :, None]
    return np.clip(values * scale + offset, 0, 65535).astype(np.uint16)


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
    save("heic_rotate_mirror", "heic", "HEVC, irot and imir (the EXIF orientation 7) over odd sides: libheif "
         "upsamples the 4:2:0 chroma to mirror it", photo, format="HEIF", quality=90, exif=exif(7))
    save("heic_irot_even", "heic", "HEVC, a clean aperture cutting an odd width, then irot (the EXIF orientation "
         "6) of an even height: no upsampling", photo.resize((131, 96), Image.Resampling.BILINEAR), format="HEIF",
         quality=90, exif=exif(6))
    save("avif_plain", "avif", "AV1, 8-bit 4:2:0, quality 90", photo, format="AVIF", quality=90)
    save("avif_irot_limited", "avif", "AV1, limited range, irot (the EXIF orientation 6: Pillow transposes "
         "after converting)", photo, format="AVIF", quality=80, range="limited", exif=exif(6))
    save("avif_444", "avif", "AV1, 8-bit 4:4:4", photo, format="AVIF", quality=80, subsampling="4:4:4")

    # 16-bit TIFFs and PNGs: grey keeps values up to 255 and clips the rest (Pillow's "I;16"),
    # colour keeps each sample's high byte.
    grey = photo.convert("L")
    buffer = io.BytesIO()
    Image.fromarray(deep(grey)[:, :, 0]).save(buffer, format="TIFF")  # mode "I;16", Pillow's own writer
    made["tiff_gray16"] = ("tif", buffer.getvalue(), "16-bit grey (values x 257: nearly all past 255, so 255 "
                           "as Pillow clips them), little-endian, Pillow's writer")
    made["tiff_gray16_be_deflate"] = ("tif", write_tiff(deep(grey, 2, -20), 1, big_endian=True, deflate=True),
                                      "16-bit grey (values x 2 - 20: some clipped), big-endian, Deflate")
    made["tiff_rgb16"] = ("tif", write_tiff(deep(photo, 257, 90), 2), "16-bit RGB, little-endian, strips")
    made["tiff_rgb16_be_tiled"] = ("tif", write_tiff(deep(photo, 251, 1000), 2, big_endian=True, deflate=True,
                                                     tile=32), "16-bit RGB, big-endian, 32x32 tiles, Deflate")
    rgba = deep(with_alpha(photo), 257, 77)
    made["tiff_rgba16"] = ("tif", write_tiff(rgba, 2, deflate=True, extra=2),
                           "16-bit RGBA, unassociated alpha, Deflate")
    premultiplied = rgba.astype(np.uint32)
    premultiplied[:, :, :3] = premultiplied[:, :, :3] * premultiplied[:, :, 3:] // 65535
    made["tiff_rgba16_premultiplied"] = ("tif", write_tiff(premultiplied.astype(np.uint16), 2, big_endian=True,
                                                           extra=1),
                                         "16-bit RGBA, associated (premultiplied) alpha, big-endian")
    buffer = io.BytesIO()
    Image.fromarray(deep(grey, 1, 40)[:, :, 0]).save(buffer, format="PNG")  # mode "I;16"
    made["png_gray16"] = ("png", buffer.getvalue(), "16-bit grey PNG (values + 40: the bright ones clipped)")
    made["png_rgba16"] = ("png", write_png(rgba, 6), "16-bit RGBA PNG")
    return made


def exif(orientation: int) -> bytes:
    tags = Image.Exif()
    tags[0x0112] = orientation
    return tags.tobytes()


def refused() -> dict[str, tuple[str, bytes, str]]:
    photo = base()
    made = {}
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
