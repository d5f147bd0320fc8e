#!/usr/bin/env python3
"""Reference-side latency benchmark: Python ai_edge_litert only (plus numpy).

Measures, per run, the wall time of one full inference round trip as an application sees it:
copy the input in (set_tensor) + invoke + copy the output out (get_tensor), timed with
time.perf_counter_ns. Invoke alone is timed separately inside the same runs.

Usage:
  .venv-ref/bin/python Benchmarks/python/bench_litert.py --model Models/mobilenet_v2_1.0_224_float32.tflite \
      --threads 1 --runs 100 --warmup 10 [--input Tests/Fixtures/Reference/<file>.bin] [--seed 0]

--input: raw little-endian bytes for input 0 (exact tensor size); without it, every input gets
seeded random bytes. Prints ONE JSON object on stdout:
  {"runtime": "ai_edge_litert 2.3.0", "model", "threads", "runs", "warmup",
   "init_ms"   (Interpreter construction + allocate_tensors),
   "first_ms"  (first set_tensor + invoke + get_tensor, before warm-up),
   "times_us": [...], "median_us", "mean_us", "min_us", "max_us", "invoke_median_us"}
The runtime's own log lines go to stderr.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from importlib.metadata import version

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def random_tensor(detail, rng):
    shape, dtype = tuple(detail["shape"]), np.dtype(detail["dtype"])
    if dtype.kind in ("S", "O", "U"):  # string tensor: fixed short strings
        return np.array([b"bench"] * int(np.prod(shape)), dtype=object).reshape(shape)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "f":
        # Random *bytes* would give NaNs/Infs for floats; use values in [0, 1) instead.
        return rng.random(size=shape).astype(dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--input", help="raw bytes for input 0 (little-endian, exact size)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be >= 1")

    t0 = time.perf_counter_ns()
    it = Interpreter(model_path=args.model, num_threads=args.threads)
    it.allocate_tensors()
    init_ns = time.perf_counter_ns() - t0

    ins, outs = it.get_input_details(), it.get_output_details()
    rng = np.random.default_rng(args.seed)
    feeds = [random_tensor(d, rng) for d in ins]
    if args.input:
        d = ins[0]
        if np.dtype(d["dtype"]).kind in ("S", "O", "U"):
            sys.exit("--input is not supported for string tensors")
        raw = np.fromfile(args.input, dtype=np.uint8)
        dtype = np.dtype(d["dtype"]).newbyteorder("<")
        if raw.size != int(np.prod(d["shape"])) * dtype.itemsize:
            sys.exit(f"{args.input}: {raw.size} bytes, input 0 needs "
                     f"{int(np.prod(d['shape'])) * dtype.itemsize}")
        feeds[0] = raw.view(dtype).reshape(tuple(d["shape"])).astype(d["dtype"])

    def run_once():
        """Returns (round-trip ns, invoke ns)."""
        start = time.perf_counter_ns()
        for d, x in zip(ins, feeds):
            it.set_tensor(d["index"], x)
        inv0 = time.perf_counter_ns()
        it.invoke()
        inv1 = time.perf_counter_ns()
        for d in outs:
            it.get_tensor(d["index"])  # returns a copy
        return time.perf_counter_ns() - start, inv1 - inv0

    first_ns, _ = run_once()
    for _ in range(args.warmup):
        run_once()
    times, invokes = [], []
    for _ in range(args.runs):
        total, inv = run_once()
        times.append(total / 1000.0)
        invokes.append(inv / 1000.0)

    print(json.dumps({
        "runtime": f"ai_edge_litert {version('ai-edge-litert')}",
        "model": args.model,
        "threads": args.threads,
        "runs": args.runs,
        "warmup": args.warmup,
        "init_ms": init_ns / 1e6,
        "first_ms": first_ns / 1e6,
        "times_us": [round(t, 3) for t in times],
        "median_us": statistics.median(times),
        "mean_us": statistics.fmean(times),
        "min_us": min(times),
        "max_us": max(times),
        "invoke_median_us": statistics.median(invokes),
    }))


if __name__ == "__main__":
    main()
