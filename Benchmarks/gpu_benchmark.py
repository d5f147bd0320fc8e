#!/usr/bin/env python3
"""The GPU, side by side in one run: NetRunner on the CPU and on the GPU, and Python's
`ai_edge_litert` CompiledModel on the GPU (the same accelerator library), same model and images.

Run with the benchmark venv (Benchmarks/setup.sh makes it; `make bench-gpu` does all):

  .venv-bench/bin/python Benchmarks/gpu_benchmark.py [--netrunner .build/release/netrunner]
      [--model Models/mobilenet_v2_1.0_224_float32.tflite] [--count 64] [--batches 1,8]
      [--runs 20] [--json FILE]

Three measures, each printed with its ratios:

  invoke   the model alone, batch 1: `netrunner bench --accelerator cpu` (every core inside one
           interpreter) and `--accelerator gpu`, against Python's CompiledModel on the GPU at
           batch 1 and at each of --batches (the input resized, non-strict, as Python users do):
           milliseconds per invoke and images/s.
  bulk     whole processes over --count JPEGs (0.2-2 MP, made from the committed photos under
           out/bench/): `netrunner bulk` on every core (CPU) and with --accelerator gpu (one GPU
           interpreter, every core decoding), one image per invoke and 8 (the default), images/s.
  agree    the top-1 of NetRunner's GPU run against its CPU run on those photos.

Without a usable Vulkan device (see docs/gpu.md) the GPU rows say why and the CPU rows still
run. On a machine without a GPU lavapipe is measured: the figures show the code path works, not
what a GPU does. Exit status 1 if a run fails for another reason.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MAKE_PHOTOS = os.path.join(HERE, "python", "make_photo_folder.py")
OUT = os.path.join(ROOT, "out", "bench")

PYTHON_GPU = r"""
import json, sys, time
import numpy as np
from ai_edge_litert.compiled_model import CompiledModel
from ai_edge_litert.hardware_accelerator import HardwareAccelerator
model_path, batch, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start = time.perf_counter()
model = CompiledModel.from_file(model_path, hardware_accel=HardwareAccelerator.GPU)
if batch != 1:
    model.resize_input_tensor(0, [batch, 224, 224, 3], strict=False)
compile_ms = (time.perf_counter() - start) * 1000
inputs = model.create_input_buffers(0)
outputs = model.create_output_buffers(0)
count = 1
for dimension in outputs[0].get_tensor_details()["shape"]:
    count *= dimension
data = np.random.default_rng(0).random((batch, 224, 224, 3), dtype=np.float32)
inputs[0].write(data)
model.run_by_index(0, inputs, outputs)
outputs[0].read(count, np.float32)
times = []
for _ in range(runs):
    t = time.perf_counter()
    inputs[0].write(data)
    model.run_by_index(0, inputs, outputs)
    outputs[0].read(count, np.float32)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
print(json.dumps({"batch": batch, "compile_ms": compile_ms, "median_ms": times[len(times) // 2],
                  "fully_accelerated": bool(model.is_fully_accelerated())}))
"""


def run(command, env=None):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    return result, time.perf_counter() - start


def netrunner_bench(netrunner, model, accelerator, runs, threads):
    result, _ = run([netrunner, "bench", model, "--accelerator", accelerator, "--runs", str(runs), "--warmup", "2",
                     "--runtime-threads", str(threads), "--json"])
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"}
    report = json.loads(result.stdout)
    return {"median_ms": report["inference_microseconds"]["median"] / 1000, "accelerator": report["accelerator"],
            "fully_accelerated": report["fully_accelerated"]}


def python_gpu(model, batch, runs):
    result, _ = run([sys.executable, "-c", PYTHON_GPU, model, str(batch), str(runs)])
    if result.returncode != 0:
        lines = [line for line in result.stderr.strip().splitlines() if line.strip() and not line.startswith("INFO")]
        return {"error": lines[-1] if lines else "failed"}
    return json.loads(result.stdout.strip().splitlines()[-1])


def bulk(netrunner, model, folder, accelerator, threads, batch=None):
    extra = ["--batch", str(batch)] if batch else []
    result, seconds = run([netrunner, "bulk", folder, "--model", model, "--accelerator", accelerator,
                           "--threads", str(threads), "--no-progress", "--format", "jsonl"] + extra)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"}, {}
    top1 = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        classes = (record.get("inference_results") or {}).get("classification") or []
        top1[record["image"]] = classes[0]["index"] if classes else None
    return {"images_per_second": len(top1) / seconds, "images": len(top1)}, top1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    parser.add_argument("--model", default="Models/mobilenet_v2_1.0_224_float32.tflite")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    batches = [int(value) for value in args.batches.split(",") if value]

    folder = os.path.join(OUT, f"gpu-photos-{args.count}")
    if not os.path.isdir(folder):
        made, _ = run([sys.executable, MAKE_PHOTOS, "--out", folder, "--count", str(args.count), "--seed", "26",
                       "--bmp-fraction", "0"])
        if made.returncode != 0:
            sys.exit(f"gpu_benchmark: making the photos failed: {made.stderr}")

    figures = {"cores": cores, "model": args.model, "photos": args.count}
    print(f"GPU benchmark: {args.model}, {cores} cores, {args.count} photos of 0.2-2 MP")
    cpu = netrunner_bench(args.netrunner, args.model, "cpu", args.runs, cores)
    gpu = netrunner_bench(args.netrunner, args.model, "gpu", args.runs, 1)
    figures["invoke"] = {"netrunner_cpu": cpu, "netrunner_gpu": gpu}
    print("invoke (the model alone, median ms per invoke):")
    print(f"  netrunner cpu ({cores} threads)   {cpu.get('median_ms', 0):9.2f}  {cpu.get('error', '')}")
    print(f"  netrunner gpu batch 1      {gpu.get('median_ms', 0):9.2f}  {gpu.get('error', '')}")
    for batch in batches:
        python = python_gpu(args.model, batch, args.runs)
        figures["invoke"][f"python_gpu_batch{batch}"] = python
        if "error" in python:
            print(f"  python gpu batch {batch}        error: {python['error']}")
            continue
        per_image = python["median_ms"] / batch
        print(f"  python gpu batch {batch:<3}      {python['median_ms']:9.2f}  ({1000 / per_image:8.1f} images/s)")
        if batch == 1 and "median_ms" in gpu:
            figures["invoke"]["ratio_netrunner_gpu_to_python_gpu_batch1"] = python["median_ms"] / gpu["median_ms"]
            print(f"    netrunner gpu / python gpu at batch 1: {python['median_ms'] / gpu['median_ms']:.2f}x")

    cpu_bulk, cpu_top1 = bulk(args.netrunner, args.model, folder, "cpu", cores)
    single_bulk, _ = bulk(args.netrunner, args.model, folder, "gpu", cores, batch=1)
    gpu_bulk, gpu_top1 = bulk(args.netrunner, args.model, folder, "gpu", cores)
    figures["bulk"] = {"cpu": cpu_bulk, "gpu_batch1": single_bulk, "gpu": gpu_bulk}
    print(f"bulk ({args.count} photos, whole processes, images/s):")
    print(f"  netrunner bulk, {cores} CPU workers     {cpu_bulk.get('images_per_second', 0):8.1f}  {cpu_bulk.get('error', '')}")
    print(f"  netrunner bulk --accelerator gpu --batch 1  {single_bulk.get('images_per_second', 0):8.1f}  {single_bulk.get('error', '')}")
    print(f"  netrunner bulk --accelerator gpu (batch 8)  {gpu_bulk.get('images_per_second', 0):8.1f}  {gpu_bulk.get('error', '')}")
    failed = "error" in cpu_bulk
    if "images_per_second" in gpu_bulk and "images_per_second" in cpu_bulk:
        ratio = gpu_bulk["images_per_second"] / cpu_bulk["images_per_second"]
        figures["bulk"]["ratio_gpu_to_cpu"] = ratio
        print(f"    gpu / cpu: {ratio:.2f}x (issue 26's goal on a GPU machine: >= 2x)")
        same = sum(1 for image, index in gpu_top1.items() if cpu_top1.get(image) == index)
        figures["agree"] = {"images": len(gpu_top1), "top1_equal": same}
        print(f"agree: GPU top-1 equal to the CPU's on {same} of {len(gpu_top1)} photos")
        failed = failed or same != len(gpu_top1)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
