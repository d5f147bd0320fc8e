#!/usr/bin/env python3
"""`netrunner serve --accelerator gpu` against `--accelerator cpu`, in one run, driven by wrk.

The same float MobileNetV2 (the GPU's natural input), the same photo, POST
/v1/models/{id}/classify, each server alone on the machine in turn, at 1, 8 and 64 connections
(--connections), alternating which server goes first: requests/s, p50 and p99 latency, errors,
and the ratio GPU / CPU. The CPU server runs --threads workers (default: every core), each with a
single-threaded XNNPACK interpreter; the GPU server runs one GPU interpreter with Triton-style
dynamic batching (--max-batch, default 8) and the same workers decoding. Both answers' top-1 are
printed: they must be the same class.

  python3 Benchmarks/serve_gpu_benchmark.py [--netrunner .build/release/netrunner]
      [--seconds 10] [--threads N] [--connections 1,8,64] [--json FILE]

Without a usable Vulkan device the GPU server refuses to start and the script says why (lavapipe
on a machine without a GPU works, slowly: the figures then show the code path, not a GPU).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

from serve_benchmark import wait_ready, wrk

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "out", "bench", "serve-gpu")
MODEL = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_float32.tflite")
MODEL_ID = "mobilenet_v2_1.0_224_float32"


def start(netrunner, accelerator, threads, port, models, log):
    process = subprocess.Popen(
        [netrunner, "serve", "--port", str(port), "--threads", str(threads), "--models", models,
         "--queue", "4096", "--accelerator", accelerator], stdout=log, stderr=subprocess.STDOUT)
    wait_ready(f"http://127.0.0.1:{port}/v2/health/ready", deadline=180)
    return process


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", default="1,8,64")
    parser.add_argument("--photo", default=os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "coffee.jpg"))
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    connections = [int(c) for c in args.connections.split(",")]
    if not 1 <= args.seconds <= 120 or not 1 <= args.threads <= 256 or not all(1 <= c <= 1024 for c in connections):
        parser.error("--seconds 1..120, --threads 1..256, --connections 1..1024")
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    os.makedirs(OUT, exist_ok=True)
    body = open(args.photo, "rb").read()
    script = os.path.join(OUT, "post.lua")
    with open(script, "w") as handle:
        escaped = "".join(f"\\{b:03d}" for b in body)
        handle.write(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "image/jpeg"\nwrk.body = "{escaped}"\n')
    models = tempfile.mkdtemp(prefix="netrunner-serve-gpu-")
    shutil.copy(MODEL, models)
    results = {"threads": args.threads, "seconds": args.seconds, "photo": args.photo, "runs": [], "top1": {}}
    ports = {"cpu": 18191, "gpu": 18192}
    # One server at a time, so that neither takes the other's cores: each side's points are
    # measured in one stretch, the order of the sides alternating per connection count.
    rows = {c: {"connections": c} for c in connections}
    for side in ("cpu", "gpu"):
        log_path = os.path.join(OUT, f"serve-{side}.log")
        with open(log_path, "w") as log:
            try:
                process = start(args.netrunner, side, args.threads, ports[side], models, log)
            except SystemExit as error:
                print(f"{side}: the server did not start ({error}); its log: {log_path}")
                print(open(log_path).read()[-2000:])
                results[f"{side}_error"] = str(error)
                continue
            try:
                url = f"http://127.0.0.1:{ports[side]}/v1/models/{MODEL_ID}/classify"
                request = urllib.request.Request(url, data=body, headers={"Content-Type": "image/jpeg"})
                answer = json.load(urllib.request.urlopen(request, timeout=60))
                top = answer["inference_results"]["classification"][0]
                results["top1"][side] = [top.get("label", top.get("index")), round(top["score"], 4)]
                wrk(url, 8, 2, script)  # warm-up: the GPU's first batches compile shaders
                for c in connections:
                    measured = wrk(url, c, args.seconds, script)
                    with open(os.path.join(OUT, f"wrk-{side}-c{c}.txt"), "w") as handle:
                        handle.write(measured.pop("raw"))
                    rows[c][side] = measured
            finally:
                stop(process)
    print(f"\nnetrunner serve --accelerator gpu vs cpu, {args.threads} worker thread(s), {MODEL_ID}, "
          f"wrk {args.seconds} s per point, {os.path.basename(args.photo)}")
    print(f"top-1: {results['top1']}\n")
    print(f"{'conns':>5} {'cpu req/s':>10} {'gpu req/s':>10} {'gpu/cpu':>8} {'cpu p50/p99 ms':>16} "
          f"{'gpu p50/p99 ms':>16} {'errors':>8}")
    for c in connections:
        row = rows[c]
        cpu, gpu = row.get("cpu"), row.get("gpu")
        if cpu and gpu:
            row["ratio"] = (gpu["requests_per_s"] or 0) / max(1e-9, cpu["requests_per_s"] or 0)
            print(f"{c:>5} {cpu['requests_per_s']:>10.1f} {gpu['requests_per_s']:>10.1f} {row['ratio']:>7.2f}x "
                  f"{cpu['p50_ms']:>7.2f}/{cpu['p99_ms']:<8.2f} {gpu['p50_ms']:>7.2f}/{gpu['p99_ms']:<8.2f} "
                  f"{cpu['errors']:>3}/{gpu['errors']:<3}")
        else:
            print(f"{c:>5} {'(a server did not start)':>40}")
        results["runs"].append(row)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    if "cpu_error" in results:
        sys.exit(1)


if __name__ == "__main__":
    main()
