#!/usr/bin/env python3
"""Build Tests/Fixtures/Photos/faces/two_portraits.jpg (+ its SOURCES.md) from committed photos.

No public-domain / CC0 photo with two or more faces was found in Debian's packages or on PyPI
(checked: scikit-image 0.26.0 data, matplotlib 3.11.2 sample_data, scikit-learn images, OpenCV
and darknet samples, the face_recognition 1.3.0 sdist test images - the last are White House
photos whose embedded EXIF notes forbid manipulation and most reuse, so they are not used).
So this is a *composite* of the two public-domain portraits already committed:

  left : Tests/Fixtures/Photos/test/grace_hopper.jpg, crop (68, 43)-(468, 443), resized to 336x336
  right: Tests/Fixtures/Photos/calibration/astronaut.jpg, crop (96, 2)-(352, 258), resized to 240x240
  on a 640x400 flat grey (118, 118, 118) canvas at (20, 32) and (380, 120); Pillow LANCZOS,
  JPEG quality 92. Two faces of different sizes in a wide (1.6:1) frame, so BlazeFace's letterbox
  padding is exercised (both faces are found by MediaPipe 0.10.21 itself).

Runs in .venv-ref (Pillow only). Deterministic for a given Pillow/libjpeg build.
Usage: .venv-ref/bin/python tools/detectors/make_face_photos.py
"""
from __future__ import annotations

import hashlib
import os

from PIL import Image

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "Photos")
OUT_DIR = os.path.join(PHOTOS, "faces")
# grace_hopper.jpg is a byte-for-byte copy of matplotlib's file (sha256 pinned in fetch_photos.sh);
# astronaut.jpg is re-encoded by fetch_photos.sh, so its hash is recorded in SOURCES.md instead.
GRACE_HOPPER_SHA256 = "a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    gh_path = os.path.join(PHOTOS, "test", "grace_hopper.jpg")
    as_path = os.path.join(PHOTOS, "calibration", "astronaut.jpg")
    if sha256(gh_path) != GRACE_HOPPER_SHA256:
        raise SystemExit("grace_hopper.jpg changed; re-check the composite")
    gh = Image.open(gh_path).convert("RGB")
    ast = Image.open(as_path).convert("RGB")
    canvas = Image.new("RGB", (640, 400), (118, 118, 118))
    canvas.paste(gh.crop((68, 43, 468, 443)).resize((336, 336), Image.LANCZOS), (20, 32))
    canvas.paste(ast.crop((96, 2, 352, 258)).resize((240, 240), Image.LANCZOS), (380, 120))
    os.makedirs(OUT_DIR, exist_ok=True)
    out = os.path.join(OUT_DIR, "two_portraits.jpg")
    canvas.save(out, "JPEG", quality=92, optimize=False)
    size, digest = os.path.getsize(out), sha256(out)
    with open(os.path.join(OUT_DIR, "SOURCES.md"), "w") as f:
        f.write(f"""# Face photos: provenance and licences

Produced by `tools/detectors/make_face_photos.py` (do not edit by hand). Used by the BlazeFace
detection reference (`Tests/Fixtures/DetectionReference/`). The other face photos used there are
`test/grace_hopper.jpg` and `calibration/astronaut.jpg` (see `../SOURCES.md`).

| File | Bytes | sha256 | Made from | Licence |
|---|---|---|---|---|
| two_portraits.jpg | {size} | `{digest}` | composite of `test/grace_hopper.jpg` (crop 68,43-468,443 -> 336x336 at 20,32) and `calibration/astronaut.jpg` (sha256 `{sha256(as_path)}`; crop 96,2-352,258 -> 240x240 at 380,120) on a 640x400 grey (118,118,118) canvas; Pillow LANCZOS, JPEG q92 | Public domain: both sources are public domain (US Navy photo of Grace Hopper; NASA photo of Eileen Collins), see `../SOURCES.md` |

Why a composite: no public-domain or CC0 photo with two or more faces was found in Debian's
packages or on PyPI (checked scikit-image 0.26.0 `skimage/data`, matplotlib 3.11.2
`sample_data`, scikit-learn's `datasets/images` (CC-BY, no faces), OpenCV's and darknet's
samples (unclear licence / one face), and the face_recognition 1.3.0 sdist's test images, which
are White House photos whose embedded notes forbid manipulation and most reuse). It is not a
real group photo: the two faces sit on separate backgrounds of different scale.
""")
    print(f"faces/two_portraits.jpg {size} bytes sha256 {digest}")


if __name__ == "__main__":
    main()
