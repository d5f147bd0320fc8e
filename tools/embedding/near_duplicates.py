#!/usr/bin/env python3
"""Measures what a cosine similarity means for near-duplicates (docs/embeddings.md#what-a-similarity-means).

For each photo it makes copies with Pillow (halved, re-encoded at JPEG quality 90 and 60, a
crop of its middle 90%, its mirror image, halved and then re-encoded at quality 60), embeds the
originals and the copies with `netrunner bulk` (the embedder given, by default the installed
MobileNet V1 extractor), and prints, for each kind of copy, the cosines of photo and copy
(their least, percentiles, and how many a threshold finds), against the cosines of every pair of
two different photos.

Usage: near_duplicates.py [--netrunner PATH] [--model ID|PATH] [--work DIR] [--json OUT]
                          PHOTO|FOLDER...

Runs with the test venv's Pillow and numpy (.venv-test, scripts/setup-test-python.sh). The photos
used for the table in docs/embeddings.md: tools/embedding/near_duplicates.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageOps

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
THRESHOLDS = (0.99, 0.98, 0.97, 0.96, 0.95, 0.93, 0.90, 0.85)


def halved(image):
    return image.resize((max(1, image.width // 2), max(1, image.height // 2)), Image.LANCZOS)


def crop90(image):
    dx, dy = round(image.width * 0.05), round(image.height * 0.05)
    return image.crop((dx, dy, image.width - dx, image.height - dy))


# Each kind of copy: how it is made, and the format it is saved in (PNG: no loss beyond the change).
COPIES = {
    "jpeg_q90": (lambda image: image, ("JPEG", 90)),
    "jpeg_q60": (lambda image: image, ("JPEG", 60)),
    "halved": (halved, ("PNG", None)),
    "halved_q60": (halved, ("JPEG", 60)),
    "crop90": (crop90, ("PNG", None)),
    "mirrored": (ImageOps.mirror, ("PNG", None)),
}


def photos(arguments):
    found = []
    for argument in arguments:
        if os.path.isdir(argument):
            for folder, _, names in sorted(os.walk(argument)):
                found += [os.path.join(folder, n) for n in sorted(names) if n.lower().endswith(PHOTO_SUFFIXES)]
        else:
            found.append(argument)
    if len(found) < 3:
        sys.exit("near_duplicates.py: give at least 3 photos")
    return found


def make_copies(originals, work):
    """Copies every photo into work/originals (as it is) and work/<kind>/; returns the names."""
    names = []
    for index, path in enumerate(originals):
        name = f"{index:03d}"
        names.append(name)
        os.makedirs(os.path.join(work, "originals"), exist_ok=True)
        suffix = os.path.splitext(path)[1].lower()
        shutil.copyfile(path, os.path.join(work, "originals", name + suffix))
        with Image.open(path) as opened:
            image = ImageOps.exif_transpose(opened).convert("RGB")
        for kind, (make, (form, quality)) in COPIES.items():
            folder = os.path.join(work, kind)
            os.makedirs(folder, exist_ok=True)
            target = os.path.join(folder, name + (".jpg" if form == "JPEG" else ".png"))
            copy = make(image)
            if form == "JPEG":
                copy.save(target, "JPEG", quality=quality)
            else:
                copy.save(target, "PNG")
    return names


def embeddings(netrunner, model, work):
    """{(kind, name): unit embedding} from one bulk run over work/."""
    results = os.path.join(work, "embeddings.jsonl")
    command = [netrunner, "bulk", work, "--output", results, "--no-progress", "--restart"]
    if model:
        command += ["--model", model]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    found = {}
    with open(results, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            vector = (record.get("inference_results") or {}).get("embedding", {}).get("float_embedding")
            if vector is None:
                sys.exit(f"near_duplicates.py: {record.get('image')} failed: {record.get('error_description')}")
            kind = os.path.basename(os.path.dirname(record["image"]))
            name = os.path.splitext(os.path.basename(record["image"]))[0]
            vector = np.asarray(vector, dtype=np.float64)
            found[(kind, name)] = vector / np.linalg.norm(vector)
    return found


def summary(values):
    values = np.sort(np.asarray(values))
    return {
        "count": int(values.size),
        "min": float(values[0]),
        "p5": float(np.percentile(values, 5)),
        "p25": float(np.percentile(values, 25)),
        "median": float(np.median(values)),
        "p95": float(np.percentile(values, 95)),
        "p99": float(np.percentile(values, 99)),
        "max": float(values[-1]),
        "at_or_above": {f"{t:.2f}": int((values >= t).sum()) for t in THRESHOLDS},
    }


def main(arguments):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("photos", nargs="+")
    parser.add_argument("--netrunner", default=".build/debug/netrunner")
    parser.add_argument("--model", default=None, help="the embedder (default: netrunner's installed one)")
    parser.add_argument("--work", help="keep the copies and embeddings here (default: a temporary folder)")
    parser.add_argument("--json", help="write the figures here too")
    options = parser.parse_args(arguments)
    originals = photos(options.photos)
    work = options.work or tempfile.mkdtemp(prefix="near-duplicates-")
    try:
        names = make_copies(originals, work)
        vectors = embeddings(options.netrunner, options.model, work)
    finally:
        if not options.work:
            shutil.rmtree(work, ignore_errors=True)
    figures = {"photos": len(names), "copies": {}}
    for kind in COPIES:
        figures["copies"][kind] = summary([vectors[("originals", n)] @ vectors[(kind, n)] for n in names])
    matrix = np.stack([vectors[("originals", n)] for n in names])
    pairs = (matrix @ matrix.T)[np.triu_indices(len(names), k=1)]
    figures["unrelated"] = summary(pairs)
    print(f"{len(names)} photos; cosine of a photo and its copy, and of two different photos:\n")
    columns = ["min", "p5", "median", "max"]
    print("| pair | " + " | ".join(columns) + " | " + " | ".join(f">= {t:.2f}" for t in THRESHOLDS) + " |")
    print("| --- " * (1 + len(columns) + len(THRESHOLDS)) + "|")
    for kind, values in list(figures["copies"].items()) + [("unrelated", figures["unrelated"])]:
        counts = values["at_or_above"]
        print(f"| {kind} | " + " | ".join(f"{values[c]:.3f}" for c in columns) + " | "
              + " | ".join(f"{counts[f'{t:.2f}']}/{values['count']}" for t in THRESHOLDS) + " |")
    if options.json:
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
