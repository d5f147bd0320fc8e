#!/usr/bin/env python3
"""Side-by-side load benchmark of `netrunner serve` against a FastAPI server doing the same job
(Benchmarks/python/serve_fastapi.py: uvicorn, Pillow, ai_edge_litert, one interpreter per
worker process, as many workers as our threads), in one run on the same cores, driven by wrk
(Debian) posting a real JPEG to POST /v1/models/{id}/classify.

For 1, 8 and 64 connections, alternating which server goes first: requests/s, p50 and p99
latency, errors (non-2xx and socket errors); then each server's resident memory after 20,000
requests more. Prints the throughput ratio ours / Python (target >= 2x) and whether memory
stayed flat. Everything is written under out/bench/serve/.

Usage: .venv-bench/bin/python Benchmarks/serve_benchmark.py [--netrunner .build/release/netrunner]
           [--threads 2] [--seconds 10] [--photo Tests/Fixtures/Photos/test/coffee.jpg]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "out", "bench", "serve")
MODEL_ID = "mobilenet-v2-1.0-224-uint8"


def wait_ready(url, deadline=120):
    end = time.time() + deadline
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.3)
    raise SystemExit(f"{url} never became ready")


def rss_kb(pid):
    """Resident memory of a process and its children (uvicorn's workers), in kB."""
    total = 0
    pids = [pid]
    try:
        pids += [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
                 .stdout.split()]
    except Exception:
        pass
    for p in pids:
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def wrk(url, connections, seconds, script):
    threads = min(2, connections)
    result = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--latency", "-s", script, url],
        capture_output=True, text=True, timeout=seconds + 60)
    text = result.stdout
    def number(pattern, scale=1.0):
        match = re.search(pattern, text)
        return float(match.group(1)) * scale if match else None
    def latency(label):
        match = re.search(rf"\s{label}%\s+([\d.]+)(us|ms|s)", text)
        if not match:
            return None
        return float(match.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]
    errors = 0
    match = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if match:
        errors += int(match.group(1))
    match = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if match:
        errors += sum(int(g) for g in match.groups())
    requests = number(r"(\d+) requests in")
    return {"requests_per_s": number(r"Requests/sec:\s+([\d.]+)"), "p50_ms": latency("50"), "p99_ms": latency("99"),
            "errors": errors, "requests": int(requests or 0), "raw": text}


def start_ours(netrunner, threads, port, models):
    process = subprocess.Popen(
        [netrunner, "serve", "--port", str(port), "--threads", str(threads), "--models", models,
         "--queue", "1024"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(f"http://127.0.0.1:{port}/v2/health/ready")
    return process


def start_python(threads, port):
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--app-dir", os.path.join(HERE, "python"), "serve_fastapi:app",
         "--host", "127.0.0.1", "--port", str(port), "--workers", str(threads), "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(f"http://127.0.0.1:{port}/docs")
    return process


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--photo", default=os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test", "coffee.jpg"))
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if not 1 <= args.seconds <= 120 or not 1 <= args.threads <= 16:
        parser.error("--seconds 1..120, --threads 1..16")
    os.makedirs(OUT, exist_ok=True)
    script = os.path.join(OUT, "post.lua")
    with open(script, "w") as handle:
        body = open(args.photo, "rb").read()
        # wrk's Lua strings are byte strings: the photo goes in escaped byte by byte.
        escaped = "".join(f"\\{b:03d}" for b in body)  # three digits: never read with the next byte
        handle.write(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "image/jpeg"\nwrk.body = "{escaped}"\n')
    empty_models = tempfile.mkdtemp(prefix="netrunner-serve-bench-")
    ports = {"ours": 18181, "python": 18182}
    servers = {"ours": start_ours(args.netrunner, args.threads, ports["ours"], empty_models),
               "python": start_python(args.threads, ports["python"])}
    results = {"threads": args.threads, "seconds": args.seconds, "photo": args.photo, "runs": []}
    try:
        # Warm both up, and check they agree on the answer.
        for side, port in ports.items():
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models/{MODEL_ID}/classify",
                                             data=body, headers={"Content-Type": "image/jpeg"})
            answer = json.load(urllib.request.urlopen(request, timeout=30))
            top = answer["inference_results"]["classification"][0]
            results[f"{side}_top1"] = [top["label"], round(top["score"], 6)]
        for index, connections in enumerate((1, 8, 64)):
            order = ("ours", "python") if index % 2 == 0 else ("python", "ours")
            row = {"connections": connections}
            for side in order:
                url = f"http://127.0.0.1:{ports[side]}/v1/models/{MODEL_ID}/classify"
                measured = wrk(url, connections, args.seconds, script)
                with open(os.path.join(OUT, f"wrk-{side}-c{connections}.txt"), "w") as handle:
                    handle.write(measured.pop("raw"))
                row[side] = measured
            row["ratio"] = (row["ours"]["requests_per_s"] or 0) / max(1e-9, row["python"]["requests_per_s"] or 0)
            results["runs"].append(row)
        # Memory: after the runs, then after 20,000 more requests at 8 connections.
        memory = {}
        for side in ("ours", "python"):
            before = rss_kb(servers[side].pid)
            url = f"http://127.0.0.1:{ports[side]}/v1/models/{MODEL_ID}/classify"
            sent, rounds = 0, 0
            while sent < 20000 and rounds < 40:
                sent += wrk(url, 8, 5, script)["requests"]
                rounds += 1
            memory[side] = {"rss_mb_before": round(before / 1024, 1),
                            "rss_mb_after_20000": round(rss_kb(servers[side].pid) / 1024, 1), "requests": sent}
        results["memory"] = memory
    finally:
        for process in servers.values():
            process.send_signal(signal.SIGTERM)
        for process in servers.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    print(f"\nnetrunner serve vs FastAPI + uvicorn, {args.threads} worker(s) each, wrk {args.seconds} s per point, "
          f"{os.path.basename(args.photo)}")
    print(f"answers: ours {results['ours_top1']}, python {results['python_top1']}\n")
    print(f"{'conns':>5} {'ours req/s':>11} {'python req/s':>13} {'ratio':>6} {'ours p50/p99 ms':>17} "
          f"{'python p50/p99 ms':>18} {'errors':>12}")
    for row in results["runs"]:
        o, p = row["ours"], row["python"]
        print(f"{row['connections']:>5} {o['requests_per_s']:>11.1f} {p['requests_per_s']:>13.1f} {row['ratio']:>5.2f}x "
              f"{o['p50_ms']:>8.2f}/{o['p99_ms']:<8.2f} {p['p50_ms']:>8.2f}/{p['p99_ms']:<9.2f} "
              f"{o['errors']:>5}/{p['errors']:<6}")
    for side, figures in results["memory"].items():
        print(f"memory {side}: {figures['rss_mb_before']} MB, then {figures['rss_mb_after_20000']} MB after "
              f"{figures['requests']} more requests")
    worst = min(row["ratio"] for row in results["runs"])
    ratios = ", ".join("%.2fx" % row["ratio"] for row in results["runs"])
    verdict = "meets" if worst >= 2 else "BELOW"
    print(f"\nthroughput ratio ours/python: {ratios} ({verdict} the 2x target at every point)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
