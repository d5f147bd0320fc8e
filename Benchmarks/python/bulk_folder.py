#!/usr/bin/env python3
"""Bulk classification, Python side: the job `netrunner bulk DIR` does, written as a user would
write it well with Pillow + numpy + ai_edge_litert.

Every image file under DIR (searched recursively, sorted by path) is classified with the uint8
MobileNetV2 (same file as netrunner's embedded default model) and one JSON line per image is
written to --output, in path order:

  {"file": PATH, "labels": [{"label", "index", "score"}, ...top K],
   "decode_ms", "preprocess_ms", "inference_ms"}       or       {"file": PATH, "error": MESSAGE}

Per file: Image.open -> JPEG draft("RGB", (224, 224)) (libjpeg scales by 1/2, 1/4 or 1/8 in the
DCT domain, result >= 224 per side) -> RGB -> one resize((224, 224), BILINEAR,
box=<centre square>, reducing_gap=2.0) (crop + resize without a crop copy) -> uint8 tensor
[1, 224, 224, 3] (the model's input is uint8 with scale 1/255, zero 0, i.e. the raw bytes) ->
invoke -> dequantize the uint8 output ((q - zero) * scale, scale 1/256) -> top K (ties by
ascending class index, like netrunner). This is classify_folder.py's `tuned` preprocessing.
A file that fails (unreadable, not an image, ...) gets an error line and the others go on.

Concurrency (--threads N, the interpreter threads; --workers W, --layout):
  auto      (default) pipeline with W=1 for N=1, replicas for N >= 2: the fastest honest setups
            measured on a 2-vCPU machine (see README.md).
  pipeline  one interpreter with num_threads=N in the main thread; decode + preprocess
            run in a pool of W threads (Pillow releases the GIL while decoding and resampling),
            at most 2W images ahead; W=0 decodes inline. Default W: 1 for N=1, else 2.
            With N=1, W=1 this is netrunner bulk's own layout for --threads 1.
  replicas  N threads, each with its own single-threaded interpreter, each doing the whole
            decode + preprocess + invoke for an image (ai_edge_litert releases the GIL in
            invoke), at most 2N images ahead; results are still written in path order. This is
            netrunner bulk's own layout for --threads N >= 2; --workers is ignored.
Interpreters are created and warmed up (one invoke on zeros) before the clock starts; that time
is init_ms and is not in wall_s (wall_s does include walking DIR and writing the output).

Usage: .venv-bench/bin/python Benchmarks/python/bulk_folder.py DIR [--threads 1] [--workers W]
          [--layout auto|pipeline|replicas] [--output out/bench/bulk-python.jsonl] [--top 5]
          [--model Models/mobilenet_v2_1.0_224_uint8.tflite] [--labels Models/imagenet_labels.txt]
Prints ONE JSON object on stdout: {"runtime", "model", "threads", "layout", "workers", "images",
"failed", "init_ms", "wall_s", "images_per_s", "output"}. Exit status 1 if any image failed.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

import numpy as np
from PIL import Image
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZE = 224
EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm")


def list_images(folder: str) -> list[str]:
    """Every image file under folder (recursively, following symlinked files), sorted by path."""
    found = []
    for root, dirs, files in os.walk(folder):
        found.extend(os.path.join(root, f) for f in files if f.lower().endswith(EXTS))
    found.sort()
    return found


def load_labels(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


PLAIN = False  # --mode plain: the straightforward script (no draft, crop then resize)


def preprocess(path: str):
    """Image file -> (uint8 tensor [1, 224, 224, 3], decode seconds, preprocess seconds)."""
    t0 = time.perf_counter()
    with Image.open(path) as im:
        if im.format == "JPEG" and not PLAIN:
            im.draft("RGB", (SIZE, SIZE))
        img = im.convert("RGB")  # forces the decode
    t1 = time.perf_counter()
    w, h = img.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    if PLAIN:
        small = img.crop((left, top, left + side, top + side)).resize((SIZE, SIZE), Image.BILINEAR)
    else:
        small = img.resize((SIZE, SIZE), Image.BILINEAR, box=(left, top, left + side, top + side),
                           reducing_gap=2.0)
    x = np.asarray(small, dtype=np.uint8).reshape(1, SIZE, SIZE, 3)
    return x, t1 - t0, time.perf_counter() - t1


class Model:
    """One interpreter: uint8 tensor in, dequantized scores out."""

    def __init__(self, path: str, threads: int):
        self.it = Interpreter(model_path=path, num_threads=threads)
        self.it.allocate_tensors()
        inp, out = self.it.get_input_details()[0], self.it.get_output_details()[0]
        if list(inp["shape"]) != [1, SIZE, SIZE, 3] or inp["dtype"] != np.uint8:
            sys.exit(f"model input {inp['dtype']} {list(inp['shape'])}, "
                     f"expected uint8 [1, {SIZE}, {SIZE}, 3]")
        if tuple(inp["quantization"])[1] != 0 or abs(inp["quantization"][0] - 1 / 255) > 1e-6:
            sys.exit(f"model input quantization {inp['quantization']}, expected (1/255, 0)")
        self.inp, self.out = inp["index"], out["index"]
        self.scale, self.zero = out["quantization"]
        self.it.set_tensor(self.inp, np.zeros(inp["shape"], dtype=np.uint8))
        self.it.invoke()  # warm-up

    def __call__(self, x):
        t0 = time.perf_counter()
        self.it.set_tensor(self.inp, x)
        self.it.invoke()
        y = self.it.get_tensor(self.out)[0]
        t1 = time.perf_counter()
        p = (y.astype(np.float32) - self.zero) * self.scale if self.scale else y.astype(np.float32)
        return p, t1 - t0


def ordered(pool, fn, items, ahead):
    """fn(item) for every item on pool, at most `ahead` in flight, results in item order."""
    todo = iter(items)
    pending = collections.deque()
    for item in todo:
        pending.append(pool.submit(fn, item))
        if len(pending) >= ahead:
            break
    while pending:
        fut = pending.popleft()
        nxt = next(todo, None)
        if nxt is not None:
            pending.append(pool.submit(fn, nxt))
        yield fut.result()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--threads", type=int, default=1, help="interpreter threads (default 1)")
    ap.add_argument("--workers", type=int, default=None,
                    help="pipeline layout: decode threads (default 1 for --threads 1, else 2)")
    ap.add_argument("--layout", choices=["auto", "pipeline", "replicas"], default="auto")
    ap.add_argument("--output", default="out/bench/bulk-python.jsonl")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--mode", choices=["tuned", "plain"], default="tuned",
                    help="plain: Image.open, convert, crop, resize, all inline in one thread "
                         "(the script most users write; forces --layout pipeline --workers 0)")
    ap.add_argument("--model", default=os.path.join(ROOT, "Models",
                                                    "mobilenet_v2_1.0_224_uint8.tflite"))
    ap.add_argument("--labels", default=os.path.join(ROOT, "Models", "imagenet_labels.txt"))
    args = ap.parse_args()
    if args.threads < 1 or args.top < 1 or (args.workers is not None and args.workers < 0):
        ap.error("--threads and --top must be >= 1, --workers >= 0")
    if not os.path.isdir(args.folder):
        sys.exit(f"not a folder: {args.folder}")
    if args.mode == "plain":
        global PLAIN
        PLAIN = True
        args.layout, args.workers = "pipeline", 0
    if args.layout == "auto":
        args.layout = "pipeline" if args.threads == 1 else "replicas"
    workers = args.workers if args.workers is not None else (1 if args.threads == 1 else 2)
    if args.layout == "replicas":
        workers = args.threads
    labels = load_labels(args.labels)

    t_init = time.perf_counter()
    if args.layout == "pipeline":
        models = [Model(args.model, args.threads)]
    else:
        models = [Model(args.model, 1) for _ in range(args.threads)]
    init_s = time.perf_counter() - t_init
    classes = int(models[0].it.get_output_details()[0]["shape"][-1])
    if classes != len(labels):
        sys.exit(f"{len(labels)} labels in {args.labels}, the model has {classes} classes")
    free = list(models)  # replicas: each pool thread takes one interpreter for good
    local = threading.local()
    lock = threading.Lock()

    def decode(path):
        try:
            return path, preprocess(path), None
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the folder
            return path, None, f"{type(e).__name__}: {e}"

    def whole(path):
        path, got, err = decode(path)
        if err is not None:
            return path, got, err, None
        model = getattr(local, "model", None)
        if model is None:
            with lock:
                model = local.model = free.pop()
        try:
            return path, got, None, model(got[0])
        except Exception as e:  # noqa: BLE001
            return path, got, f"{type(e).__name__}: {e}", None

    start = time.perf_counter()
    files = list_images(args.folder)
    failed = 0
    with open(args.output, "w", encoding="utf-8") as out, \
            ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        if args.layout == "replicas":
            results = ordered(pool, whole, files, 2 * args.threads)
        elif workers == 0:
            results = map(decode, files)
        else:
            results = ordered(pool, decode, files, 2 * workers)
        for path, got, err, *inferred in results:
            if err is None and not inferred:
                try:
                    inferred = [models[0](got[0])]
                except Exception as e:  # noqa: BLE001
                    err = f"{type(e).__name__}: {e}"
            if err is not None:
                failed += 1
                out.write(json.dumps({"file": path, "error": err}) + "\n")
                continue
            p, t_inf = inferred[0]
            top = np.argsort(-p, kind="stable")[:args.top]  # ties: ascending class index
            _, t_dec, t_pre = got
            out.write(json.dumps({
                "file": path,
                "labels": [{"label": labels[i], "index": int(i), "score": round(float(p[i]), 6)}
                           for i in top],
                "decode_ms": round(t_dec * 1e3, 3),
                "preprocess_ms": round(t_pre * 1e3, 3),
                "inference_ms": round(t_inf * 1e3, 3),
            }) + "\n")
    wall = time.perf_counter() - start

    n = len(files)
    print(json.dumps({
        "runtime": f"ai_edge_litert {version('ai-edge-litert')}, pillow {Image.__version__}, "
                   f"numpy {np.__version__}",
        "model": os.path.relpath(args.model, ROOT) if args.model.startswith(ROOT) else args.model,
        "threads": args.threads,
        "layout": args.layout,
        "mode": args.mode,
        "workers": workers,
        "images": n,
        "failed": failed,
        "init_ms": round(init_s * 1e3, 3),
        "wall_s": round(wall, 4),
        "images_per_s": round(n / wall, 2) if wall > 0 else None,
        "output": args.output,
    }))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
