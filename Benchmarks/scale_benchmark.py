#!/usr/bin/env python3
"""`netrunner serve` behind nginx with 1, 2 and 3 workers on this machine, and errors when a
worker is killed under load; the figures docs/scaling.md is sized from.

    python3 Benchmarks/scale_benchmark.py --netrunner .build/release/netrunner

1. N = 1, 2, 3 `serve` processes (each --threads 1: one interpreter, so N workers = N
   interpreters) behind Debian's nginx configured by deploy/nginx/netrunner-serve.conf; wrk POSTs
   coffee.jpg to the uint8 MobileNetV2 for 10 s at 8 connections: requests/s, p50 and p99.
   Also one `serve --threads 2` without nginx, the single-process baseline.
2. Three workers under tools/scale/load.py (4 clients, 8 s); one killed -9 after 3 s: answers
   and errors.
3. `bulk` on 200 real photos with 1 and 2 threads: images/s per core (the bulk sizing).

Writes out/bench/scale/scale.json and prints the figures.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from serve_benchmark import wrk  # noqa: E402
from hub_benchmark import free_port  # noqa: E402

PHOTO = os.path.join(ROOT, "Tests/Fixtures/Photos/test/coffee.jpg")
MODEL = "mobilenet-v2-1.0-224-uint8"


def start_serve(netrunner, threads):
    port = free_port()
    process = subprocess.Popen(
        [netrunner, "serve", "--port", str(port), "--threads", str(threads), "--models",
         os.path.join(ROOT, "Models/bundles"), "--no-import"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/v2/health/ready"], check=True,
                           capture_output=True)
            return process, port
        except subprocess.CalledProcessError:
            time.sleep(0.1)
    sys.exit("serve did not become ready")


def start_nginx(ports, work):
    port = free_port()
    with open(os.path.join(ROOT, "deploy/nginx/netrunner-serve.conf")) as handle:
        site = handle.read()
    servers = "\n".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in ports)
    site = site.replace("    server 127.0.0.1:8081 max_fails=1 fail_timeout=2s;\n"
                        "    server 127.0.0.1:8082 max_fails=1 fail_timeout=2s;", servers)
    site = site.replace("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{port};")
    with open(os.path.join(work, "site.conf"), "w") as handle:
        handle.write(site)
    temporary = " ".join(f"{'client_body' if n == 'body' else n}_temp_path {work}/{n};"
                         for n in ["body", "proxy", "fastcgi", "uwsgi", "scgi"])
    with open(os.path.join(work, "nginx.conf"), "w") as handle:
        handle.write(("user root;\n" if os.getuid() == 0 else "")
                     + f"daemon off; worker_processes 1; pid {work}/nginx.pid; error_log {work}/error.log warn;\n"
                     + "events { worker_connections 1024; }\n"
                     + f"http {{ access_log off; {temporary} include {work}/site.conf; }}\n")
    nginx = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-p", work, "-c", f"{work}/nginx.conf"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return nginx, port


def stop(processes):
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--netrunner", required=True)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    out = os.path.join(ROOT, "out/bench/scale")
    os.makedirs(out, exist_ok=True)
    figures = {"workers": {}}
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "post.lua")
        escaped = "".join(f"\\{byte:03d}" for byte in open(PHOTO, "rb").read())
        with open(script, "w") as handle:
            handle.write(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "image/jpeg"\nwrk.body = "{escaped}"\n')
        path = f"/v1/models/{MODEL}/classify"

        single, port = start_serve(args.netrunner, 2)
        result = wrk(f"http://127.0.0.1:{port}{path}", 8, args.seconds, script)
        stop([single])
        figures["one_process_two_threads"] = {k: result[k] for k in ["requests_per_s", "p50_ms", "p99_ms", "errors"]}

        for count in [1, 2, 3]:
            workers = [start_serve(args.netrunner, 1) for _ in range(count)]
            folder = os.path.join(work, f"nginx-{count}")
            os.makedirs(folder)
            nginx, nginx_port = start_nginx([p for _, p in workers], folder)
            result = wrk(f"http://127.0.0.1:{nginx_port}{path}", 8, args.seconds, script)
            figures["workers"][count] = {k: result[k] for k in ["requests_per_s", "p50_ms", "p99_ms", "errors"]}
            if count == 3:
                load = subprocess.Popen(
                    [sys.executable, os.path.join(ROOT, "tools/scale/load.py"), f"http://127.0.0.1:{nginx_port}{path}",
                     PHOTO, "4", "8"], stdout=subprocess.PIPE, text=True)
                time.sleep(3)
                workers[0][0].kill()
                figures["kill_under_load"] = json.loads(load.communicate()[0])
            stop([nginx] + [p for p, _ in workers[1:] if count == 3] + [p for p, _ in workers if count != 3])

        # bulk: images per second on 1 and 2 threads (200 real photos, the bulk benchmark's folder).
        photos = os.path.join(work, "photos")
        subprocess.run([os.path.join(ROOT, ".venv-bench/bin/python"), os.path.join(ROOT, "Benchmarks/python/make_photo_folder.py"), "--out", photos, "--count", "200"],
                       check=True, capture_output=True)
        figures["bulk"] = {}
        for threads in [1, 2]:
            start = time.perf_counter()
            subprocess.run([args.netrunner, "bulk", photos, "--threads", str(threads), "--no-progress",
                            "--output", os.path.join(work, f"bulk-{threads}.jsonl")], check=True, capture_output=True)
            figures["bulk"][threads] = round(200 / (time.perf_counter() - start), 1)

    print("serve behind nginx (uint8 MobileNetV2, coffee.jpg, wrk 8 connections):")
    base = figures["one_process_two_threads"]
    print(f"  one serve --threads 2, no nginx: {base['requests_per_s']:.1f} req/s, p50 {base['p50_ms']:.1f} ms, "
          f"p99 {base['p99_ms']:.1f} ms, {base['errors']} errors")
    for count, result in figures["workers"].items():
        print(f"  {count} worker(s) --threads 1 behind nginx: {result['requests_per_s']:.1f} req/s, "
              f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, {result['errors']} errors")
    kill = figures["kill_under_load"]
    print(f"  a worker killed -9 under load (4 clients, 8 s): {kill['ok']} answered, errors {kill['errors']}")
    print(f"bulk, 200 photos: {figures['bulk'][1]} images/s on 1 thread, {figures['bulk'][2]} on 2")
    with open(os.path.join(out, "scale.json"), "w") as handle:
        json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
