#!/usr/bin/env python3
"""Build a folder of real photos for the folder-throughput benchmark (Python vs Swift).

Every file is made from the committed photos (Tests/Fixtures/Photos/**: real photos, see
Tests/Fixtures/Photos/SOURCES.md): a seeded random crop of a random source photo, rescaled so it
has between 0.2 and 2 megapixels (the committed photos are ~0.2-0.3 MP, so most files are
upscaled with Lanczos), then saved as

  * JPEG (baseline, quality 85-95, 4:2:0 chroma subsampling), about 3 in 4 files, or
  * 24-bit BMP (uncompressed), about 1 in 4 files,

so that both benchmark sides decode exactly the same bytes, including the two formats' very
different decode costs. Nothing here is committed: the default output is
out/bench/photos. The same seed and Pillow build give byte-identical files.

With --varied (the fidelity set of the decode benchmark), JPEGs vary as photos in the wild do:
quality 60-98, chroma subsampling 4:4:4, 4:2:2 or 4:2:0, one in three progressive, a sensor-like
grain of 0-6 levels (upscaled sources are otherwise smoother than camera photos), and sizes
drawn log-uniformly between --min-mp and --max-mp.

With --phone, JPEGs are saved as phones and web pages save them: quality 80-95, a grain of 1-4
levels, sizes log-uniform between --min-mp and --max-mp, chroma 4:2:0 (half), 4:2:2 or 4:4:4 (a
quarter each), a quarter progressive, and a quarter stored turned with the EXIF orientation that
turns them upright (6 mostly, some 8 and 3), as a phone held upright writes them.
With --as STYLE every JPEG is saved one way instead (the same photos for each style, so sets made
with the same seed differ only in how they are saved): baseline (4:2:0, upright), rotated
(baseline 4:2:0 stored turned, EXIF orientation 6), progressive (4:2:0), 444, 422 (baseline).

Usage: .venv-ref/bin/python Benchmarks/python/make_photo_folder.py [--out DIR] [--count 200]
           [--seed 0] [--min-mp 0.2] [--max-mp 2.0] [--bmp-fraction 0.25] [--varied | --phone |
           --as baseline|rotated|progressive|444|422]
Prints one JSON summary line (files, bytes, formats, megapixel range).
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random

import numpy as np

from PIL import Image

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "Photos")
EXTS = (".jpg", ".jpeg", ".png", ".bmp")


def sources() -> list[str]:
    files = sorted(p for p in glob.glob(os.path.join(PHOTOS, "**", "*"), recursive=True)
                   if p.lower().endswith(EXTS))
    if not files:
        raise SystemExit(f"no photos under {PHOTOS}")
    return files


# EXIF orientation -> the transpose that stores an upright photo so that this tag turns it back
# upright (the inverse of what PIL.ImageOps.exif_transpose applies).
STORED_TURN = {3: Image.Transpose.ROTATE_180, 6: Image.Transpose.ROTATE_90, 8: Image.Transpose.ROTATE_270}
# --as STYLE: (subsampling, progressive, EXIF orientation)
STYLES = {"baseline": ("4:2:0", False, 1), "rotated": ("4:2:0", False, 6), "progressive": ("4:2:0", True, 1),
          "444": ("4:4:4", False, 1), "422": ("4:2:2", False, 1)}


def save_jpeg(img: Image.Image, path: str, quality: int, subsampling: str, progressive: bool,
              orientation: int) -> None:
    """Saves `img` (upright) as a JPEG that shows it upright: stored turned under an EXIF tag."""
    exif = Image.Exif()
    if orientation != 1:
        img = img.transpose(STORED_TURN[orientation])
        exif[0x0112] = orientation
    img.save(path, "JPEG", quality=quality, subsampling=subsampling, optimize=False,
             progressive=progressive, exif=exif.tobytes() if orientation != 1 else b"")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/bench/photos")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-mp", type=float, default=0.2)
    ap.add_argument("--max-mp", type=float, default=2.0)
    ap.add_argument("--bmp-fraction", type=float, default=0.25)
    ap.add_argument("--varied", action="store_true",
                    help="JPEG quality, subsampling, progressive and grain vary; log-uniform sizes")
    ap.add_argument("--phone", action="store_true",
                    help="phone-like JPEGs: progressive, chroma and EXIF orientation vary")
    ap.add_argument("--as", dest="style", choices=sorted(STYLES),
                    help="every JPEG saved one way (the same photos whatever the style)")
    args = ap.parse_args()
    if sum([args.varied, args.phone, args.style is not None]) > 1:
        ap.error("--varied, --phone and --as are exclusive")
    if args.count < 1 or not 0 < args.min_mp <= args.max_mp:
        ap.error("need --count >= 1 and 0 < --min-mp <= --max-mp")

    rng = random.Random(args.seed)
    srcs = sources()
    images = {}
    for p in srcs:
        with Image.open(p) as im:
            images[p] = im.convert("RGB")  # greyscale sources become 3-channel

    if os.path.isdir(args.out):
        # Only ever delete what this script writes; refuse to touch a folder with other files.
        own = [f for f in os.listdir(args.out)
               if f.startswith("photo_") and f.endswith((".jpg", ".bmp"))]
        if len(own) != len(os.listdir(args.out)):
            raise SystemExit(f"{args.out} holds files this script did not make; pick another --out")
        for f in own:
            os.remove(os.path.join(args.out, f))
    os.makedirs(args.out, exist_ok=True)
    order = []
    stats = {"jpeg": 0, "bmp": 0}
    mps, total = [], 0
    for i in range(args.count):
        if not order:  # cycle through the sources in a fresh random order
            order = srcs[:]
            rng.shuffle(order)
        src = images[order.pop()]
        w, h = src.size
        # random crop: 55-100 % of each side
        cw = max(16, int(w * rng.uniform(0.55, 1.0)))
        ch = max(16, int(h * rng.uniform(0.55, 1.0)))
        x0, y0 = rng.randint(0, w - cw), rng.randint(0, h - ch)
        crop = src.crop((x0, y0, x0 + cw, y0 + ch))
        if args.varied or args.phone or args.style:
            target_mp = math.exp(rng.uniform(math.log(args.min_mp), math.log(args.max_mp)))
        else:
            target_mp = rng.uniform(args.min_mp, args.max_mp)
        f = (target_mp * 1e6 / (cw * ch)) ** 0.5
        size = (max(1, round(cw * f)), max(1, round(ch * f)))
        img = crop.resize(size, Image.LANCZOS)
        if args.varied or args.phone or args.style:
            sigma = rng.uniform(0.0, 6.0) if args.varied else rng.uniform(1.0, 4.0)
            if sigma > 0.5:
                noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0.0, sigma, (size[1], size[0], 1))
                img = Image.fromarray(np.clip(np.asarray(img, dtype=np.float32) + noise, 0, 255).astype(np.uint8))
        if rng.random() < args.bmp_fraction:
            name = f"photo_{i:04d}.bmp"
            img.save(os.path.join(args.out, name), "BMP")  # RGB -> 24-bit BMP
            stats["bmp"] += 1
        else:
            name = f"photo_{i:04d}.jpg"
            path = os.path.join(args.out, name)
            if args.phone or args.style:
                # Every draw is made whatever the style, so each style saves the same photos.
                quality = rng.randint(80, 95)
                subsampling = rng.choice(["4:2:0", "4:2:0", "4:2:2", "4:4:4"])
                progressive = rng.random() < 0.25
                orientation = rng.choice([6, 6, 8, 3]) if rng.random() < 0.25 else 1
                if args.style:
                    subsampling, progressive, orientation = STYLES[args.style]
                save_jpeg(img, path, quality, subsampling, progressive, orientation)
                stats["progressive" if progressive else "baseline"] = stats.get(
                    "progressive" if progressive else "baseline", 0) + 1
                stats[subsampling] = stats.get(subsampling, 0) + 1
                if orientation != 1:
                    stats["rotated"] = stats.get("rotated", 0) + 1
            elif args.varied:
                img.save(os.path.join(args.out, name), "JPEG", quality=rng.randint(60, 98),
                         subsampling=rng.choice(["4:4:4", "4:2:2", "4:2:0"]), optimize=False,
                         progressive=rng.random() < 1 / 3)
            else:
                img.save(os.path.join(args.out, name), "JPEG", quality=rng.randint(85, 95),
                         subsampling="4:2:0", optimize=False, progressive=False)
            stats["jpeg"] += 1
        mps.append(size[0] * size[1] / 1e6)
        total += os.path.getsize(os.path.join(args.out, name))

    print(json.dumps({"folder": args.out, "files": args.count, "bytes": total,
                      "formats": stats, "sources": len(srcs), "seed": args.seed,
                      "megapixels": {"min": round(min(mps), 3), "max": round(max(mps), 3),
                                     "mean": round(sum(mps) / len(mps), 3)}}))


if __name__ == "__main__":
    main()
