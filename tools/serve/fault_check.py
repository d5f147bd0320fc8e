#!/usr/bin/env python3
"""Attacks `netrunner serve` the way broken and hostile clients do, while a good client keeps
asking, and prints what happened as one JSON object for the Swift test:

- 200 clients that promise a 100 kB upload, send 1 kB and hang up;
- 40 slowloris clients trickling their headers one byte at a time for the whole run;
- 10,000 bad requests over keep-alive connections on 4 threads: truncated JPEGs, random bytes,
  empty bodies, PNG and JPEG headers declaring 10-gigapixel images (decompression bombs), wrong
  content types, unknown models, bad query values, 64 kB headers;
- a good request every 100 ms throughout, which must keep getting the right answer.

Counts every status; a 5xx or a wrong good answer is a failure. The server's resident memory
is read from /proc before and after.

Usage: .venv-test/bin/python tools/serve/fault_check.py URL PID PHOTO
"""
import http.client
import json
import random
import socket
import struct
import sys
import threading
import time
import zlib
from collections import Counter
from urllib.parse import urlparse

MODEL = "mobilenet-v2-1.0-224-uint8"


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def png_bomb():
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


def jpeg_bomb():
    # SOI, then a baseline SOF0 declaring 60000 x 60000 with 3 components.
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, 60000, 60000, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + sof + b"\xff\xd9"


def main():
    url, pid, photo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    target = urlparse(url)
    host, port = target.hostname, target.port
    good = open(photo, "rb").read()
    path = f"/v1/models/{MODEL}/classify"
    report = {"rss_kb_before": rss_kb(pid)}
    statuses = Counter()
    lock = threading.Lock()
    stop = threading.Event()
    good_answers = Counter()

    def good_client():
        while not stop.is_set():
            try:
                connection = http.client.HTTPConnection(host, port, timeout=30)
                connection.request("POST", path, body=good, headers={"Content-Type": "image/jpeg"})
                reply = connection.getresponse()
                body = json.loads(reply.read())
                top = body.get("inference_results", {}).get("classification", [{}])[0].get("display_name")
                good_answers["espresso" if reply.status == 200 and top == "espresso" else f"{reply.status} {top}"] += 1
                connection.close()
            except Exception as error:  # a refused good request is a failure too
                good_answers[f"error {type(error).__name__}"] += 1
            time.sleep(0.1)

    def slowloris(index):
        try:
            sock = socket.create_connection((host, port), timeout=10)
            request = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\nX-Slow-{index}: "
            for byte in request.encode():
                if stop.is_set():
                    break
                sock.send(bytes([byte]))
                time.sleep(0.2)
            sock.close()
        except OSError:
            pass

    def hang_up(_):
        try:
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                         f"Content-Length: 100000\r\n\r\n".encode() + good[:1000])
            sock.close()
        except OSError:
            pass

    rng = random.Random(7)
    bad_bodies = [
        ("image/jpeg", lambda: good[: rng.randrange(1, len(good) - 1)], path),
        ("image/jpeg", lambda: bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 2000))), path),
        ("image/jpeg", lambda: b"", path),
        ("image/png", png_bomb, path),
        ("image/jpeg", jpeg_bomb, path),
        ("text/plain", lambda: b"hello", path),
        ("image/jpeg", lambda: good, "/v1/models/no-such-model/classify"),
        ("image/jpeg", lambda: good[:2000], path + "?maxResults=-1"),
    ]

    def bad_client(count):
        connection = None
        for number in range(count):
            kind, body, where = bad_bodies[number % len(bad_bodies)]
            headers = {"Content-Type": kind}
            if number % 500 == 499:
                headers["X-Huge"] = "x" * 65536
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(host, port, timeout=30)
                connection.request("POST", where, body=body(), headers=headers)
                reply = connection.getresponse()
                reply.read()
                status = reply.status
                if reply.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except (OSError, http.client.HTTPException) as error:
                status = f"closed ({type(error).__name__})"
                connection = None
            with lock:
                statuses[str(status)] += 1

    started = time.time()
    threads = [threading.Thread(target=good_client)]
    threads += [threading.Thread(target=slowloris, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    hangers = [threading.Thread(target=hang_up, args=(i,)) for i in range(200)]
    for thread in hangers:
        thread.start()
    for thread in hangers:
        thread.join()
    workers = [threading.Thread(target=bad_client, args=(2500,)) for _ in range(4)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    stop.set()
    for thread in threads:
        thread.join()
    report["seconds"] = round(time.time() - started, 1)
    report["statuses"] = dict(statuses)
    report["bad_requests"] = sum(statuses.values())
    report["server_errors"] = sum(n for s, n in statuses.items() if s.startswith("5"))
    report["good_answers"] = dict(good_answers)
    report["rss_kb_after"] = rss_kb(pid)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
