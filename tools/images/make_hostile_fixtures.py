#!/usr/bin/env python3
"""Writes the crafted photos of issue 43 ("hostile inputs, round five") into
Tests/Fixtures/Hostile/: files whose declared sizes lie about the work a decoder will do, and
small well-formed controls made the same way, so that a refusal in the tests is the limit's and
not a broken file's.

Run from the repository root in the venv of tools/images/requirements-formats.txt (Pillow 13.0.0
and pillow-heif 1.8.1, hash-pinned; the venv of make_format_fixtures.py):

    .venv-formats/bin/python tools/images/make_hostile_fixtures.py

The HEIF boxes, the GIF's LZW and the WebP chunks are written here by hand (the encoders write
only honest files); the coded tiles and frames are the encoders' (x265 through pillow-heif, libaom
through Pillow, libwebp through Pillow). Writes:

  heic_grid_lying_ispe.heic  a `grid` whose `ispe` says 100x100 while its descriptor says
                             32768x32768: 8x8 references to one 4096x4096 HEVC tile (1 GP)
  avif_grid_lying_ispe.avif  the same with one 4096x4096 AV1 tile
  heic_grid_many_tiles.heic  a 3200x3200 grid of 2,500 references to one 64x64 HEVC tile
  heic_grid_small.heic       a 192x128 grid of 3x2 references to that tile (the control)
  heic_tile.heic             that 64x64 tile alone (what each cell of the control must show)
  heic_grid_ispe_smaller.heic, heic_grid_ispe_larger.heic, heic_grid_output_smaller.heic
                             the control with its `ispe` 190x126 or 194x130, or its descriptor
                             190x126 (ispe 192x128): pillow-heif's libheif 1.23 refuses each
                             ("Decoded image does not have the size signaled in the file")
                             (`--only-ispe` writes these three alone, from heic_tile.heic)
  gif_frame_past_screen.gif  an 8x8 screen with a 1000x1000 first frame (cropped to 8x8)
  gif_frame_past_screen_interlaced.gif  the same frame, interlaced (every row must be read)
  webp_anim_offset.webp      a 64x48 animation canvas whose first frame is 20x10 at (10,6)
  webp_anim_offset.rgba      Pillow's decode of it (RGBA rows): what the first frame composes to
  webp_anim_huge_canvas.webp a 10000x10000 animation canvas with one 1x1 frame (a few hundred bytes)
"""
from __future__ import annotations

import io
import os
import struct
import sys

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "Hostile")
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "grace_hopper.jpg")


# MARK: ISO BMFF boxes


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def full_box(kind: bytes, version: int, flags: int, payload: bytes) -> bytes:
    return box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def children(data: bytes, start: int, end: int) -> list[tuple[bytes, int, int]]:
    """(type, payload start, box end) of each box in data[start:end]."""
    found = []
    while start < end:
        size, kind = struct.unpack(">I4s", data[start : start + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[start + 8 : start + 16])[0]
            header = 16
        found.append((kind, start + header, start + size))
        start += size
    return found


def single_item(data: bytes) -> tuple[bytes, bytes, bytes]:
    """The coded item of a one-image HEIF/AVIF file: (item type, its codec configuration box,
    its coded bytes)."""
    top = {kind: (s, e) for kind, s, e in children(data, 0, len(data))}
    meta_start, meta_end = top[b"meta"]
    meta = {kind: (s, e) for kind, s, e in children(data, meta_start + 4, meta_end)}
    primary = struct.unpack(">H", data[meta[b"pitm"][0] + 4 : meta[b"pitm"][0] + 6])[0]
    # iinf -> the primary item's type
    iinf_start, iinf_end = meta[b"iinf"]
    version = data[iinf_start]
    entries = iinf_start + 4 + (2 if version == 0 else 4)
    item_type = None
    for kind, s, _ in children(data, entries, iinf_end):
        item_id = struct.unpack(">H", data[s + 4 : s + 6])[0]
        if item_id == primary:
            item_type = data[s + 8 : s + 12]
    # ipco: the codec configuration box (hvcC or av1C)
    iprp_start, iprp_end = meta[b"iprp"]
    iprp = {kind: (s, e) for kind, s, e in children(data, iprp_start, iprp_end)}
    config = None
    for kind, s, e in children(data, *iprp[b"ipco"]):
        if kind in (b"hvcC", b"av1C"):
            config = data[s - 8 : e]
    # iloc: the primary item's extents (construction method 0, in the file)
    iloc_start, _ = meta[b"iloc"]
    version = data[iloc_start]
    p = iloc_start + 4
    sizes = struct.unpack(">H", data[p : p + 2])[0]
    offset_size, length_size, base_size = sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15
    index_size = sizes & 15 if version in (1, 2) else 0
    p += 2
    count = struct.unpack(">H", data[p : p + 2])[0] if version < 2 else struct.unpack(">I", data[p : p + 4])[0]
    p += 2 if version < 2 else 4

    def read(n: int) -> int:
        nonlocal p
        value = int.from_bytes(data[p : p + n], "big") if n else 0
        p += n
        return value

    coded = None
    for _ in range(count):
        item_id = read(2 if version < 2 else 4)
        if version in (1, 2):
            read(2)
        read(2)
        base = read(base_size)
        extents = read(2)
        chunks = []
        for _ in range(extents):
            read(index_size)
            offset, length = read(offset_size), read(length_size)
            chunks.append(data[base + offset : base + offset + length])
        if item_id == primary:
            coded = b"".join(chunks)
    assert item_type and config and coded, "not a one-image HEIF"
    return item_type, config, coded


def grid_file(
    brand: bytes, item_type: bytes, config: bytes, coded: bytes, tile: tuple[int, int], columns: int, rows: int,
    output: tuple[int, int], ispe: tuple[int, int],
) -> bytes:
    """A HEIF whose primary item is a `grid` of columns x rows references to one coded tile."""
    tiles = columns * rows
    grid_id = 1
    tile_ids = list(range(2, 2 + tiles))
    assert tile_ids[-1] < 65536
    ftyp = box(b"ftyp", brand + struct.pack(">I", 0) + b"mif1" + brand + b"miaf")
    hdlr = full_box(b"hdlr", 0, 0, b"\0" * 4 + b"pict" + b"\0" * 12 + b"\0")
    pitm = full_box(b"pitm", 0, 0, struct.pack(">H", grid_id))
    infe = [full_box(b"infe", 2, 0, struct.pack(">HH", grid_id, 0) + b"grid" + b"\0")]
    infe += [full_box(b"infe", 2, 1, struct.pack(">HH", i, 0) + item_type + b"\0") for i in tile_ids]
    iinf = full_box(b"iinf", 0, 0, struct.pack(">H", len(infe)) + b"".join(infe))
    iref = full_box(
        b"iref", 0, 0,
        box(b"dimg", struct.pack(">HH", grid_id, tiles) + b"".join(struct.pack(">H", i) for i in tile_ids)))
    ispe_tile = full_box(b"ispe", 0, 0, struct.pack(">II", *tile))
    ispe_grid = full_box(b"ispe", 0, 0, struct.pack(">II", *ispe))
    ipco = box(b"ipco", config + ispe_tile + ispe_grid)
    associations = [struct.pack(">HB", grid_id, 1) + bytes([3])]
    associations += [struct.pack(">HB", i, 2) + bytes([0x81, 2]) for i in tile_ids]
    ipma = full_box(b"ipma", 0, 0, struct.pack(">I", len(associations)) + b"".join(associations))
    iprp = box(b"iprp", ipco + ipma)
    # The grid's descriptor: 32-bit sizes (flags 1).
    descriptor = struct.pack(">BBBBII", 0, 1, rows - 1, columns - 1, *output)
    idat = box(b"idat", descriptor)

    def iloc(mdat_offset: int) -> bytes:
        # Version 1: offset and length 4 bytes, no base offset, no index; the grid in idat.
        entries = [struct.pack(">HHH", grid_id, 1, 0) + struct.pack(">HII", 1, 0, len(descriptor))]
        entries += [struct.pack(">HHH", i, 0, 0) + struct.pack(">HII", 1, mdat_offset, len(coded)) for i in tile_ids]
        return full_box(b"iloc", 1, 0, struct.pack(">BBH", 0x44, 0x00, len(entries)) + b"".join(entries))

    def whole(mdat_offset: int) -> bytes:
        meta = full_box(b"meta", 0, 0, hdlr + pitm + iloc(mdat_offset) + iinf + iref + iprp + idat)
        return ftyp + meta

    head = whole(0)
    mdat_payload_offset = len(head) + 8
    head = whole(mdat_payload_offset)
    assert len(head) + 8 == mdat_payload_offset
    return head + box(b"mdat", coded)


def heic_tile(image: Image.Image) -> bytes:
    import pillow_heif  # here, so that tools/trial/make_odd_tile_grids.py runs without it

    heif = pillow_heif.from_pillow(image)
    out = io.BytesIO()
    heif.save(out, format="HEIF", quality=90, chroma=420)
    return out.getvalue()


def avif_tile(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="AVIF", quality=60, speed=10)
    return out.getvalue()


# MARK: GIF


def lzw(indices: bytes, minimum: int) -> bytes:
    """GIF's variable-length LZW of `indices`, in sub-blocks."""
    clear, end = 1 << minimum, (1 << minimum) + 1
    table = {bytes([i]): i for i in range(clear)}
    width, next_code = minimum + 1, end + 1
    bits, count, out = 0, 0, bytearray()

    def emit(code: int) -> None:
        nonlocal bits, count
        bits |= code << count
        count += width
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8

    emit(clear)
    current = b""
    for value in indices:
        candidate = current + bytes([value])
        if candidate in table:
            current = candidate
            continue
        emit(table[current])
        if next_code < 4096:
            table[candidate] = next_code
            next_code += 1
            if next_code > (1 << width) and width < 12:
                width += 1
        else:
            emit(clear)
            table = {bytes([i]): i for i in range(clear)}
            width, next_code = minimum + 1, end + 1
        current = bytes([value])
    emit(table[current])
    emit(end)
    if count:
        out.append(bits & 0xFF)
    blocks = bytearray([minimum])
    for start in range(0, len(out), 255):
        chunk = out[start : start + 255]
        blocks += bytes([len(chunk)]) + chunk
    return bytes(blocks + b"\0")


def gif(screen: tuple[int, int], frame: tuple[int, int], interlaced: bool) -> bytes:
    palette = bytes([0, 0, 0, 255, 255, 255, 200, 30, 30, 30, 30, 200])
    w, h = frame
    rows = [bytes(((x // 3 + y // 5) % 4) for x in range(w)) for y in range(h)]
    if interlaced:
        order = [y for start, step in ((0, 8), (4, 8), (2, 4), (1, 2)) for y in range(start, h, step)]
        rows = [rows[y] for y in order]
    header = b"GIF89a" + struct.pack("<HHBBB", *screen, 0xF1, 0, 0) + palette
    descriptor = b"," + struct.pack("<HHHHB", 0, 0, w, h, 0x40 if interlaced else 0)
    return header + descriptor + lzw(b"".join(rows), 2) + b";"


# MARK: WebP


def riff_chunk(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")


def webp_frame_chunks(image: Image.Image) -> bytes:
    """The VP8L chunk of `image` as a lossless still (RIFF header dropped)."""
    out = io.BytesIO()
    image.save(out, format="WEBP", lossless=True)
    data = out.getvalue()
    assert data[12:16] == b"VP8L", data[12:16]
    return data[12:]


def webp_animation(canvas: tuple[int, int], frame: Image.Image, offset: tuple[int, int]) -> bytes:
    def u24(value: int) -> bytes:
        return struct.pack("<I", value)[:3]

    vp8x = riff_chunk(b"VP8X", bytes([0x12, 0, 0, 0]) + u24(canvas[0] - 1) + u24(canvas[1] - 1))
    anim = riff_chunk(b"ANIM", struct.pack("<IH", 0xFF336699, 0))
    header = u24(offset[0] // 2) + u24(offset[1] // 2) + u24(frame.width - 1) + u24(frame.height - 1) + u24(100)
    anmf = riff_chunk(b"ANMF", header + bytes([0x00]) + webp_frame_chunks(frame))
    body = b"WEBP" + vp8x + anim + anmf
    return b"RIFF" + struct.pack("<I", len(body)) + body


def ispe_mismatches(write, item_type: bytes, config: bytes, coded: bytes) -> None:
    """The 3x2 control grid whose `ispe` and descriptor disagree by a pixel or two."""
    for name, output, ispe in [
        ("heic_grid_ispe_smaller.heic", (192, 128), (190, 126)),
        ("heic_grid_ispe_larger.heic", (192, 128), (194, 130)),
        ("heic_grid_output_smaller.heic", (190, 126), (192, 128)),
    ]:
        write(name, grid_file(b"heic", item_type, config, coded, (64, 64), 3, 2, output, ispe))


def main() -> None:
    os.makedirs(OUT, exist_ok=True)

    def write(name: str, data: bytes) -> None:
        with open(os.path.join(OUT, name), "wb") as file:
            file.write(data)
        print(f"{name}: {len(data)} bytes")

    if "--only-ispe" in sys.argv:
        with open(os.path.join(OUT, "heic_tile.heic"), "rb") as file:
            ispe_mismatches(write, *single_item(file.read()))
        return

    photo = Image.open(SOURCE).convert("RGB")
    small = photo.resize((64, 64), Image.Resampling.BILINEAR)
    flat = Image.new("RGB", (4096, 4096), (128, 128, 128))

    item_type, config, coded = single_item(heic_tile(flat))
    write("heic_grid_lying_ispe.heic",
          grid_file(b"heic", item_type, config, coded, (4096, 4096), 8, 8, (32768, 32768), (100, 100)))
    item_type, config, coded = single_item(avif_tile(flat))
    write("avif_grid_lying_ispe.avif",
          grid_file(b"avif", item_type, config, coded, (4096, 4096), 8, 8, (32768, 32768), (100, 100)))

    tile = heic_tile(small)
    write("heic_tile.heic", tile)
    item_type, config, coded = single_item(tile)
    write("heic_grid_many_tiles.heic",
          grid_file(b"heic", item_type, config, coded, (64, 64), 50, 50, (3200, 3200), (3200, 3200)))
    write("heic_grid_small.heic", grid_file(b"heic", item_type, config, coded, (64, 64), 3, 2, (192, 128), (192, 128)))
    ispe_mismatches(write, item_type, config, coded)

    write("gif_frame_past_screen.gif", gif((8, 8), (1000, 1000), interlaced=False))
    write("gif_frame_past_screen_interlaced.gif", gif((8, 8), (1000, 1000), interlaced=True))

    frame = photo.resize((20, 10), Image.Resampling.BILINEAR).convert("RGBA")
    frame.putpixel((0, 0), (10, 20, 30, 128))
    offset = webp_animation((64, 48), frame, (10, 6))
    write("webp_anim_offset.webp", offset)
    decoded = Image.open(io.BytesIO(offset))
    assert decoded.size == (64, 48), decoded.size
    write("webp_anim_offset.rgba", decoded.convert("RGBA").tobytes())
    write("webp_anim_huge_canvas.webp", webp_animation((10000, 10000), Image.new("RGBA", (1, 1), (9, 99, 199, 255)), (0, 0)))


if __name__ == "__main__":
    main()
