#!/usr/bin/env python3
"""Bulk classification as a Python user writes it for throughput: a multiprocessing.Pool.

N worker processes, each with its own single-threaded ai_edge_litert interpreter (made once, in
the pool's initializer), each doing the whole job for an image: Pillow decode, centre square,
BILINEAR resize to 224x224, uint8 tensor, invoke, dequantize, top K. Results come back in path
order (Pool.imap) and are written as JSON lines, as bulk_folder.py writes them:

  {"file": PATH, "labels": [{"label", "index", "score"}, ...], "decode_ms", "preprocess_ms",
   "inference_ms"}       or       {"file": PATH, "error": MESSAGE}

--mode plain  Image.open, convert("RGB"), exif_transpose (in place), crop, resize: every pixel
              decoded (what NetRunner's
              exact path must equal byte for byte).
--mode draft  the tuned script: JPEG draft("RGB", (224, 224)) first (libjpeg scales by 1/2, 1/4
              or 1/8 in the DCT domain while decoding), or a HEIC's own thumbnail where it is at
              least 224 on its shorter side (pillow-heif's get_thumbnail), then one resize with
              box= and reducing_gap=2.0.
--mode invoke no image at all: each worker invokes the model on zeros once per file, the
              runtime's limit at N single-threaded interpreters.

Usage: .venv-bench/bin/python Benchmarks/python/pool_folder.py DIR --workers N
          [--mode plain|draft|invoke] [--output FILE] [--top 5] [--model M] [--labels L]
Prints ONE JSON object: {"workers", "mode", "images", "failed", "wall_s", "images_per_s", ...}.
wall_s is the whole run after the imports: the pool's start (N interpreters), listing, every
image, writing the output. Exit status 1 if any image failed.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time

import numpy as np
from PIL import Image, ImageOps
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZE = 224
EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm", ".webp", ".gif", ".tif", ".tiff", ".heic", ".heif",
        ".avif")

try:  # HEIC as a Python user reads it (Pillow reads WebP, GIF, TIFF and AVIF itself)
    import pillow_heif
    pillow_heif.register_heif_opener()
except ImportError:
    pass

_state: dict = {}


def list_images(folder: str) -> list[str]:
    found = []
    for root, _dirs, files in os.walk(folder):
        found.extend(os.path.join(root, f) for f in files if f.lower().endswith(EXTS))
    found.sort()
    return found


def init_worker(model: str, mode: str) -> None:
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    _state.update(it=it, inp=inp["index"], out=out["index"], mode=mode,
                  zeros=np.zeros(inp["shape"], dtype=inp["dtype"]),
                  quant=out["quantization"])
    it.set_tensor(inp["index"], _state["zeros"])
    it.invoke()


def preprocess(path: str, mode: str):
    t0 = time.perf_counter()
    img = heic_thumbnail(path) if mode == "draft" and path.lower().endswith((".heic", ".heif")) else None
    if img is None:
        with Image.open(path) as im:
            if mode == "draft" and im.format == "JPEG":
                im.draft("RGB", (SIZE, SIZE))
            img = im.convert("RGB")
    # Upright as the EXIF orientation says (a phone's portrait photos are stored turned).
    ImageOps.exif_transpose(img, in_place=True)
    t1 = time.perf_counter()
    w, h = img.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    if mode == "draft":
        small = img.resize((SIZE, SIZE), Image.BILINEAR, box=(left, top, left + side, top + side),
                           reducing_gap=2.0)
    else:
        small = img.crop((left, top, left + side, top + side)).resize((SIZE, SIZE), Image.BILINEAR)
    x = np.asarray(small, dtype=np.uint8).reshape(1, SIZE, SIZE, 3)
    return x, t1 - t0, time.perf_counter() - t1


def heic_thumbnail(path: str):
    """A HEIC's smallest thumbnail of at least SIZE on its shorter side, as RGB, or None."""
    heif = pillow_heif.open_heif(path, convert_hdr_to_8bit=True)
    primary = heif.primary_index if hasattr(heif, "primary_index") else 0
    image = heif[primary]
    best = None
    for index in range(len(image.info.get("thumbnails", []))):
        thumbnail = image.get_thumbnail(index)
        if min(thumbnail.size) >= SIZE and (best is None or thumbnail.size[0] < best.size[0]):
            best = thumbnail
    return best.to_pillow().convert("RGB") if best is not None else None


def classify(path: str):
    it, mode = _state["it"], _state["mode"]
    try:
        if mode == "invoke":
            x, t_dec, t_pre = _state["zeros"], 0.0, 0.0
        else:
            x, t_dec, t_pre = preprocess(path, mode)
        t0 = time.perf_counter()
        it.set_tensor(_state["inp"], x)
        it.invoke()
        y = it.get_tensor(_state["out"])[0]
        t_inf = time.perf_counter() - t0
        scale, zero = _state["quant"]
        p = (y.astype(np.float32) - zero) * scale if scale else y.astype(np.float32)
        top = np.argsort(-p, kind="stable")[:5]
        return path, [(int(i), round(float(p[i]), 6)) for i in top], t_dec, t_pre, t_inf, None
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the folder
        return path, None, 0.0, 0.0, 0.0, f"{type(e).__name__}: {e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--mode", choices=["plain", "draft", "invoke"], default="plain")
    ap.add_argument("--output", default="out/bench/pool-python.jsonl")
    ap.add_argument("--model", default=os.path.join(ROOT, "Models",
                                                    "mobilenet_v2_1.0_224_uint8.tflite"))
    ap.add_argument("--labels", default=os.path.join(ROOT, "Models", "imagenet_labels.txt"))
    args = ap.parse_args()
    if args.workers < 1:
        ap.error("--workers must be >= 1")
    with open(args.labels, encoding="utf-8") as f:
        labels = [line.rstrip("\n") for line in f]
    start = time.perf_counter()
    files = list_images(args.folder)
    failed = 0
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers, initializer=init_worker, initargs=(args.model, args.mode)) as pool, \
            open(args.output, "w", encoding="utf-8") as out:
        for path, top, t_dec, t_pre, t_inf, err in pool.imap(classify, files, chunksize=2):
            if err is not None:
                failed += 1
                out.write(json.dumps({"file": path, "error": err}) + "\n")
                continue
            out.write(json.dumps({
                "file": path,
                "labels": [{"label": labels[i], "index": i, "score": s} for i, s in top],
                "decode_ms": round(t_dec * 1e3, 3), "preprocess_ms": round(t_pre * 1e3, 3),
                "inference_ms": round(t_inf * 1e3, 3)}) + "\n")
    wall = time.perf_counter() - start
    print(json.dumps({"workers": args.workers, "mode": args.mode, "images": len(files),
                      "failed": failed, "wall_s": round(wall, 4),
                      "images_per_s": round(len(files) / wall, 2) if wall > 0 else None,
                      "pillow": Image.__version__, "output": args.output}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
