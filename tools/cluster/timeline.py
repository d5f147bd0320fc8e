#!/usr/bin/env python3
"""What tools/cluster/load.py recorded, by window of time (scripts/test-cluster.sh).

    python3 tools/cluster/timeline.py LOAD NAME:FROM:TO...   # one line per window
    python3 tools/cluster/timeline.py LOAD --failed          # the number of failed requests

A window is the requests that started from FROM to TO seconds into the run: how many, their
rate, how many failed (an error, or a status other than 200), and the answered ones' p50 and
p99 latency.
"""
import json
import sys


def main():
    records = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]

    def failed(record):
        return "error" in record or record.get("status") != 200

    if sys.argv[2:] == ["--failed"]:
        print(sum(1 for record in records if failed(record)))
        return
    for window in sys.argv[2:]:
        name, start, end = window.rsplit(":", 2)
        start, end = float(start), float(end)
        inside = [record for record in records if start <= record["t"] < end]
        times = sorted(record["ms"] for record in inside if not failed(record))

        def pick(quantile):
            return times[min(len(times) - 1, int(quantile * len(times)))] if times else 0

        rate = len(inside) / max(end - start, 0.001)
        print(
            f"{name} ({start:.1f}-{end:.1f} s): {len(inside)} requests ({rate:.0f}/s), "
            f"{sum(1 for record in inside if failed(record))} failed, p50 {pick(0.5):.0f} ms, p99 {pick(0.99):.0f} ms")


if __name__ == "__main__":
    main()
