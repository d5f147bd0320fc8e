#!/usr/bin/env python3
"""Writes the crafted grids of issue 54, finding 1 ("hostile inputs, round six") into
Tests/Fixtures/Hostile/: AVIF grids whose tiles have an odd side, which Debian's libheif 1.19.7
decodes by writing past its 4:2:0 (or 4:2:2) chroma plane, and a control of even tiles made the
same way.

Run from the repository root in the test venv (Pillow 13 with libavif, scripts/setup-test-python.sh):

    .venv-test/bin/python tools/trial/make_odd_tile_grids.py

The boxes are written by tools/images/make_hostile_fixtures.py's `grid_file` (a `grid` item, its
`iref dimg` to N references of one coded tile, the tile's `ispe`); the AV1 tile is libaom's
through Pillow. Writes:

  avif_grid_odd_tiles.avif       a 252x252 grid of 4x4 references to one 63x63 4:2:0 AV1 tile (ASan: a
                                 32-byte WRITE past libheif's chroma plane, in its tile threads)
  avif_grid_odd_tiles_422.avif   a 252x256 grid of 4x4 references to one 63x64 4:2:2 AV1 tile
  avif_grid_even_tiles.avif      a 128x128 grid of 2x2 references to one 64x64 4:2:0 tile (the control)

With `--trial` (what `make trial` runs, into $HOSTILE_OUT) it writes the round's other sides
too, 2x2 grids of 511x511 and 1023x1023 AV1 tiles (`avif_grid_odd_511.avif`, `..._1023.avif`),
and HEIC grids of 2x2 HEVC tiles from ffmpeg's libx265 (`heic_grid_odd_63.heic`, `_511`, `_1023`,
and the control `heic_grid_even_64.heic`): HEVC codes 4:2:0 in even sides only, so an odd HEIC
tile is coded one pixel larger and declares the odd side in its `ispe`, as libheif lays the grid
out by (the control declares what it codes).
"""
from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import tempfile

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "images"))
from make_hostile_fixtures import children, grid_file, single_item  # noqa: E402

OUT = os.environ.get("HOSTILE_OUT") or os.path.join(ROOT, "Tests", "Fixtures", "Hostile")
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "grace_hopper.jpg")


def avif_tile(image: Image.Image, subsampling: str) -> bytes:
    out = io.BytesIO()
    image.save(out, format="AVIF", quality=50, speed=10, subsampling=subsampling)
    return out.getvalue()


def hevc_tile(image: Image.Image) -> tuple[bytes, bytes, bytes]:
    """One 4:2:0 HEVC frame of `image` by ffmpeg's libx265: (item type, its hvcC box, the frame)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "tile.mp4")
        subprocess.run(
            ["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{image.width}x{image.height}",
             "-i", "-", "-frames:v", "1", "-c:v", "libx265", "-pix_fmt", "yuv420p", "-x265-params", "log-level=none",
             "-tag:v", "hvc1", "-y", path], input=image.tobytes(), check=True)
        data = open(path, "rb").read()

    def find(kind: bytes, start: int, end: int) -> tuple[int, int]:
        for found, body, stop in children(data, start, end):
            if found == kind:
                return body, stop
        raise ValueError(f"no {kind!r} box")

    moov = find(b"moov", 0, len(data))
    stbl = find(b"stbl", *find(b"minf", *find(b"mdia", *find(b"trak", *moov))))
    stsd_start, stsd_end = find(b"stsd", *stbl)
    hvc1_start, hvc1_end = find(b"hvc1", stsd_start + 8, stsd_end)
    hvcc_start, hvcc_end = find(b"hvcC", hvc1_start + 78, hvc1_end)
    stsz_start, _ = find(b"stsz", *stbl)
    # One sample: stsz's sample_size, or its first entry when that is 0.
    size = struct.unpack(">I", data[stsz_start + 4:stsz_start + 8])[0] or struct.unpack(
        ">I", data[stsz_start + 12:stsz_start + 16])[0]
    stco_start, _ = find(b"stco", *stbl)
    offset = struct.unpack(">I", data[stco_start + 8:stco_start + 12])[0]
    return b"hvc1", data[hvcc_start - 8:hvcc_end], data[offset:offset + size]


def trial_grids(photo: Image.Image) -> None:
    """The round's other sides, AVIF and HEIC, 2x2 tiles each."""
    for side in (511, 1023):
        tile = photo.resize((side, side), Image.Resampling.BILINEAR)
        item_type, config, coded = single_item(avif_tile(tile, "4:2:0"))
        output = (2 * side, 2 * side)
        data = grid_file(b"avif", item_type, config, coded, (side, side), 2, 2, output, output)
        write_file(f"avif_grid_odd_{side}.avif", data)
    for side, coded_side in ((63, 64), (511, 512), (1023, 1024), (64, 64)):
        item_type, config, coded = hevc_tile(photo.resize((coded_side, coded_side), Image.Resampling.BILINEAR))
        output = (2 * side, 2 * side)
        data = grid_file(b"heic", item_type, config, coded, (side, side), 2, 2, output, output)
        write_file(f"heic_grid_{'odd' if side % 2 else 'even'}_{side}.heic", data)


def write_file(name: str, data: bytes) -> None:
    with open(os.path.join(OUT, name), "wb") as file:
        file.write(data)
    print(f"{name}: {len(data)} bytes")


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    photo = Image.open(SOURCE).convert("RGB")

    def write(name: str, size: tuple[int, int], subsampling: str, columns: int, rows: int) -> None:
        tile = photo.resize(size, Image.Resampling.BILINEAR)
        item_type, config, coded = single_item(avif_tile(tile, subsampling))
        output = (size[0] * columns, size[1] * rows)
        data = grid_file(b"avif", item_type, config, coded, size, columns, rows, output, output)
        with open(os.path.join(OUT, name), "wb") as file:
            file.write(data)
        print(f"{name}: {len(data)} bytes")

    write("avif_grid_odd_tiles.avif", (63, 63), "4:2:0", 4, 4)
    write("avif_grid_odd_tiles_422.avif", (63, 64), "4:2:2", 4, 4)
    write("avif_grid_even_tiles.avif", (64, 64), "4:2:0", 2, 2)
    if "--trial" in sys.argv[1:]:
        trial_grids(photo)


if __name__ == "__main__":
    main()
