#!/usr/bin/env python3
"""A bounded load loop for the load-balancer tests: CLIENTS threads POST one photo to URL for
SECONDS (each waiting for its answer before the next), counting answers by status.

Prints one JSON object: {"ok": n, "errors": {status-or-exception: n}, "requests": n,
"seconds": s, "per_second": r}. Standard library only.

Usage: python3 tools/scale/load.py URL PHOTO CLIENTS SECONDS
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

url, photo, clients, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
body = open(photo, "rb").read()
target = urllib.parse.urlsplit(url)
lock = threading.Lock()
counts = {"ok": 0, "errors": {}}
deadline = time.monotonic() + seconds


def client():
    connection = None
    while time.monotonic() < deadline:
        try:
            if connection is None:
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            connection.request("POST", target.path, body=body, headers={"Content-Type": "image/jpeg"})
            reply = connection.getresponse()
            reply.read()
            key = "ok" if reply.status == 200 else str(reply.status)
        except Exception as error:  # a dropped connection, a reset
            key = type(error).__name__
            connection = None
        with lock:
            if key == "ok":
                counts["ok"] += 1
            else:
                counts["errors"][key] = counts["errors"].get(key, 0) + 1


started = time.monotonic()
threads = [threading.Thread(target=client) for _ in range(clients)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - started
requests = counts["ok"] + sum(counts["errors"].values())
print(json.dumps({"ok": counts["ok"], "errors": counts["errors"], "requests": requests,
                  "seconds": round(elapsed, 3), "per_second": round(counts["ok"] / elapsed, 1)}))
