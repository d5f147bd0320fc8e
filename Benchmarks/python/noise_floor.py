#!/usr/bin/env python3
"""The model's noise floor on a folder of photos: how often top-1 changes, and by how much the
top-1 score moves, when every input value of the exact input (Pillow full decode, centre square,
bilinear resize) is nudged by a random -1, 0 or +1 level. A faster decoder whose inputs differ
from the exact ones by about a level cannot agree with the exact answers more often than this.

Usage: .venv-bench/bin/python Benchmarks/python/noise_floor.py DIR [--count 96] [--seed 0]
Prints ONE JSON object: {"photos", "top1_equal", "top1_equal_fraction",
"mean_abs_top1_score_difference"}.
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np
from PIL import Image
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZE = 224


def exact_input(path: str) -> np.ndarray:
    with Image.open(path) as im:
        img = im.convert("RGB")
    w, h = img.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    return np.asarray(img.crop((left, top, left + side, top + side)).resize((SIZE, SIZE), Image.BILINEAR))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--count", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8.tflite"))
    args = ap.parse_args()
    it = Interpreter(model_path=args.model, num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    scale, zero = out["quantization"]

    def scores(x: np.ndarray) -> np.ndarray:
        it.set_tensor(inp["index"], x[None])
        it.invoke()
        y = it.get_tensor(out["index"])[0].astype(np.float32)
        return (y - zero) * scale if scale else y

    rng = np.random.default_rng(args.seed)
    files = sorted(os.path.join(args.folder, f) for f in os.listdir(args.folder))[: args.count]
    same, diffs = 0, []
    for path in files:
        x = exact_input(path)
        base = scores(x)
        nudged = np.clip(x.astype(np.int16) + rng.integers(-1, 2, x.shape), 0, 255).astype(np.uint8)
        moved = scores(nudged)
        best = int(base.argmax())
        same += int(moved.argmax() == best)
        diffs.append(abs(float(moved[best]) - float(base[best])))
    print(json.dumps({"photos": len(files), "top1_equal": same,
                      "top1_equal_fraction": same / max(1, len(files)),
                      "mean_abs_top1_score_difference": float(np.mean(diffs)) if diffs else 0.0}))


if __name__ == "__main__":
    main()
