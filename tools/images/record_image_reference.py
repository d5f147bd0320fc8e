#!/usr/bin/env python3
"""Records the Pillow reference that Tests/NetRunnerImageTests compares NetRunnerImage with.

Run from the repository root with the hash-pinned reference venv (numpy + pillow):

    python3 -m venv .venv-img
    .venv-img/bin/pip install --require-hashes -r tools/models/requirements-reference.txt
    .venv-img/bin/python tools/images/record_image_reference.py

Writes into Tests/Fixtures/ImageReference/:
  reference.json            decoded sizes and sample pixels of every committed photo, the draft
                            (DCT-scaled) decode of each test JPEG, and the orientation fixtures
  <photo>_224.rgb           centre square + BILINEAR 224x224 (tools/models/photo_prep.py exactly),
                            raw RGB, 150528 bytes
  <photo>_draft_224.rgb     the same after Pillow's JPEG draft("RGB", (224, 224)) (JPEG photos)
  chelsea_region_37x29.rgb  crop (10, 20, 110, 95) resized to 37x29 BILINEAR (shrink, both axes)
  chelsea_up_150x100.rgb    crop (200, 100, 264, 164) resized to 150x100 BILINEAR (enlarge)
  png_<variant>.png         hand-written PNGs (gray 1/2/4/8/16-bit, gray+alpha, palette with and
                            without tRNS, RGB 8/16-bit, RGBA, Adam7-interlaced) whose expected
                            8-bit RGBA pixels are in the JSON (libpng's expansion rules; 16-bit
                            grey clipped at 255 as Pillow's "I;16" to RGB), checked against Pillow
  cmyk.jpg                  an Adobe (inverted) CMYK JPEG, with Pillow's RGB samples
  orientation_<n>.jpg/.png  a 32x16 four-colour image stored with EXIF orientation n (1...8);
                            the JSON gives Pillow's exif_transpose size and quadrant colours
"""
from __future__ import annotations

import hashlib
import struct
import zlib
import json
import os
import sys

import numpy as np
import PIL
from PIL import Image, ImageOps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "models"))
import photo_prep  # noqa: E402  (the model tests' preprocessing, matched exactly)

OUT = os.path.join(ROOT, "Tests", "Fixtures", "ImageReference")
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "Photos")
TEST_PHOTOS = ["chelsea.png", "coffee.jpg", "eagle.jpg", "grace_hopper.jpg"]


def sample_points(w: int, h: int) -> list[tuple[int, int]]:
    return [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, h // 2), (w // 3, h // 5),
            (2 * w // 3, 3 * h // 4), (w // 7, 5 * h // 7)]


def samples(img: Image.Image) -> list[dict]:
    arr = np.asarray(img)
    out = []
    for x, y in sample_points(img.width, img.height):
        v = arr[y, x]
        out.append({"x": x, "y": y, "value": [int(c) for c in np.atleast_1d(v)]})
    return out


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_rgb(name: str, img: Image.Image) -> str:
    data = np.asarray(img.convert("RGB"), dtype=np.uint8).tobytes()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    return name


def photos() -> list[dict]:
    records = []
    for folder in ["test", "calibration"]:
        for name in sorted(os.listdir(os.path.join(PHOTOS, folder))):
            if not name.endswith((".jpg", ".png")):
                continue
            rel = f"Tests/Fixtures/Photos/{folder}/{name}"
            path = os.path.join(ROOT, rel)
            with Image.open(path) as im:
                mode = im.mode
                img = im.convert("RGB")
            record = {"file": rel, "sha256": sha256(path), "format": "JPEG" if name.endswith(".jpg") else "PNG",
                      "mode": mode, "width": img.width, "height": img.height, "samples": samples(img)}
            if folder == "test":
                stem = os.path.splitext(name)[0]
                rgb = photo_prep.load_rgb_224(path)
                record["center224"] = write_rgb(f"{stem}_224.rgb", Image.fromarray(rgb))
                if name.endswith(".jpg"):
                    with Image.open(path) as im:
                        full = im.size
                        im.draft("RGB", (224, 224))
                        draft = im.convert("RGB")
                    record["draft"] = {
                        "width": draft.width, "height": draft.height,
                        "scaleNumerator": 8 // max(round(full[0] / draft.width), 1),
                        "samples": samples(draft),
                        "center224": write_rgb(f"{stem}_draft_224.rgb",
                                               photo_prep.centre_square(draft).resize((224, 224), Image.BILINEAR)),
                    }
            records.append(record)
    return records


def regions() -> list[dict]:
    path = os.path.join(PHOTOS, "test", "chelsea.png")
    with Image.open(path) as im:
        img = im.convert("RGB")
    out = []
    for name, box, size in [("chelsea_region_37x29.rgb", (10, 20, 110, 95), (37, 29)),
                            ("chelsea_up_150x100.rgb", (200, 100, 264, 164), (150, 100))]:
        write_rgb(name, img.crop(box).resize(size, Image.BILINEAR))
        out.append({"file": name, "x": box[0], "y": box[1], "width": box[2] - box[0], "height": box[3] - box[1],
                    "outWidth": size[0], "outHeight": size[1]})
    return out


def orientation_fixtures() -> list[dict]:
    # 32x16: red top-left, green top-right, blue bottom-left, white bottom-right (8x8-aligned
    # blocks so JPEG keeps the colours clean in the quadrant centres).
    arr = np.zeros((16, 32, 3), dtype=np.uint8)
    arr[:8, :16] = (255, 0, 0)
    arr[:8, 16:] = (0, 255, 0)
    arr[8:, :16] = (0, 0, 255)
    arr[8:, 16:] = (255, 255, 255)
    base = Image.fromarray(arr)
    out = []
    for n in range(1, 9):
        for ext, kwargs in [("jpg", {"quality": 95, "subsampling": 0}), ("png", {})]:
            name = f"orientation_{n}.{ext}"
            exif = Image.Exif()
            exif[0x0112] = n
            base.save(os.path.join(OUT, name), exif=exif.tobytes(), **kwargs)
            with Image.open(os.path.join(OUT, name)) as im:
                assert im.getexif().get(0x0112) == n, name
                upright = ImageOps.exif_transpose(im).convert("RGB")
            w, h = upright.size
            # Quadrant centres of the upright image.
            points = [(w // 4, h // 4), (3 * w // 4, h // 4), (w // 4, 3 * h // 4), (3 * w // 4, 3 * h // 4)]
            a = np.asarray(upright)
            out.append({"file": name, "orientation": n, "width": w, "height": h,
                        "samples": [{"x": x, "y": y, "value": [int(c) for c in a[y, x]]} for x, y in points]})
    return out


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_row(samples: list[int], depth: int) -> bytes:
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for v in samples:
        acc = (acc << depth) | v
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(path: str, w: int, h: int, color_type: int, depth: int, rows: list[list[list[int]]],
              interlace: bool = False, extra: bytes = b"") -> None:
    """rows[y][x] = list of samples of that pixel."""
    def scan(pixels_rows):
        return b"".join(b"\x00" + pack_row([s for px in r for s in px], depth) for r in pixels_rows)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ADAM7:
            sub = [[rows[y][x] for x in range(x0, w, dx)] for y in range(y0, h, dy)]
            if sub and sub[0]:
                raw += scan(sub)
    else:
        raw = scan(rows)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra + png_chunk(b"IDAT", zlib.compress(raw)) \
        + png_chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def png_variants() -> list[dict]:
    w, h = 13, 7
    out = []

    def value(x, y, c, maximum):
        return (x * 37 + y * 91 + c * 53 + x * y * 7) % (maximum + 1)

    def gray8(v, depth):  # libpng expansion of a low-depth grey sample to 8 bits
        return {1: v * 255, 2: v * 85, 4: v * 17, 8: v, 16: v >> 8}[depth]

    def grey16(v):  # Pillow opens 16-bit grey as "I;16", which convert("RGB") clips
        return min(v, 255)

    palette = [(i * 17 % 256, i * 71 % 256, i * 113 % 256) for i in range(16)]
    trns = [255 - i * 15 for i in range(16)]
    specs = [("gray1", 0, 1), ("gray2", 0, 2), ("gray4", 0, 4), ("gray8", 0, 8), ("gray16", 0, 16),
             ("grayalpha8", 4, 8), ("grayalpha16", 4, 16), ("rgb8", 2, 8), ("rgb16", 2, 16), ("rgba8", 6, 8),
             ("rgba16", 6, 16), ("palette4", 3, 4), ("palette8_trns", 3, 8), ("rgb8_interlaced", 2, 8),
             ("gray16_interlaced", 0, 16), ("palette4_interlaced", 3, 4)]
    for name, ct, depth in specs:
        channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ct]
        maximum = 15 if ct == 3 else (1 << depth) - 1
        rows = [[[value(x, y, c, maximum) for c in range(channels)] for x in range(w)] for y in range(h)]
        expected = []
        for y in range(h):
            for x in range(w):
                px = rows[y][x]
                if ct == 0:
                    g = grey16(px[0]) if depth == 16 else gray8(px[0], depth); expected += [g, g, g, 255]
                elif ct == 4:
                    g = gray8(px[0], depth); expected += [g, g, g, gray8(px[1], depth)]
                elif ct == 2:
                    expected += [gray8(v, depth) for v in px] + [255]
                elif ct == 6:
                    expected += [gray8(v, depth) for v in px]
                else:
                    r, g, b = palette[px[0]]
                    expected += [r, g, b, trns[px[0]] if "trns" in name else 255]
        extra = b""
        if ct == 3:
            extra = png_chunk(b"PLTE", bytes(v for rgb in palette for v in rgb))
            if "trns" in name:
                extra += png_chunk(b"tRNS", bytes(trns))
        file = f"png_{name}.png"
        write_png(os.path.join(OUT, file), w, h, ct, depth, rows, interlace="interlaced" in name, extra=extra)
        with Image.open(os.path.join(OUT, file)) as im:
            # Pillow reads it to the same colour (alpha aside).
            pillow = np.asarray(im.convert("RGB"), dtype=np.uint8).reshape(-1, 3)
            assert (pillow == np.array(expected, dtype=np.uint8).reshape(-1, 4)[:, :3]).all(), file
        out.append({"file": file, "width": w, "height": h, "colorType": ct, "bitDepth": depth,
                    "interlaced": "interlaced" in name, "rgba": bytes(expected).hex()})
    return out


def cmyk_fixture() -> dict:
    arr = np.zeros((16, 32, 4), dtype=np.uint8)
    arr[:, :16] = (0, 255, 255, 0)      # red
    arr[:, 16:] = (200, 50, 0, 40)      # a blue
    arr[8:, :] //= 2
    name = "cmyk.jpg"
    Image.fromarray(arr, "CMYK").save(os.path.join(OUT, name), quality=95)
    with Image.open(os.path.join(OUT, name)) as im:
        assert im.mode == "CMYK"
        rgb = im.convert("RGB")
    return {"file": name, "width": rgb.width, "height": rgb.height, "samples": samples(rgb)}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    reference = {
        "generator": "tools/images/record_image_reference.py",
        "pillow": PIL.__version__,
        "numpy": np.__version__,
        "photos": photos(),
        "regions": regions(),
        "orientations": orientation_fixtures(),
        "pngVariants": png_variants(),
        "cmyk": cmyk_fixture(),
    }
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, into {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
