#!/usr/bin/env python3
"""`netrunner similar` against numpy doing the same exact search, side by side, at 10,000,
100,000 and 1,000,000 embeddings of 1024 values (the MobileNet V1 embedder's size).

    Benchmarks/similar_benchmark.py --netrunner .build/release/netrunner [--sizes 10000,100000,1000000]

For each size: random non-negative embeddings (like a ReLU network's pooled features) are
written once as an index file (NRINDEX1, what `similar index` writes); then

- search: `netrunner similar search INDEX P1 ... P20 -k 10` (load, then 20 queries by indexed
  photo) against numpy loading the same file (`np.fromfile`) and answering the same 20 queries
  (`X @ q`, `argpartition`, top 10 sorted), each on every core (numpy's BLAS threads, ours
  `concurrentPerform`). Query time = (time for 20 - time for 1) / 19; load time = time for 1
  less one query.
- build (10,000 and 100,000 only): `netrunner similar index RESULTS.jsonl` from a bulk results
  file of those embeddings (JSON: about 10 kB a line) against numpy normalising the matrix from
  the same JSON Lines (`json.loads` per line). At 1,000,000 the JSON would be about 10 GB.
- memory: each side's peak resident set (getrusage of the child; numpy's own process).

The answers are checked equal (same photos, similarities within 1e-4) before any time counts.
Prints a table and the ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

DIMENSION = 1024
K = 10
QUERIES = 20


def write_index(path: str, vectors: np.ndarray, model: str) -> list[str]:
    """The index file `similar index` writes, for normalised rows."""
    count = vectors.shape[0]
    paths = [f"photos/{i:07d}.jpg" for i in range(count)]
    with open(path, "wb") as out:
        out.write(b"NRINDEX1")
        out.write(struct.pack("<IQ", DIMENSION, count))
        encoded = model.encode()
        out.write(struct.pack("<I", len(encoded)) + encoded)
        vectors.astype("<f4").tofile(out)
        for name in paths:
            data = name.encode()
            out.write(struct.pack("<I", len(data)) + data)
    return paths


def child_run(arguments: list[str]) -> tuple[float, str, int]:
    """Wall seconds, stdout and the child's peak RSS in kB (RUSAGE_CHILDREN: the largest so far,
    so each measured command runs in a fresh python child)."""
    probe = (
        "import resource, subprocess, sys, time;"
        "t = time.perf_counter();"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "w = time.perf_counter() - t;"
        "sys.stderr.write(r.stderr);"
        "print(w); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(r.returncode);"
        "sys.stdout.write(r.stdout)"
    )
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True)
    lines = result.stdout.split("\n", 3)
    if len(lines) < 4 or lines[2] != "0":
        raise SystemExit(f"{' '.join(arguments[:3])} failed: {result.stderr[-2000:]}")
    return float(lines[0]), lines[3], int(lines[1])


def numpy_search(path: str, count: int, queries: list[int]) -> tuple[float, float, list]:
    start = time.perf_counter()
    with open(path, "rb") as source:
        source.seek(8 + 12)
        (length,) = struct.unpack("<I", source.read(4))
        offset = 8 + 12 + 4 + length
    matrix = np.fromfile(path, dtype="<f4", count=count * DIMENSION, offset=offset).reshape(count, DIMENSION)
    loaded = time.perf_counter() - start
    answers = []
    start = time.perf_counter()
    for query in queries:
        scores = matrix @ matrix[query]
        scores[query] = -np.inf
        top = np.argpartition(-scores, K)[:K]
        top = top[np.argsort(-scores[top], kind="stable")]
        answers.append([(int(i), float(scores[i])) for i in top])
    per_query = (time.perf_counter() - start) / len(queries)
    return loaded, per_query, answers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--netrunner", required=True)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    args = parser.parse_args()
    rng = np.random.default_rng(48)
    rows = []
    for count in [int(size) for size in args.sizes.split(",")]:
        work = tempfile.mkdtemp(prefix="similar-bench-")
        vectors = rng.random((count, DIMENSION), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index = os.path.join(work, "photos.nrindex")
        paths = write_index(index, vectors, "bench")
        del vectors
        queries = [int(q) for q in rng.choice(count, QUERIES, replace=False)]
        # Ours: one query, then twenty; the answers as JSON.
        one, _, _ = child_run([args.netrunner, "similar", "search", index, paths[queries[0]], "-k", str(K), "--json"])
        many, text, rss = child_run(
            [args.netrunner, "similar", "search", index, *[paths[q] for q in queries], "-k", str(K), "--json"])
        ours_query = (many - one) / (QUERIES - 1)
        ours_load = one - ours_query
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        np_load, np_query, np_answers = numpy_search(index, count, queries)
        np_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # Same answers: the same photos, similarities within 1e-4 (ties may swap).
        for line, expected in zip(text.strip().split("\n"), np_answers):
            matches = json.loads(line)["matches"]
            got = [(int(m["path"][7:14]), m["similarity"]) for m in matches]
            assert all(abs(a[1] - b[1]) < 1e-4 for a, b in zip(got, expected)), (got, expected)
            assert {g[0] for g in got} == {e[0] for e in expected} or abs(got[-1][1] - expected[-1][1]) < 1e-4
        row = {
            "count": count, "index_mb": os.path.getsize(index) / 1e6,
            "ours_load_s": ours_load, "ours_query_ms": ours_query * 1000, "ours_rss_mb": rss / 1024,
            "numpy_load_s": np_load, "numpy_query_ms": np_query * 1000, "numpy_rss_mb": max(np_rss, before) / 1024,
        }
        if count <= 100_000:
            # Build from a bulk results file of the same embeddings (float_embedding as bulk writes it).
            results = os.path.join(work, "results.jsonl")
            matrix = np.fromfile(index, dtype="<f4", count=count * DIMENSION, offset=8 + 12 + 4 + 5)
            matrix = matrix.reshape(count, DIMENSION)
            with open(results, "w") as out:
                for i in range(count):
                    line = {"image": paths[i], "error": False, "image_width": 640, "image_height": 480,
                            "decode_latency": 1.0, "preprocessor_latency": 1.0, "inference_latency": 1.0,
                            "total_latency": 3.0,
                            "inference_results": {"embedding": {"head_index": 0, "head_name": "bench",
                                                               "float_embedding": [float(v) for v in matrix[i]]}}}
                    out.write(json.dumps(line) + "\n")
            del matrix
            built, _, build_rss = child_run([args.netrunner, "similar", "index", results, "-o", index + ".built"])
            start = time.perf_counter()
            with open(results) as source:
                loaded = np.array([json.loads(line)["inference_results"]["embedding"]["float_embedding"]
                                   for line in source], dtype=np.float32)
            loaded /= np.linalg.norm(loaded, axis=1, keepdims=True)
            np_built = time.perf_counter() - start
            row.update({"json_mb": os.path.getsize(results) / 1e6, "ours_build_s": built,
                        "ours_build_rss_mb": build_rss / 1024, "numpy_build_s": np_built})
            del loaded
        rows.append(row)
        subprocess.run(["rm", "-rf", work])
        print(json.dumps(row), flush=True)
    print()
    print(f"cores: {os.cpu_count()}; k = {K}; {QUERIES} queries by indexed photo; 1024 values per embedding")
    print("| embeddings | index file | load (ours / numpy) | query (ours / numpy) | ratio | peak RSS (ours / numpy) | "
          "build from JSON Lines (ours / numpy) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        build = (f"{row['ours_build_s']:.1f} s / {row['numpy_build_s']:.1f} s ({row['json_mb']:.0f} MB of JSON)"
                 if "ours_build_s" in row else "not measured (about 10 GB of JSON)")
        print(f"| {row['count']:,} | {row['index_mb']:.0f} MB | {row['ours_load_s']:.2f} s / {row['numpy_load_s']:.2f} s | "
              f"{row['ours_query_ms']:.1f} ms / {row['numpy_query_ms']:.1f} ms | "
              f"{row['numpy_query_ms'] / row['ours_query_ms']:.2f}x | "
              f"{row['ours_rss_mb']:.0f} MB / {row['numpy_rss_mb']:.0f} MB | {build} |")


if __name__ == "__main__":
    main()
