#!/usr/bin/env python3
"""Closed-loop HTTP load with a timeline: CONNECTIONS keep-alive connections, each posting one
photo to URL as soon as its last answer came, for SECONDS; every request's start, latency and
outcome written to OUT as JSON lines ({"t": s, "ms": ms, "status": 200} or {"error": "..."}).

    python3 tools/cluster/load.py URL PHOTO CONNECTIONS SECONDS OUT

A request counts as failed when it raised (connection refused, reset, timeout) or its status was
not 200. Used by scripts/test-cluster.sh to kill a replica under load and count what was lost.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse


def main():
    url, photo, connections, seconds, out = sys.argv[1:6]
    connections, seconds = int(connections), float(seconds)
    parts = urllib.parse.urlsplit(url)
    body = open(photo, "rb").read()
    start = time.monotonic()
    end = start + seconds
    records = []
    lock = threading.Lock()

    def worker():
        connection = None
        mine = []
        while time.monotonic() < end:
            began = time.monotonic()
            record = {"t": round(began - start, 4)}
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
                connection.request("POST", parts.path, body, {"Content-Type": "image/jpeg"})
                response = connection.getresponse()
                response.read()
                record["status"] = response.status
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except Exception as error:  # counted, never fatal: this is what is measured
                record["error"] = f"{type(error).__name__}: {error}"
                if connection is not None:
                    connection.close()
                connection = None
            record["ms"] = round((time.monotonic() - began) * 1000, 2)
            mine.append(record)
        with lock:
            records.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open(out, "w", encoding="utf-8") as handle:
        for record in sorted(records, key=lambda r: r["t"]):
            handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
