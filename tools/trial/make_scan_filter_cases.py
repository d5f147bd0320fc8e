#!/usr/bin/env python3
"""Writes the crafted progressive JPEGs of issue 54, finding 7 (the "exact" scan filter was not
exact at 1/8) into Tests/Fixtures/Hostile/scan_filter/, by byte surgery on
Tests/Fixtures/ImageReference/variants/wide_420_progressive.jpg (Pillow's libjpeg ten-scan
script: DC 1/all; Y 1-5, Cr 1-63, Cb 1-63, Y 6-63, Y 1-63 refined; DC refined; Cr, Cb, Y refined).

Run from the repository root (standard library only):

    python3 tools/trial/make_scan_filter_cases.py

Writes:

  repeated_id.jpg           Cr renamed to Cb's id (2) in the frame and the DC scans, its AC scans
                            removed: libjpeg maps a one-component scan of id 2 to the first such
                            component, Cb (the filter took the last)
  chroma_dc_only_eoi.jpg    no chroma AC scans, and an end of image after Y's first refinement,
                            the rest of the file after it (was 18.4 levels off)
  chroma_dc_only_end.jpg    the same, the file ending at that end of image (block smoothing only)
  chroma_never_refined.jpg  Cr's and Cb's AC refinement scans removed (was 0.04 levels off)
  dropped_scan_eoi.jpg      an end of image planted in the middle of Y's last refinement, a scan
                            1/8 drops; the rest of the scan after it (a read of every scan refuses)
  dropped_scan_cut.jpg      the file cut in the middle of that scan (refused as truncated)
"""
from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "ImageReference", "variants", "wide_420_progressive.jpg")
OUT = os.environ.get("SCAN_FILTER_OUT") or os.path.join(ROOT, "Tests", "Fixtures", "Hostile", "scan_filter")
EOI = b"\xff\xd9"


def segments(data: bytes) -> list[tuple[int, bytes]]:
    """The file's markers in order: (code, bytes), a scan's bytes with its entropy-coded data."""
    out, at = [], 2
    while at < len(data):
        assert data[at] == 0xFF, at
        code = data[at + 1]
        if code == 0xD9:
            out.append((code, data[at:at + 2]))
            break
        end = at + 2 + (data[at + 2] << 8 | data[at + 3])
        if code == 0xDA:
            while not (data[end] == 0xFF and data[end + 1] != 0 and not 0xD0 <= data[end + 1] <= 0xD7):
                end += 1
        out.append((code, data[at:end]))
        at = end
    return out


def scan(segment: bytes) -> tuple[list[int], int, int, int]:
    """A scan header's component ids, Ss, Se and Ah."""
    count = segment[4]
    ids = [segment[5 + 2 * i] for i in range(count)]
    tail = 5 + 2 * count
    return ids, segment[tail], segment[tail + 1], segment[tail + 2] >> 4


def join(parts: list[tuple[int, bytes]]) -> bytes:
    return b"\xff\xd8" + b"".join(part for _, part in parts)


def is_scan(part: tuple[int, bytes], ids: list[int], refined: bool | None = None) -> bool:
    if part[0] != 0xDA:
        return False
    scan_ids, start, _, high = scan(part[1])
    return scan_ids == ids and start > 0 and (refined is None or (high > 0) == refined)


def main() -> None:
    data = open(SOURCE, "rb").read()
    parts = segments(data)
    os.makedirs(OUT, exist_ok=True)
    cases: dict[str, bytes] = {}

    renamed = []
    for code, part in [p for p in parts if not is_scan(p, [3])]:
        part = bytearray(part)
        if code == 0xC2:
            assert part[10 + 6] == 3
            part[10 + 6] = 2
        elif code == 0xDA:
            for i in range(part[4]):
                if part[5 + 2 * i] == 3:
                    part[5 + 2 * i] = 2
        renamed.append((code, bytes(part)))
    cases["repeated_id"] = join(renamed)

    no_chroma_ac = [p for p in parts if not is_scan(p, [2]) and not is_scan(p, [3])]
    first_refinement = next(i for i, p in enumerate(no_chroma_ac) if is_scan(p, [1], refined=True))
    head = no_chroma_ac[: first_refinement + 1]
    cases["chroma_dc_only_eoi"] = join(head) + EOI + join(no_chroma_ac[first_refinement + 1:])[2:]
    cases["chroma_dc_only_end"] = join(head) + EOI

    cases["chroma_never_refined"] = join(
        [p for p in parts if not is_scan(p, [2], refined=True) and not is_scan(p, [3], refined=True)])

    last = data.rfind(b"\xff\xda")
    middle = last + (len(data) - last) // 2
    planted = bytearray(data)
    planted[middle:middle + 2] = EOI
    cases["dropped_scan_eoi"] = bytes(planted)
    cases["dropped_scan_cut"] = data[:middle]

    for name, body in cases.items():
        with open(os.path.join(OUT, name + ".jpg"), "wb") as out:
            out.write(body)
        print(f"{name}.jpg: {len(body)} bytes")


if __name__ == "__main__":
    main()
