#!/usr/bin/env python3
"""Check Models/mobilenet_v2_1.0_224_uint8_metadata.tflite against the model without metadata.

Runs in .venv-ref (ai-edge-litert 2.3.0, numpy; no tflite-support), i.e. with the newest TFLite
schema and runtime, independent of the writer:

1. Structure: both files parsed with ai_edge_litert's schema_py_generated (object API). After
   removing the "TFLITE_METADATA" metadata entry and its buffer from the new model, the two
   model trees must be equal field by field (tensors, operators, every weight buffer, signature
   defs, the converter's own metadata entries): the writer re-serializes the flatbuffer with an
   older schema, and this proves nothing was dropped.
2. Outputs: for every mobilenet_v2_1.0_224_uint8 case in Tests/Fixtures/Reference (input .bin
   files), 1 and 2 threads, the two models must give bit-identical outputs, equal to the
   committed reference output .bin.

Prints a JSON summary; exit status 1 on any difference.
"""
import glob
import json
import os
import sys

import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BASE = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8.tflite")
META = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8_metadata.tflite")
REF = os.path.join(ROOT, "Tests", "Fixtures", "Reference")


def diff(a, b, path, out):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a2, b2 = np.asarray(a), np.asarray(b)
        if a2.shape != b2.shape or a2.tobytes() != b2.tobytes():
            out.append(path)
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{path}: len {len(a)} != {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
        return
    if hasattr(a, "__dict__") and hasattr(b, "__dict__"):
        if type(a) is not type(b):
            out.append(f"{path}: type {type(a)} != {type(b)}")
            return
        for k in sorted(set(vars(a)) | set(vars(b))):
            diff(getattr(a, k, None), getattr(b, k, None), f"{path}.{k}", out)
        return
    if a != b:
        out.append(f"{path}: {a!r} != {b!r}")


def load_tree(path):
    buf = open(path, "rb").read()
    return fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(buf, 0))


def main():
    summary = {}
    base, meta = load_tree(BASE), load_tree(META)
    names = [m.name.decode() for m in meta.metadata]
    summary["metadata_entries_base"] = [m.name.decode() for m in (base.metadata or [])]
    summary["metadata_entries_new"] = names
    i = names.index("TFLITE_METADATA")
    buf_index = meta.metadata[i].buffer
    assert buf_index == len(meta.buffers) - 1, "metadata buffer expected last"
    del meta.metadata[i]
    del meta.buffers[buf_index]
    if not meta.metadata and not base.metadata:
        meta.metadata = base.metadata
    differences = []
    diff(base, meta, "model", differences)
    summary["structure_differences"] = differences
    summary["buffers_compared"] = len(base.buffers)

    cases = []
    ok = not differences
    for in_path in sorted(glob.glob(os.path.join(REF, "mobilenet_v2_1.0_224_uint8__*__in0.bin"))):
        case = os.path.basename(in_path)[: -len("__in0.bin")]
        ref_out = open(os.path.join(REF, case + "__t1__out0.bin"), "rb").read()
        outs = {}
        for label, model in (("base", BASE), ("metadata", META)):
            for threads in (1, 2):
                it = Interpreter(model_path=model, num_threads=threads)
                it.allocate_tensors()
                d_in = it.get_input_details()[0]
                x = np.frombuffer(open(in_path, "rb").read(), dtype=d_in["dtype"])
                it.set_tensor(d_in["index"], x.reshape(d_in["shape"]))
                it.invoke()
                d_out = it.get_output_details()[0]
                outs[(label, threads)] = it.get_tensor(d_out["index"]).tobytes()
        same = len(set(outs.values())) == 1 and outs[("base", 1)] == ref_out
        ok &= same
        top = int(np.argmax(np.frombuffer(outs[("metadata", 1)], dtype=np.uint8)))
        cases.append({"case": case, "bit_identical": same, "top1": top,
                      "output_bytes": len(ref_out)})
    summary["cases"] = cases
    summary["ok"] = bool(ok)
    print(json.dumps(summary, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
