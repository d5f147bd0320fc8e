#!/usr/bin/env python3
"""FAISS's index types on clustered unit vectors: build time, file size, recall at 10 and time per
query for each search parameter (docs/embeddings.md#faiss-indexes).

    /usr/bin/python3 Benchmarks/faiss_benchmark.py 20000     # Debian's python3-faiss 1.7.3

1,024 values a vector, a centre per 100 vectors plus noise, 200 queries near stored vectors,
exact answers from IndexFlatIP; 2 OpenMP threads (this project's machine has 2 cores).
"""
import time, sys, numpy as np, faiss
faiss.omp_set_num_threads(2)
rng = np.random.default_rng(0)
d, n, nq = 1024, int(sys.argv[1]), 200
c = rng.standard_normal((n // 100, d)).astype(np.float32)
x = c[rng.integers(0, len(c), n)] + 0.6 * rng.standard_normal((n, d)).astype(np.float32)
x /= np.linalg.norm(x, axis=1, keepdims=True)
q = x[rng.integers(0, n, nq)] + 0.05 * rng.standard_normal((nq, d)).astype(np.float32)
q /= np.linalg.norm(q, axis=1, keepdims=True)
flat = faiss.IndexFlatIP(d); flat.add(x)
t = time.time(); D, I = flat.search(q, 10); el = time.time() - t
t = time.time()
for i in range(20): flat.search(q[i:i+1], 10)
one = (time.time() - t) / 20
print(f"n={n} Flat: batch {el*1000/nq:.2f} ms/query, one at a time {one*1000:.1f} ms, {n*d*4/2**20:.0f} MiB", flush=True)
for factory, param, values in [("HNSW32", "efSearch", [16, 32, 64, 128, 256]), ("IVF%d,Flat" % (4 * int(np.sqrt(n))), "nprobe", [1, 4, 16, 64]), ("IVF%d,PQ64" % (4 * int(np.sqrt(n))), "nprobe", [4, 16, 64])]:
    idx = faiss.index_factory(d, factory, faiss.METRIC_INNER_PRODUCT)
    t = time.time()
    if not idx.is_trained:
        nl = 4 * int(np.sqrt(n)); m = min(n, 256 * max(nl, 256))
        idx.train(x[rng.choice(n, m, replace=False)])
    idx.add(x); build = time.time() - t
    size = len(faiss.serialize_index(idx))
    parts = []
    for v in values:
        faiss.ParameterSpace().set_index_parameters(idx, f"{param}={v}")
        t = time.time(); D2, I2 = idx.search(q, 10); el = time.time() - t
        r = np.mean([len(set(I2[i]) & set(I[i])) / 10 for i in range(nq)])
        parts.append(f"{param}={v}: recall {r:.3f} {el*1000/nq:.2f} ms")
    print(f"n={n} {factory}: build {build:.1f} s, file {size/2**20:.0f} MiB; " + "; ".join(parts), flush=True)
