#!/usr/bin/env python3
"""The hub's downloads against nginx serving the same file, in one run on the same cores.

    python3 Benchmarks/hub_benchmark.py --netrunner .build/release/netrunner

1. A 50 MB model: the float32 MobileNetV2 bundle with a 36 MB asset of random bytes, zipped
   (a real bundle the hub validates and takes).
2. `netrunner hub serve` (SQLite, a temporary data folder) and nginx (Debian, `sendfile on`)
   serving the very blob file the hub stored, both on loopback.
3. One client: curl from nginx (the practical limit), to /dev/null and to a file synced to disk;
   curl from the hub's /v1/blobs (the server); and `netrunner hub pull` into an empty cache (our
   client as a whole process: resolve, download, hash, fsync, install), alternating rounds, best
   of N; throughput and the ratios to nginx (target >= 0.8).
4. 50 concurrent curl clients against each: aggregate throughput.
5. wrk at 64 connections for 10 s on `GET /v1/models` (hub list) and on the update check
   (`/resolve` with If-None-Match: 304): requests/s, p50/p99 latency, errors.

Everything goes to out/bench/hub/; the figures are printed and written to hub.json.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_model(path):
    bundle = os.path.join(ROOT, "Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle")
    rng = random.Random(20261123)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name in ["model.json", "mobilenet_v2_1.0_224_float32.tflite", "assets/labels.txt"]:
            archive.write(os.path.join(bundle, name), "bench.tiobundle/" + name)
        archive.writestr("bench.tiobundle/assets/padding.bin", rng.randbytes(36 * 1000 * 1000))
    return os.path.getsize(path)


def wait_for(url, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if subprocess.run(["curl", "-sf", "-o", "/dev/null", url]).returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"{url} did not answer")


def timed(command, env=None):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def wrk(url, headers=(), threads=2, connections=64, seconds=10):
    """wrk's requests/s, p50 and p99 (ms) and errors (non-2xx/3xx answers, socket errors)."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    out = subprocess.run(command + [url], capture_output=True, text=True, check=True).stdout
    figures = {"requests_per_second": None, "p50_ms": None, "p99_ms": None, "errors": 0}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("Requests/sec:"):
            figures["requests_per_second"] = float(parts[1])
        elif len(parts) == 2 and parts[0] in ("50%", "99%"):
            value = parts[1]
            ms = float(value[:-2]) if value.endswith("ms") else float(value[:-2]) / 1000 if value.endswith("us") \
                else float(value[:-1]) * 1000
            figures["p50_ms" if parts[0] == "50%" else "p99_ms"] = ms
        elif "Non-2xx or 3xx responses" in line:
            figures["errors"] += int(parts[-1])
        elif line.strip().startswith("Socket errors"):
            figures["errors"] += sum(int(p.strip(",")) for p in parts[3::2])
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--netrunner", default=os.path.join(ROOT, ".build/release/netrunner"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    out = os.path.join(ROOT, "out/bench/hub")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    work = tempfile.mkdtemp(prefix="netrunner-hub-bench-")
    nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
    processes = []
    try:
        model = os.path.join(work, "bench.tiobundle.zip")
        size = make_model(model)
        hub_port, nginx_port = free_port(), free_port()
        env = dict(os.environ, NETRUNNER_HUB=f"http://127.0.0.1:{hub_port}", NETRUNNER_HUB_TOKEN="bench",
                   NETRUNNER_CACHE_DIR=os.path.join(work, "cache"))
        hub = subprocess.Popen([args.netrunner, "hub", "serve", "--data", os.path.join(work, "hub"), "--port",
                                str(hub_port), "--admin-key", "bench"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        processes.append(hub)
        wait_for(f"http://127.0.0.1:{hub_port}/v1/health")
        subprocess.run([args.netrunner, "hub", "push", model, "--name", "bench", "--alias", "production"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        digest = subprocess.run(["sha256sum", model], capture_output=True, text=True).stdout.split()[0]
        blob_folder = os.path.join(work, "hub/blobs/sha256")
        conf = os.path.join(work, "nginx.conf")
        with open(conf, "w") as handle:
            handle.write(f"""daemon off; worker_processes 2; pid {work}/nginx.pid; error_log {work}/nginx.log;
user root;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; client_body_temp_path {work}/ntmp;
  proxy_temp_path {work}/ntmp; fastcgi_temp_path {work}/ntmp; uwsgi_temp_path {work}/ntmp; scgi_temp_path {work}/ntmp;
  server {{ listen 127.0.0.1:{nginx_port}; location / {{ root {blob_folder}; }} }} }}
""")
        nginx = subprocess.Popen([nginx_bin, "-c", conf, "-p", work], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        processes.append(nginx)
        nginx_url = f"http://127.0.0.1:{nginx_port}/{digest}"
        hub_url = f"http://127.0.0.1:{hub_port}/v1/blobs/sha256:{digest}"
        wait_for(nginx_url)

        single = {"nginx_curl": [], "nginx_curl_to_file": [], "hub_curl": [], "hub_pull": []}
        copy = os.path.join(work, "copy.zip")
        for _ in range(args.rounds):
            single["nginx_curl"].append(timed(["curl", "-sf", "-o", "/dev/null", nginx_url]))
            single["nginx_curl_to_file"].append(timed(["sh", "-c", f"curl -sf -o {copy} {nginx_url} && sync {copy}"]))
            single["hub_curl"].append(timed(["curl", "-sf", "-o", "/dev/null", hub_url]))
            shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
            single["hub_pull"].append(timed([args.netrunner, "hub", "pull", "bench@production"], env=env))
        mbps = {key: size / min(values) / 1e6 for key, values in single.items()}

        def concurrent(url, clients=50):
            started = time.perf_counter()
            running = [subprocess.Popen(["curl", "-sf", "-o", "/dev/null", url]) for _ in range(clients)]
            failures = sum(1 for p in running if p.wait() != 0)
            return clients * size / (time.perf_counter() - started) / 1e6, failures

        nginx50, nginx50_failed = concurrent(nginx_url)
        hub50, hub50_failed = concurrent(hub_url)
        listing = wrk(f"http://127.0.0.1:{hub_port}/v1/models")
        update = wrk(f"http://127.0.0.1:{hub_port}/v1/models/bench/resolve?ref=production",
                     headers=[f'If-None-Match: "sha256:{digest}"'])
        report = {
            "model_bytes": size,
            "one_client_MB_per_s": {k: round(v, 1) for k, v in mbps.items()},
            "ratio_hub_server_to_nginx": round(mbps["hub_curl"] / mbps["nginx_curl"], 3),
            "ratio_hub_pull_to_nginx": round(mbps["hub_pull"] / mbps["nginx_curl"], 3),
            "ratio_hub_pull_to_nginx_curl_to_file": round(mbps["hub_pull"] / mbps["nginx_curl_to_file"], 3),
            "fifty_clients_MB_per_s": {"nginx": round(nginx50, 1), "hub": round(hub50, 1)},
            "fifty_clients_failures": {"nginx": nginx50_failed, "hub": hub50_failed},
            "ratio_fifty_clients": round(hub50 / nginx50, 3),
            "wrk_64_hub_list": listing,
            "wrk_64_update_check_304": update,
        }
        with open(os.path.join(out, "hub.json"), "w") as handle:
            json.dump(report, handle, indent=2)
        print(json.dumps(report, indent=2))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
