#!/usr/bin/env python3
"""Writes the HEIC grid fixtures of Tests/NetRunnerImageTests (HEICRegionTests) and a checksum of
what pillow-heif decodes of each (the reference the whole decode is held to; the region decode is
held to the whole decode, byte for byte).

Each is laid out as an iPhone lays out a photo, scaled down: a grid of 64x64 HEVC tiles (5x3, the
last row cropped) with a small thumbnail, shown as stored or turned by an `irot`, as an iPhone
turns a portrait photo. pillow-heif 1.8 writes no grids, so they are written through libheif's own
encoding API by Benchmarks/python/heif_iphone.py (Debian's libheif 1.19.7 from bookworm-backports
with libheif-plugin-x265). Run from the repository root in the venv of
tools/images/requirements-formats.txt (see make_format_fixtures.py) or the benchmark venv:

    .venv-bench/bin/python tools/images/make_grid_fixtures.py

From Tests/Fixtures/Photos/test/coffee.jpg (CC0), scaled to 320x160 with Pillow's BILINEAR. Writes
into Tests/Fixtures/Grids/ (or $GRIDS_OUT):

  <name>.heic   the fixture
  grids.json    per fixture: the EXIF orientation its irot stands for, the size pillow-heif shows,
                and the FNV-1a 64 checksum (hex) of pillow-heif's RGB rows
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pillow_heif
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "python"))
import heif_iphone  # noqa: E402

OUT = os.environ.get("GRIDS_OUT") or os.path.join(ROOT, "Tests", "Fixtures", "Grids")
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "coffee.jpg")

# name: EXIF orientation the irot stands for (1: none)
FIXTURES = {"heic_grid": 1, "heic_grid_rotate_90_cw": 6, "heic_grid_rotate_180": 3, "heic_grid_rotate_90_ccw": 8}


def fnv1a64(data: bytes) -> str:
    value = 0xCBF29CE484222325
    for byte in np.frombuffer(data, dtype=np.uint8).tolist():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    photo = Image.open(SOURCE).convert("RGB").resize((320, 160), Image.Resampling.BILINEAR)
    index: dict = {"pillow_heif": pillow_heif.__version__, "libheif": pillow_heif.libheif_info()["libheif"],
                   "encoder": "libheif 1.19.7 (x265) through Benchmarks/python/heif_iphone.py",
                   "source": "Tests/Fixtures/Photos/test/coffee.jpg scaled to 320x160 (BILINEAR)",
                   "tile": 64, "fixtures": {}}
    for name, orientation in FIXTURES.items():
        path = os.path.join(OUT, name + ".heic")
        heif_iphone.write(photo, path, quality=60, tile=64, orientation=orientation, thumbnail_size=96)
        decoded = pillow_heif.open_heif(path, convert_hdr_to_8bit=True)
        rgb = np.asarray(decoded.to_pillow().convert("RGB"), dtype=np.uint8)
        index["fixtures"][name] = {"orientation": orientation, "width": int(rgb.shape[1]),
                                   "height": int(rgb.shape[0]), "fnv1a64": fnv1a64(rgb.tobytes())}
        print(name, rgb.shape[1], "x", rgb.shape[0], os.path.getsize(path), "bytes")
    with open(os.path.join(OUT, "grids.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
