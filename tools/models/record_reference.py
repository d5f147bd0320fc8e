#!/usr/bin/env python3
"""Record reference inputs/outputs of every committed test model with Python ai_edge_litert.

Runs in .venv-ref (tools/models/requirements-reference.txt: ai-edge-litert, numpy, pillow
only; no TensorFlow). Writes:

  Tests/Fixtures/Reference/reference.json
  Tests/Fixtures/Reference/*.bin   raw tensor bytes, little-endian, C order, exactly as fed to /
                                   read from the interpreter. String tensors use TFLite's
                                   serialized layout: int32 count N, int32 offsets[N + 1] (from
                                   the start of the buffer), then the bytes.

JSON layout (paths relative to the repository root):
  {"generator", "ai_edge_litert", "numpy", "pillow",
   "models": [{"file", "sha256", "bytes",
               "inputs"/"outputs": [tensor info in classic interpreter order (subgraph 0)],
               "signatures": [{"key", "subgraph_index",
                               "inputs"/"outputs": [names in LiteRT C API order],
                               "input_details"/"output_details": [tensor info, + "signature_name"]}],
               "cases": [...]}]}
  tensor info: {"name", "dtype" (numpy name, "string" for strings), "shape", "shape_signature",
                "quantization": {"scale", "zero_point"} | null (null when scale == 0),
                "per_channel": {"quantized_dimension", "scales", "zero_points"} | null}
  positional case: {"name", "threads", "resize": null | {"<input position>": [dims]},
                    "inputs": [paths, interpreter input order], "outputs": [paths, output order],
                    "input_shapes", "output_shapes", ("top5": [[index, score], ...] for MobileNet;
                    score is the dequantized probability; ties ordered by ascending index)}
  signature case:  {"name", "signature", "threads", "inputs": {name: path}, "outputs": {name: path},
                    "input_shapes": {name: dims}, "output_shapes": {name: dims}}

Signature input/output name order: Python's get_signature_list() sorts names alphabetically, and
the converter also writes the model's SignatureDef entries alphabetically. The LiteRT C API
(LiteRtGetSignatureInputName(sig, i)) instead reports them in the subgraph's tensor order, which
is also the classic interpreter's order. "inputs"/"outputs" of a signature here use that C API
order, computed from the flatbuffer with the schema module that ships inside ai_edge_litert.

Identical byte blobs are written once and shared between cases.

Usage: .venv-ref/bin/python tools/models/record_reference.py [--out DIR]
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import struct
import sys

import numpy as np
import PIL
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter

try:
    from importlib.metadata import version as pkg_version
except ImportError:  # pragma: no cover
    pkg_version = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photo_prep  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REF_DIR = os.path.join(ROOT, "Tests", "Fixtures", "Reference")
TEST_PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test")
LABELS = os.path.join(ROOT, "Models", "imagenet_labels.txt")
MOBILENETS = ["Models/mobilenet_v2_1.0_224_float32.tflite",
              "Models/mobilenet_v2_1.0_224_uint8.tflite",
              "Models/mobilenet_v2_1.0_224_int8.tflite"]
SYNTH = "Tests/Fixtures/Models"


def rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --------------------------------------------------------------------------------------------
# Blob store: writes each distinct byte string once.
# --------------------------------------------------------------------------------------------
class Blobs:
    def __init__(self, directory):
        self.dir = directory
        self.by_hash: dict[str, str] = {}
        self.total = 0

    def put(self, stem: str, data: bytes) -> str:
        h = hashlib.sha256(data).hexdigest()
        if h in self.by_hash:
            return self.by_hash[h]
        path = os.path.join(self.dir, stem + ".bin")
        assert not os.path.exists(path), path
        with open(path, "wb") as f:
            f.write(data)
        self.by_hash[h] = rel(path)
        self.total += len(data)
        return self.by_hash[h]


def is_string(dtype) -> bool:
    return dtype in (np.bytes_, np.object_, np.str_)


def tensor_bytes(arr: np.ndarray) -> bytes:
    """Exact tensor bytes (little-endian, C order); strings in TFLite serialized form."""
    if arr.dtype.kind in ("S", "O", "U"):
        items = [x.encode() if isinstance(x, str) else bytes(x) for x in arr.reshape(-1)]
        n = len(items)
        header = 4 * (n + 2)
        offsets, pos = [], header
        for it in items:
            offsets.append(pos)
            pos += len(it)
        offsets.append(pos)
        return struct.pack(f"<{n + 2}i", n, *offsets) + b"".join(items)
    return np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def dtype_name(dtype) -> str:
    return "string" if is_string(dtype) else np.dtype(dtype).name


def tensor_info(d: dict) -> dict:
    scale, zp = d["quantization"]
    qp = d["quantization_parameters"]
    scales, zps = qp["scales"], qp["zero_points"]
    return {
        "name": d["name"],
        "dtype": dtype_name(d["dtype"]),
        "shape": [int(x) for x in d["shape"]],
        "shape_signature": [int(x) for x in d["shape_signature"]],
        "quantization": None if scale == 0 else {"scale": float(scale), "zero_point": int(zp)},
        "per_channel": None if len(scales) <= 1 else {
            "quantized_dimension": int(qp["quantized_dimension"]),
            "scales": [float(s) for s in scales],
            "zero_points": [int(z) for z in zps]},
    }


def signature_defs(path: str) -> list[dict]:
    """Signatures in flatbuffer order: key, subgraph index, and input/output names ordered the
    way the LiteRT C API (and the classic interpreter) report them, i.e. by the position of each
    name's tensor in the subgraph's inputs/outputs. The converter writes SignatureDef entries
    sorted alphabetically, which is NOT that order, so the flatbuffer list order is not used."""
    with open(path, "rb") as f:
        m = schema.Model.GetRootAsModel(f.read(), 0)
    out = []
    for i in range(m.SignatureDefsLength()):
        s = m.SignatureDefs(i)
        sg = m.Subgraphs(s.SubgraphIndex())
        sg_in = [sg.Inputs(j) for j in range(sg.InputsLength())]
        sg_out = [sg.Outputs(j) for j in range(sg.OutputsLength())]
        ins = sorted((sg_in.index(s.Inputs(j).TensorIndex()), s.Inputs(j).Name().decode())
                     for j in range(s.InputsLength()))
        outs = sorted((sg_out.index(s.Outputs(j).TensorIndex()), s.Outputs(j).Name().decode())
                      for j in range(s.OutputsLength()))
        out.append({
            "key": s.SignatureKey().decode(),
            "subgraph_index": int(s.SubgraphIndex()),
            "inputs": [n for _, n in ins],
            "outputs": [n for _, n in outs],
        })
    return out


def model_entry(path: str) -> dict:
    it = Interpreter(model_path=os.path.join(ROOT, path), num_threads=1)
    sigs = []
    for sd in signature_defs(os.path.join(ROOT, path)):
        runner = it.get_signature_runner(sd["key"])
        ind, outd = runner.get_input_details(), runner.get_output_details()
        sd["input_details"] = [dict(tensor_info(ind[n]), signature_name=n) for n in sd["inputs"]]
        sd["output_details"] = [dict(tensor_info(outd[n]), signature_name=n) for n in sd["outputs"]]
        sigs.append(sd)
    full = os.path.join(ROOT, path)
    return {"file": path, "sha256": sha256_file(full), "bytes": os.path.getsize(full),
            "inputs": [tensor_info(d) for d in it.get_input_details()],
            "outputs": [tensor_info(d) for d in it.get_output_details()],
            "signatures": sigs, "cases": []}


# --------------------------------------------------------------------------------------------
# Running cases
# --------------------------------------------------------------------------------------------
def run_positional(model_path, inputs, threads, resize=None):
    it = Interpreter(model_path=os.path.join(ROOT, model_path), num_threads=threads)
    ind = it.get_input_details()
    for pos, dims in (resize or {}).items():
        it.resize_tensor_input(ind[int(pos)]["index"], dims, strict=True)
    it.allocate_tensors()
    for d, x in zip(ind, inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def positional_case(blobs, model, name, inputs, threads=1, resize=None, top5_labels=None):
    stem = os.path.splitext(os.path.basename(model["file"]))[0]
    outs = run_positional(model["file"], inputs, threads, resize)
    for d, x in zip(model["inputs"], inputs):
        assert dtype_name(x.dtype) == d["dtype"], (name, d["name"], x.dtype)
    case = {
        "name": name, "threads": threads,
        "resize": None if not resize else {str(k): list(v) for k, v in resize.items()},
        "inputs": [blobs.put(f"{stem}__{name}__in{i}", tensor_bytes(x)) for i, x in enumerate(inputs)],
        "outputs": [blobs.put(f"{stem}__{name}__t{threads}__out{i}", tensor_bytes(y))
                    for i, y in enumerate(outs)],
        "input_shapes": [list(x.shape) for x in inputs],
        "output_shapes": [list(y.shape) for y in outs],
    }
    if top5_labels is not None:
        q = model["outputs"][0]["quantization"]
        p = outs[0].reshape(-1).astype(np.float64)
        if q:
            p = (p - q["zero_point"]) * q["scale"]
        order = sorted(range(p.size), key=lambda i: (-p[i], i))[:5]
        case["top5"] = [[int(i), float(p[i])] for i in order]
        print(f"  {stem} {name} threads={threads}: " + "; ".join(
            f"{i} {top5_labels[i].split(',')[0]} {p[i]:.4f}" for i in order))
    model["cases"].append(case)
    return outs


def signature_case(blobs, model, name, key, feeds: dict, threads=1):
    stem = os.path.splitext(os.path.basename(model["file"]))[0]
    it = Interpreter(model_path=os.path.join(ROOT, model["file"]), num_threads=threads)
    runner = it.get_signature_runner(key)
    outs = runner(**feeds)
    case = {
        "name": name, "signature": key, "threads": threads,
        "inputs": {k: blobs.put(f"{stem}__{key}__{name}__{k}", tensor_bytes(v)) for k, v in feeds.items()},
        "outputs": {k: blobs.put(f"{stem}__{key}__{name}__t{threads}__{k}", tensor_bytes(v))
                    for k, v in outs.items()},
        "input_shapes": {k: list(v.shape) for k, v in feeds.items()},
        "output_shapes": {k: list(v.shape) for k, v in outs.items()},
    }
    model["cases"].append(case)
    return outs


# --------------------------------------------------------------------------------------------
def record_mobilenets(blobs, labels):
    photos = sorted(p for p in glob.glob(os.path.join(TEST_PHOTOS, "*"))
                    if p.lower().endswith((".jpg", ".png")))
    assert len(photos) >= 3
    entries = []
    for path in MOBILENETS:
        m = model_entry(path)
        d = m["inputs"][0]
        for photo in photos:
            name = os.path.splitext(os.path.basename(photo))[0]
            rgb = photo_prep.load_rgb_224(photo)
            if d["dtype"] == "float32":
                x = photo_prep.to_float01(rgb)
            elif d["dtype"] == "uint8":
                q = d["quantization"]
                assert abs(q["scale"] - 1 / 255) < 1e-9 and q["zero_point"] == 0, q
                x = rgb[None].copy()
            else:
                q = d["quantization"]
                x = photo_prep.quantize(photo_prep.to_float01(rgb), q["scale"], q["zero_point"], np.int8)
            for threads in (1, 2):
                positional_case(blobs, m, name, [x], threads, top5_labels=labels)
        entries.append(m)
    return entries


def record_synthetic(blobs):
    entries = []
    def entry(name):
        m = model_entry(f"{SYNTH}/{name}.tflite")
        entries.append(m)
        return m

    def by_name(m, arrays: dict):
        """Order named arrays the way the interpreter lists its inputs (names end in _<key>:0)."""
        order = []
        for d in m["inputs"]:
            key = [k for k in arrays if d["name"].endswith(f"_{k}:0")]
            assert len(key) == 1, (d["name"], list(arrays))
            order.append(arrays[key[0]])
        return order

    # multi_signature: both signatures by name, plus subgraph 0 positionally.
    m = entry("multi_signature")
    a = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    b = np.array([[0.5, -1.0, 2.25, 10.0]], np.float32)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    out = signature_case(blobs, m, "add_basic", "add", {"a": a, "b": b})
    np.testing.assert_array_equal(out["sum"], a + b)
    out = signature_case(blobs, m, "mul_basic", "mul", {"x": x})
    np.testing.assert_array_equal(out["product"], x * 3)
    positional_case(blobs, m, "subgraph0", by_name(m, {"a": a, "b": b}))

    # dynamic_batch: default shape [1,4], then resized to [3,4].
    m = entry("dynamic_batch")
    x1 = np.array([[0.0, 1.0, -2.0, 3.5]], np.float32)
    x3 = np.array([[0.0, 1.0, -2.0, 3.5], [10, 20, 30, 40], [-1, -0.5, 0.25, 1e3]], np.float32)
    y = positional_case(blobs, m, "batch1", [x1])
    np.testing.assert_array_equal(y[0], x1 * 2 + 1)
    y = positional_case(blobs, m, "batch3", [x3], resize={0: [3, 4]})
    np.testing.assert_array_equal(y[0], x3 * 2 + 1)

    # multi_io: positional (interpreter order) and by signature names.
    m = entry("multi_io")
    feeds = {"zeta": np.array([[1.5, -2.0, 0.25]], np.float32),
             "alpha": np.array([[1, -8, 2147483640]], np.int32),
             "mid": np.array([200, 100], np.uint8)}
    positional_case(blobs, m, "mixed", by_name(m, feeds))
    out = signature_case(blobs, m, "mixed", "serving_default", feeds)
    np.testing.assert_array_equal(out["out_b"], feeds["zeta"] * 2)
    np.testing.assert_array_equal(out["out_a"], feeds["alpha"] + 7)
    assert out["count"].dtype == np.int64 and out["count"].tolist() == [300]

    # extra_types: bool / float64 / int64 in and out.
    m = entry("extra_types")
    feeds = {"flags": np.array([True, False, True, True]),
             "wide": np.array([1.5, -2.25, 1e10], np.float64),
             "big": np.array([2 ** 40 + 3, -5], np.int64)}
    positional_case(blobs, m, "values", by_name(m, feeds))
    out = signature_case(blobs, m, "values", "serving_default", feeds)
    assert out["not_flags"].tolist() == [False, True, False, False]
    assert out["wide_x2"].dtype == np.float64 and out["wide_x2"].tolist() == [3.0, -4.5, 2e10]
    assert out["big_plus"].tolist() == [2 ** 40 + 4, -4]

    # int16_fc: 16x8 quantized; input quantized from fixed float values.
    m = entry("int16_fc")
    q = m["inputs"][0]["quantization"]
    xf = np.linspace(-1.75, 1.75, 8, dtype=np.float32)[None]
    xq = photo_prep.quantize(xf, q["scale"], q["zero_point"], np.int16)
    positional_case(blobs, m, "linspace", [xq])

    # float16_input: float16 -> DEQUANTIZE -> x * 2 + 1.
    m = entry("float16_input")
    x = np.array([[0.5, -1.25, 3.0, 1000.0]], np.float16)
    y = positional_case(blobs, m, "values", [x])
    np.testing.assert_array_equal(y[0], x.astype(np.float32) * 2 + 1)

    # per_channel_input: int8 [1,2,2,3], per-channel on axis 3 -> DEQUANTIZE -> * 1.5.
    m = entry("per_channel_input")
    pc = m["inputs"][0]["per_channel"]
    x = (np.arange(12, dtype=np.int8) * 9 - 50).reshape(1, 2, 2, 3)
    y = positional_case(blobs, m, "ramp", [x])
    expect = (x.astype(np.float32) - np.array(pc["zero_points"], np.float32)) \
        * np.array(pc["scales"], np.float32) * np.float32(1.5)
    np.testing.assert_array_equal(y[0], expect)

    # string_io: GATHER reverses a 2-element string tensor.
    if os.path.exists(os.path.join(ROOT, SYNTH, "string_io.tflite")):
        m = entry("string_io")
        s = np.array([b"hello", "w\u00f6rld \u2713".encode()], dtype=object)
        y = positional_case(blobs, m, "two", [s])
        assert [bytes(v) for v in y[0]] == [s[1], s[0]]
    return entries


def main():
    # --out DIR: record into another folder (`make test` records this machine's reference into
    # .build/reference: XNNPACK's float kernels differ in the last bit between CPUs, e.g. AVX-512
    # and AVX2 machines, so "bit for bit equal to Python" is checked against Python on the same CPU).
    global REF_DIR
    if len(sys.argv) == 3 and sys.argv[1] == "--out":
        REF_DIR = os.path.abspath(sys.argv[2])
    elif len(sys.argv) != 1:
        sys.exit("usage: record_reference.py [--out DIR]")
    os.makedirs(REF_DIR, exist_ok=True)
    for old in glob.glob(os.path.join(REF_DIR, "*.bin")):
        os.remove(old)
    labels = open(LABELS).read().splitlines()
    blobs = Blobs(REF_DIR)
    models = record_mobilenets(blobs, labels) + record_synthetic(blobs)
    doc = {"generator": "tools/models/record_reference.py",
           "ai_edge_litert": pkg_version("ai-edge-litert") if pkg_version else "unknown",
           "numpy": np.__version__, "pillow": PIL.__version__,
           "models": models}
    with open(os.path.join(REF_DIR, "reference.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(blobs.by_hash)} .bin files ({blobs.total} bytes) and reference.json")


if __name__ == "__main__":
    main()
