#!/usr/bin/env python3
"""Folder-throughput benchmark, Python side: classify every image file in a folder.

Per file: decode (Pillow) -> RGB -> centre square crop -> 224x224 BILINEAR -> input tensor in
the model's dtype (Models/SOURCES.md contract: float32 = byte / 255; uint8 / int8 =
clamp(round((byte / 255) / scale) + zero_point), i.e. the raw byte for uint8 and byte - 128 for
int8) -> ai_edge_litert invoke -> dequantize the output -> top-5.

Modes:
  plain  Image.open, .convert("RGB"), .crop(centre square), .resize((224, 224), BILINEAR).
  tuned  JPEGs get Image.draft("RGB", (224, 224)) before decoding, so libjpeg scales by 1/2,
         1/4 or 1/8 in the DCT domain (the result stays >= 224 on both sides) and converts
         YCbCr -> RGB itself; then one .resize((224, 224), BILINEAR, box=<centre square>,
         reducing_gap=2.0) does crop + resize without a crop copy, with a cheap integer
         pre-reduction for large (e.g. BMP) images. Results differ slightly from plain (compare
         the top-1 lists).

Concurrency:
  --threads N  interpreter threads (XNNPACK), default 1.
  --workers N  0 (default): decode + preprocess inline in the main thread, then inference.
               N >= 1: decode + preprocess run in a pool of N threads (Pillow releases the GIL
               while decoding and resampling), at most 2N images ahead; inference and top-5 stay
               in the main thread, in file order.
One warm-up invoke (zeros) runs before the clock starts; interpreter creation is reported as
init_ms and is not in wall_s.

Usage: .venv-ref/bin/python Benchmarks/python/classify_folder.py out/bench/photos \
          [--mode plain|tuned] [--threads 1] [--workers 0] \
          [--model Models/mobilenet_v2_1.0_224_float32.tflite] [--labels Models/imagenet_labels.txt]
Prints ONE JSON object on stdout: {"runtime", "model", "mode", "threads", "workers", "images",
"init_ms", "wall_s", "images_per_s", "stage_mean_ms": {"decode", "preprocess", "inference",
"postprocess"}, "top1": {file: label}, "top1_score": {file: probability}}.
decode/preprocess means are per-image times measured in whichever thread did the work (with
workers they overlap inference and each other, so the stage means do not add up to wall time).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

import numpy as np
from PIL import Image
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZE = 224
EXTS = (".jpg", ".jpeg", ".png", ".bmp")


def list_images(folder: str) -> list[str]:
    return sorted(f for f in os.listdir(folder) if f.lower().endswith(EXTS))


def load_labels(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split(",")[0].strip() for line in f]


class Preprocessor:
    """Image file -> input tensor [1, 224, 224, 3] in the model's input dtype."""

    def __init__(self, detail: dict, mode: str):
        self.mode = mode
        self.dtype = np.dtype(detail["dtype"])
        scale, zero = detail["quantization"]
        if self.dtype.kind == "f":
            self.lut = None
        else:  # byte -> quantized value, computed once for all 256 bytes
            info = np.iinfo(self.dtype)
            q = np.round((np.arange(256, dtype=np.float64) / 255.0) / scale) + zero
            self.lut = np.clip(q, info.min, info.max).astype(self.dtype)

    def __call__(self, path: str):
        t0 = time.perf_counter()
        with Image.open(path) as im:
            if self.mode == "tuned" and im.format == "JPEG":
                im.draft("RGB", (SIZE, SIZE))
            img = im.convert("RGB")  # forces the decode
        t1 = time.perf_counter()
        w, h = img.size
        side = min(w, h)
        left, top = (w - side) // 2, (h - side) // 2
        box = (left, top, left + side, top + side)
        if self.mode == "tuned":
            small = img.resize((SIZE, SIZE), Image.BILINEAR, box=box, reducing_gap=2.0)
        else:
            small = img.crop(box).resize((SIZE, SIZE), Image.BILINEAR)
        u8 = np.asarray(small, dtype=np.uint8)
        if self.lut is None:
            x = u8.astype(np.float32) / np.float32(255.0)
        else:
            x = self.lut[u8]
        x = x.reshape(1, SIZE, SIZE, 3)
        t2 = time.perf_counter()
        return x, t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", default="out/bench/photos")
    ap.add_argument("--mode", choices=["plain", "tuned"], default="plain")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--model", default=os.path.join(ROOT, "Models",
                                                    "mobilenet_v2_1.0_224_float32.tflite"))
    ap.add_argument("--labels", default=os.path.join(ROOT, "Models", "imagenet_labels.txt"))
    args = ap.parse_args()
    if args.threads < 1 or args.workers < 0:
        ap.error("--threads must be >= 1 and --workers >= 0")
    files = list_images(args.folder)
    if not files:
        sys.exit(f"no .jpg/.jpeg/.png/.bmp files in {args.folder}")
    labels = load_labels(args.labels)

    t0 = time.perf_counter()
    it = Interpreter(model_path=args.model, num_threads=args.threads)
    it.allocate_tensors()
    init_s = time.perf_counter() - t0
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    if list(inp["shape"]) != [1, SIZE, SIZE, 3]:
        sys.exit(f"model input shape {list(inp['shape'])}, expected [1, {SIZE}, {SIZE}, 3]")
    o_scale, o_zero = out["quantization"]
    prep = Preprocessor(inp, args.mode)
    it.set_tensor(inp["index"], np.zeros(inp["shape"], dtype=inp["dtype"]))
    it.invoke()  # warm-up, not timed

    stage = collections.defaultdict(float)
    top1, top1_score = {}, {}

    def classify(name, x):
        t_a = time.perf_counter()
        it.set_tensor(inp["index"], x)
        it.invoke()
        y = it.get_tensor(out["index"])[0]
        t_b = time.perf_counter()
        p = (y.astype(np.float32) - o_zero) * o_scale if o_scale else y.astype(np.float32)
        idx = np.argpartition(-p, 5)[:5]
        idx = idx[np.lexsort((idx, -p[idx]))]  # top-5, ties by ascending class index
        top1[name] = labels[int(idx[0])]
        top1_score[name] = round(float(p[idx[0]]), 4)
        stage["inference"] += t_b - t_a
        stage["postprocess"] += time.perf_counter() - t_b

    start = time.perf_counter()
    if args.workers == 0:
        for name in files:
            x, t_dec, t_pre = prep(os.path.join(args.folder, name))
            stage["decode"] += t_dec
            stage["preprocess"] += t_pre
            classify(name, x)
    else:
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            todo = iter(files)
            pending = collections.deque()
            for name in todo:
                pending.append((name, pool.submit(prep, os.path.join(args.folder, name))))
                if len(pending) >= 2 * args.workers:
                    break
            while pending:
                name, fut = pending.popleft()
                nxt = next(todo, None)
                if nxt is not None:
                    pending.append((nxt, pool.submit(prep, os.path.join(args.folder, nxt))))
                x, t_dec, t_pre = fut.result()
                stage["decode"] += t_dec
                stage["preprocess"] += t_pre
                classify(name, x)
    wall = time.perf_counter() - start

    n = len(files)
    print(json.dumps({
        "runtime": f"ai_edge_litert {version('ai-edge-litert')}, pillow {Image.__version__}, "
                   f"numpy {np.__version__}",
        "model": os.path.relpath(args.model, ROOT) if args.model.startswith(ROOT) else args.model,
        "mode": args.mode,
        "threads": args.threads,
        "workers": args.workers,
        "images": n,
        "init_ms": round(init_s * 1e3, 3),
        "wall_s": round(wall, 4),
        "images_per_s": round(n / wall, 2),
        "stage_mean_ms": {k: round(stage[k] / n * 1e3, 3)
                          for k in ("decode", "preprocess", "inference", "postprocess")},
        "top1": top1,
        "top1_score": top1_score,
    }))


if __name__ == "__main__":
    main()
