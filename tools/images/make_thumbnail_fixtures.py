#!/usr/bin/env python3
"""Writes the HEIC-with-thumbnail fixtures of Tests/NetRunnerImageTests and what pillow-heif
decodes of each one's thumbnail (the reference NetRunnerImage's thumbnail path is compared with;
the images themselves decode as the Formats fixtures show).

pillow-heif 1.8 writes no thumbnails, so the files are made as a phone makes them, by an encoder
that does: Debian's heif-enc (libheif-examples and libheif-plugin-x265 from bookworm-backports,
libheif 1.19.7, `--thumb N`). Run from the repository root in the venv of
tools/images/requirements-formats.txt (see make_format_fixtures.py):

    sudo apt-get install -t bookworm-backports libheif-examples libheif-plugin-x265
    .venv-formats/bin/python tools/images/make_thumbnail_fixtures.py

Each fixture is made from a committed photo (Tests/Fixtures/Photos/test/coffee.jpg, scaled with
Pillow's BILINEAR), written as PNG and encoded by heif-enc. Writes into Tests/Fixtures/Thumbnails/
(or $THUMBNAILS_OUT):

  <name>.heic         the fixture
  <name>.thumb.rgb    pillow-heif's decode of its first thumbnail: raw RGB rows
  thumbnails.json     per fixture: the image's and the thumbnail's sizes, the versions, what it
                      exercises
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np
import pillow_heif
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("THUMBNAILS_OUT") or os.path.join(ROOT, "Tests", "Fixtures", "Thumbnails")
SOURCE = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "coffee.jpg")

# name: (image size, heif-enc's --thumb, quality, what it exercises)
FIXTURES = {
    "heic_thumbnail": ((480, 320), 336, 60,
                       "a 336x224 thumbnail: enough for a 224x224 classifier's centre square"),
    "heic_thumbnail_small": ((480, 320), 120, 60,
                             "a 120x80 thumbnail: too small for a 128x128 detector, so never used"),
}


def heif_enc_version() -> str:
    text = subprocess.run(["heif-enc", "--version"], capture_output=True, text=True).stdout.strip()
    return text.splitlines()[0] if text else "unknown"


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    index: dict = {
        "pillow_heif": pillow_heif.__version__, "libheif": pillow_heif.libheif_info()["libheif"],
        "encoder": f"heif-enc {heif_enc_version()} (x265)",
        "source": "Tests/Fixtures/Photos/test/coffee.jpg scaled (BILINEAR)", "fixtures": {},
    }
    photo = Image.open(SOURCE).convert("RGB")
    for name, (size, thumb, quality, what) in FIXTURES.items():
        path = os.path.join(OUT, f"{name}.heic")
        with tempfile.TemporaryDirectory() as scratch:
            source = os.path.join(scratch, "source.png")
            photo.resize(size, Image.Resampling.BILINEAR).save(source)
            subprocess.run(["heif-enc", "-q", str(quality), "--thumb", str(thumb), source, "-o", path],
                           check=True, capture_output=True)
        heif = pillow_heif.open_heif(path, convert_hdr_to_8bit=True)
        image = np.asarray(heif[0].to_pillow().convert("RGB"))
        thumbnail = np.asarray(heif[0].get_thumbnail(0).to_pillow().convert("RGB"))
        with open(os.path.join(OUT, f"{name}.thumb.rgb"), "wb") as handle:
            handle.write(thumbnail.tobytes())
        index["fixtures"][f"{name}.heic"] = {
            "width": image.shape[1], "height": image.shape[0],
            "thumbnail_width": thumbnail.shape[1], "thumbnail_height": thumbnail.shape[0], "exercises": what,
        }
    with open(os.path.join(OUT, "thumbnails.json"), "w", encoding="utf-8") as handle:
        json.dump(index, handle, indent=2, sort_keys=True)
        handle.write("\n")
    print(f"wrote {len(index['fixtures'])} fixtures to {OUT}")


if __name__ == "__main__":
    main()
