"""Pillow's model inputs for one photo resized to many shapes, for Tests/NetRunnerTests'
PillowShapeSweepTests (run with .venv-test/bin/python, which pins Pillow).

    pillow_resize_sweep.py PHOTO OUT_DIR SPEC_JSON

SPEC_JSON: {"shapes": [[w, h], ...], "inputs": [[W, H], ...]}. The photo, in RGB, is resized
with Image.BILINEAR to each shape: the sources, written one after the other as packed RGB to
OUT_DIR/sources.rgb. Each source is then made into each input's pixels in three ways, written
to OUT_DIR/reference.rgb in the order shape, input, then stretch, centre square, letterbox:

  stretch       src.resize((W, H), BILINEAR)
  centre square src.crop(largest centred square, offsets rounded down).resize((W, H), BILINEAR)
  letterbox     src.resize((w * s, h * s) rounded, BILINEAR), s = min(W / w, H / h), pasted
                centred (offsets rounded down) on black

One call does every shape, so that the test pays for one Python start.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from PIL import Image


def rounded(value: float) -> int:
    """Half away from zero, as Swift's rounded() (value >= 0)."""
    whole = math.floor(value)
    return whole + 1 if value - whole >= 0.5 else whole


def centre_square(img: Image.Image) -> Image.Image:
    w, h = img.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    return img.crop((left, top, left + side, top + side))


def letterbox(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    (w, h), (width, height) = img.size, size
    scale = min(width / max(w, 1), height / max(h, 1))
    placed = (
        min(width, max(1, rounded(w * scale))),
        min(height, max(1, rounded(h * scale))),
    )
    canvas = Image.new("RGB", size, (0, 0, 0))
    canvas.paste(
        img.resize(placed, Image.BILINEAR),
        ((width - placed[0]) // 2, (height - placed[1]) // 2),
    )
    return canvas


def main() -> None:
    photo, out, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    with Image.open(photo) as opened:
        image = opened.convert("RGB")
    with open(out / "sources.rgb", "wb") as sources, open(out / "reference.rgb", "wb") as reference:
        for w, h in spec["shapes"]:
            source = image.resize((w, h), Image.BILINEAR)
            sources.write(source.tobytes())
            for width, height in spec["inputs"]:
                size = (width, height)
                reference.write(source.resize(size, Image.BILINEAR).tobytes())
                reference.write(centre_square(source).resize(size, Image.BILINEAR).tobytes())
                reference.write(letterbox(source, size).tobytes())
    print(Image.__version__)


if __name__ == "__main__":
    main()
