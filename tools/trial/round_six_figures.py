#!/usr/bin/env python3
"""Issue 54's findings 1 to 5 measured as the issue measured them, on the build given: each one's
status, time, the peak memory of the whole process tree (every process's resident memory summed,
sampled every 20 ms) and whether the server lived. The issue's own figures (main 62e46ba, release
build, 2 cores) are printed beside each as "before". Finding 6 is Benchmarks/hub_flood_benchmark.py's;
findings 7 to 11 are pass or fail, and `make trial`'s round six and the tests hold them.

    python3 tools/trial/round_six_figures.py [--netrunner .build/release/netrunner-net]
                                             [--only 1,2,3,4,5] [--seconds 40]

Needs the test venv (.venv-test, for the grid maker's Pillow with AVIF) and ffmpeg (its HEVC
tiles), as `make trial` does. Prints a Markdown table and writes out/bench/round-six.json.
"""
import argparse
import json
import os
import re
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRIAL = os.path.join(ROOT, "tools", "trial")
COFFEE = os.path.join(ROOT, "Tests/Fixtures/Photos/test/coffee.jpg")
HEIC = os.path.join(ROOT, "Tests/Fixtures/Formats/heic_plain.heic")
HOSTILE = os.path.join(ROOT, "Tests/Fixtures/Hostile")
MODEL = "mobilenet-v2-1.0-224-uint8"
CLASSIFY = f"/v1/models/{MODEL}/classify"


# MARK: processes and their memory


def children_of(pid):
    """Every descendant of `pid`, by the parent ids in /proc."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    parents.setdefault(int(handle.read().rsplit(")", 1)[1].split()[1]), []).append(int(name))
            except (OSError, IndexError, ValueError):
                pass
    found, queue = [], [pid]
    while queue:
        for child in parents.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def resident_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class TreePeak(threading.Thread):
    """The most resident memory the tree of `pid` held at once, sampled every 20 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.most_children, self.running = pid, 0, 0, True
        self.start()

    def run(self):
        while self.running:
            tree = [self.pid] + children_of(self.pid)
            self.peak_kb = max(self.peak_kb, sum(resident_kb(pid) for pid in tree))
            self.most_children = max(self.most_children, len(tree) - 1)
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.join()
        return self.peak_kb / 1024


def command(arguments, seconds=600):
    """Runs a command with its tree's peak memory: (status, stdout, stderr, seconds, peak MB)."""
    started = time.monotonic()
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               start_new_session=True)
    peak = TreePeak(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    return (process.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"),
            time.monotonic() - started, peak.stop())


class Server:
    """`netrunner-net serve` or `hub serve` on port 0, its port from its first line."""

    def __init__(self, netrunner, arguments, folder, environment=None, probe="/v2/health/ready"):
        self.log = open(os.path.join(folder, f"server-{time.monotonic_ns()}.log"), "wb")
        self.process = subprocess.Popen([netrunner] + arguments, stdout=subprocess.PIPE, stderr=self.log,
                                        stdin=subprocess.DEVNULL, cwd=folder,
                                        env=dict(os.environ, NO_COLOR="1", **(environment or {})))
        line = self.process.stdout.readline().decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"the server printed {line!r}")
        self.port = int(match.group(1))
        threading.Thread(target=lambda: [self.log.write(chunk) for chunk in self.process.stdout], daemon=True).start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if request(self.port, "GET", probe, timeout=5)[0] == 200:
                break
            time.sleep(0.1)
        self.probe, self.peak = probe, TreePeak(self.process.pid)

    def alive(self):
        return self.process.poll() is None and request(self.port, "GET", self.probe, timeout=10)[0] == 200

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.peak.stop() if hasattr(self, "peak") else 0


def request(port, method, path, body=b"", timeout=60.0, source=None):
    """One request on a connection of its own: (status or None, body, seconds)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                      source_address=(source, 0) if source else None) as connection:
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
            connection.sendall(head.encode() + b"Content-Type: application/octet-stream\r\n\r\n" + body)
            data = b""
            while chunk := connection.recv(65536):
                data += chunk
    except OSError:
        return None, b"", time.monotonic() - started
    status = int(data[9:12]) if data.startswith(b"HTTP/1.") and data[9:12].isdigit() else None
    return status, data.partition(b"\r\n\r\n")[2], time.monotonic() - started


def top(body):
    """The top class and score of a classify answer (None for anything else)."""
    try:
        results = json.loads(body)["inference_results"]
        classes = results.get("classification") or results.get("classes") or results.get("categories")
        first = classes[0]
        name = first.get("display_name") or first.get("label") or first.get("category_name")
        return f"{name} {first['score']:.4f}"
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


# MARK: the findings


def finding_1(options, folder, rows):
    """Odd-tiled grids: 20 uploads of each, statuses, answers, time, the tree's peak."""
    grids = os.path.join(folder, "grids")
    os.makedirs(grids, exist_ok=True)
    subprocess.run([options.python, os.path.join(TRIAL, "make_odd_tile_grids.py"), "--trial"], check=True,
                   capture_output=True, env=dict(os.environ, HOSTILE_OUT=grids), timeout=600)
    server = Server(options.netrunner, ["serve", "--port", "0", "--threads", "2"], folder)
    for name in ("avif_grid_odd_tiles.avif", "heic_grid_odd_63.heic", "heic_grid_odd_511.heic",
                 "heic_grid_odd_1023.heic"):
        data = open(os.path.join(grids, name), "rb").read()
        replies = [request(server.port, "POST", CLASSIFY, data) for _ in range(20)]
        statuses = sorted({status for status, _, _ in replies})
        answers = {top(body) for status, body, _ in replies if status == 200}
        seconds = [took for _, _, took in replies]
        rows.append({
            "finding": 1, "case": f"{name} ({len(data):,} B) x 20",
            "before": "10 x 400, 10 x 200 with ten different answers; the corrupted child kept",
            "after": f"{' '.join(f'{sum(1 for r in replies if r[0] == s)} x {s}' for s in statuses)}"
                     f"{'; answers ' + str(sorted(answers)) if answers else ''}; "
                     f"p50 {statistics.median(seconds) * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms",
            "why": replies[0][1][:140].decode("utf-8", "replace")})
    alive = server.alive()
    peak = server.stop()
    rows.append({"finding": 1, "case": "serve after the 80 uploads", "before": "alive",
                 "after": f"alive: {alive}; tree peak {peak:.0f} MB; decoder children at most {server.peak.most_children}"})


def finding_2(options, folder, rows):
    """A hung decoder child and a JPEG: (a) two clients looping the odd AVIF, (b) injected hangs."""
    odd = open(os.path.join(HOSTILE, "avif_grid_odd_tiles.avif"), "rb").read()
    jpeg = open(COFFEE, "rb").read()
    server = Server(options.netrunner, ["serve", "--port", "0", "--threads", "2"], folder)
    stop, statuses = time.monotonic() + options.seconds / 2, []

    def loop():
        while time.monotonic() < stop:
            statuses.append(request(server.port, "POST", CLASSIFY, odd)[0])

    loopers = [threading.Thread(target=loop) for _ in range(2)]
    for looper in loopers:
        looper.start()
    waits = []
    while time.monotonic() < stop:
        status, body, took = request(server.port, "POST", CLASSIFY, jpeg)
        waits.append(took if status == 200 else float("inf"))
    for looper in loopers:
        looper.join()
    alive = server.alive()
    peak = server.stop()
    rows.append({"finding": 2, "case": f"2 clients looping the {len(odd):,}-byte AVIF, JPEGs meanwhile",
                 "before": "a JPEG took 57.2 s and 52.2 s",
                 "after": f"{len(waits)} JPEGs: p50 {statistics.median(waits) * 1000:.0f} ms, max "
                          f"{max(waits) * 1000:.0f} ms; the AVIF {len(statuses)} x {sorted(set(statuses))}; "
                          f"alive: {alive}; tree peak {peak:.0f} MB"})

    heic = open(HEIC, "rb").read()
    server = Server(options.netrunner, ["serve", "--port", "0", "--threads", "2"], folder,
                    environment={"NETRUNNER_DECODER_FAULT": "hang"})
    started, hung = time.monotonic(), []

    def hang():
        status, body, _ = request(server.port, "POST", CLASSIFY, heic, timeout=300)
        hung.append((time.monotonic() - started, status))

    hangs = [threading.Thread(target=hang) for _ in range(6)]
    for thread in hangs:
        thread.start()
    time.sleep(3)  # the "a JPEG sent 3 s later"
    status, body, took = request(server.port, "POST", CLASSIFY, jpeg, timeout=300)
    for thread in hangs:
        thread.join()
    alive = server.alive()
    peak = server.stop()
    rows.append({"finding": 2, "case": "6 hung HEIC decodes (injected), a JPEG 3 s later",
                 "before": "hung ones answered at 60, 60, 120, 120, 180, 180 s; the JPEG waited 177 s",
                 "after": f"hung ones answered at {', '.join(f'{t:.1f}' for t, _ in sorted(hung))} s "
                          f"({sorted({s for _, s in hung})}); the JPEG {status} after {took:.2f} s "
                          f"({top(body)}); alive: {alive}; tree peak {peak:.0f} MB"})


def slow_bodies(port, addresses, per_address, seconds, good_path, good_body, rate=600):
    """`addresses` x `per_address` request bodies at `rate` B/s each; good requests from another
    address meanwhile: (good replies, connections opened, connections the server closed)."""
    sockets, closed = [], [0]
    head = f"POST {CLASSIFY} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n".encode()
    for address in addresses:
        for _ in range(per_address):
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(address, 0))
                connection.setblocking(False)
                connection.send(head)
                sockets.append(connection)
            except OSError:
                closed[0] += 1
    opened = len(sockets)
    stop, good = time.monotonic() + seconds, []

    def trickle():
        piece = b"x" * (rate // 10)
        while time.monotonic() < stop:
            for connection in list(sockets):
                try:
                    connection.send(piece)
                except BlockingIOError:
                    pass
                except OSError:
                    sockets.remove(connection)
                    closed[0] += 1
            time.sleep(0.1)

    sender = threading.Thread(target=trickle)
    sender.start()
    time.sleep(2)
    while time.monotonic() < stop - 5:
        status, _, took = request(port, "POST" if good_body else "GET", good_path, good_body, timeout=60,
                                  source="127.0.0.250")
        good.append((status, took))
        time.sleep(1)
    sender.join()
    for connection in sockets:
        connection.close()
    return good, opened, closed[0]


def finding_3(options, folder, rows):
    """Slow bodies from 8 and 16 addresses against serve and hub serve; a good request from another."""
    jpeg = open(COFFEE, "rb").read()
    cases = (("serve", 8, 64), ("serve", 16, 32), ("hub serve", 8, 64))
    for kind, count, each in cases:
        if kind == "serve":
            server = Server(options.netrunner, ["serve", "--port", "0", "--threads", "2"], folder)
            path, body = CLASSIFY, jpeg
        else:
            data = tempfile.mkdtemp(dir=folder)
            server = Server(options.netrunner, ["hub", "serve", "--port", "0", "--data", data, "--admin-key",
                                                "figures-admin-key"], folder, probe="/v1/health")
            path, body = "/v1/health", b""
        addresses = [f"127.0.0.{10 + index}" for index in range(count)]
        good, opened, closed = slow_bodies(server.port, addresses, each, options.seconds, path, body)
        alive = server.alive()
        peak = server.stop()
        answered = [took for status, took in good if status == 200]
        rows.append({"finding": 3, "case": f"{kind}: {count} addresses x {each} slow bodies at 600 B/s",
                     "before": "a good request from another address timed out at 15 s and at 35 s",
                     "after": f"{len(answered)} of {len(good)} good requests answered, max "
                              f"{max(answered, default=float('nan')):.2f} s; {opened} slow connections opened, "
                              f"{closed} closed by the server; alive: {alive}; tree peak {peak:.0f} MB"})


def index_file(path, dimension, count):
    """An NRINDEX1 file of `count` copies of one unit vector (docs/embeddings.md's layout)."""
    model = b"mobilenet-v1-1.0-224-quant-embedding-extractor"
    row = struct.pack(f"<{dimension}f", *([1 / dimension ** 0.5] * dimension))
    with open(path, "wb") as handle:
        handle.write(b"NRINDEX1" + struct.pack("<IQI", dimension, count, len(model)) + model)
        for start in range(0, count, 100_000):
            handle.write(row * min(100_000, count - start))
        for index in range(count):
            name = f"/photos/burst-{index:07d}.jpg".encode()
            handle.write(struct.pack("<I", len(name)) + name)


def finding_4(options, folder, rows):
    """`similar duplicates` over N copies of one embedding."""
    cli = options.cli
    # Every pair is compared: 200,000 copies are 2e10 pairs, 2,000,000 are 2e12, minutes to hours on
    # 2 cores whatever the memory. Those two are stopped at --seconds x 3, and what they held until
    # then is their figure.
    for dimension, count, threshold, before, seconds in (
            (8, 6_000, "0.98", "1.98 GB", 600),
            (8, 12_000, "0.98", "aborted: failed to allocate 3,221,487,536 bytes", 600),
            (8, 200_000, "0.98", "(not measured: 12,000 aborted)", options.seconds * 3),
            (1, 2_000_000, "0", "killed by the OOM killer at 23.7 GB", options.seconds * 3)):
        path = os.path.join(folder, f"copies-{count}.nrindex")
        index_file(path, dimension, count)
        status, stdout, stderr, took, peak = command([cli, "similar", "duplicates", path, "--threshold", threshold,
                                                      "--json"], seconds=seconds)
        groups = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        members = sum(len(group.get("paths", [])) for group in groups)
        if status == -signal.SIGKILL:
            stderr = f"stopped at {seconds:.0f} s, still comparing pairs"
        rows.append({"finding": 4, "case": f"{count:,} copies, {dimension} values ({os.path.getsize(path) / 1e6:.1f} MB)"
                                           f", --threshold {threshold}",
                     "before": before,
                     "after": f"exit {status} in {took:.1f} s, peak {peak:.0f} MB; {len(groups)} group(s) of "
                              f"{members:,} photos{'; ' + stderr.strip()[-120:] if stderr.strip() else ''}"})
        os.remove(path)


def finding_5(options, folder, rows):
    """The 460-byte model of a 1.4 GB tensor, imported: the tree's peak before the refusal."""
    model = os.path.join(HOSTILE, "tile_1400mb.tflite")
    status, _, stderr, took, peak = command([options.cli, "import", model, "--models", os.path.join(folder, "models")])
    rows.append({"finding": 5, "case": f"import of the {os.path.getsize(model)}-byte model of a 1.4 GB tensor",
                 "before": "2.7 GB of the process tree before the refusal",
                 "after": f"exit {status} in {took:.2f} s, tree peak {peak:.0f} MB: {stderr.strip()[:170]!r}"})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    release = os.path.join(ROOT, ".build/release/netrunner-net")
    parser.add_argument("--netrunner", default=release if os.path.exists(release) else
                        os.path.join(ROOT, ".build/debug/netrunner-net"))
    parser.add_argument("--only", default="1,2,3,4,5")
    parser.add_argument("--seconds", type=float, default=40, help="how long each load runs")
    parser.add_argument("--python", default=os.path.join(ROOT, ".venv-test/bin/python"))
    options = parser.parse_args()
    options.netrunner = os.path.abspath(options.netrunner)
    sibling = os.path.join(os.path.dirname(options.netrunner), "netrunner")
    options.cli = sibling if os.path.exists(sibling) else options.netrunner
    print(f"round six's figures with {options.netrunner}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="netrunner-round-six-") as folder:
        for number in options.only.split(","):
            started = time.monotonic()
            globals()[f"finding_{number.strip()}"](options, folder, rows)
            print(f"finding {number}: {time.monotonic() - started:.0f} s", flush=True)
    print("\n| finding | case | before (62e46ba) | after |\n| --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['finding']} | {row['case']} | {row['before']} | {row['after']} |")
    os.makedirs(os.path.join(ROOT, "out/bench"), exist_ok=True)
    with open(os.path.join(ROOT, "out/bench/round-six.json"), "w") as handle:
        json.dump({"netrunner": options.netrunner, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    sys.exit(main())
