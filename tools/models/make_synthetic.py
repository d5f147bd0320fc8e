#!/usr/bin/env python3
"""Build small synthetic .tflite models covering API corners real models do not.

Written to Tests/Fixtures/Models/ (each well under 200 KB):

  multi_signature.tflite  signatures "add" (a, b: float32 [1,4] -> sum) and
                          "mul" (x: float32 [2,3] -> product = x * 3); two subgraphs.
  dynamic_batch.tflite    x: float32, shape signature [-1, 4] -> y = x * 2 + 1.
  multi_io.tflite         inputs zeta float32 [1,3], alpha int32 [1,3], mid uint8 [2];
                          outputs out_b = zeta * 2 (float32 [1,3]), out_a = alpha + 7 (int32 [1,3]),
                          count = sum(mid) (int64 [1]). Names deliberately not alphabetical; the
                          interpreter's tensor order is recorded by record_reference.py.
  extra_types.tflite      inputs flags bool [4], wide float64 [3], big int64 [2];
                          outputs not_flags = !flags (bool), wide_x2 = float64(float32(wide) * 2),
                          big_plus = big + 1 (int64).
  int16_fc.tflite         16x8 full-integer quantization: x int16 [1,8] -> FULLY_CONNECTED + relu
                          -> y int16 [1,4] (symmetric, zero point 0).
  float16_input.tflite    x float16 [1,4] -> DEQUANTIZE -> (x * 2 + 1) -> y float32 [1,4].
                          Made by editing the flatbuffer with TensorFlow's schema object API.
  per_channel_input.tflite  x int8 [1,2,2,3], per-channel quantization on axis 3 (3 scales,
                          3 zero points) -> DEQUANTIZE -> x * 1.5 -> y float32 [1,2,2,3].
                          Same flatbuffer editing.
  string_io.tflite        s string [2] -> GATHER(s, [1, 0]) -> reversed string [2].

Each model is loaded and run once with ai_edge_litert 2.3.0; a model the runtime refuses is
deleted and reported (exit status stays 0; the report lists what was dropped).

Run inside .venv-models: python tools/models/make_synthetic.py
"""
from __future__ import annotations

import copy
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import flatbuffers
import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "Models")


# --------------------------------------------------------------------------------------------
# Conversion helpers
# --------------------------------------------------------------------------------------------
def convert_module(module: tf.Module, signatures: dict, configure=None) -> bytes:
    """Save `module` with the given {key: concrete function} signatures and convert them all."""
    with tempfile.TemporaryDirectory() as tmp:
        tf.saved_model.save(module, tmp, signatures=signatures)
        conv = tf.lite.TFLiteConverter.from_saved_model(tmp, signature_keys=list(signatures))
        if configure:
            configure(conv)
        return conv.convert()


def spec(shape, dtype, name):
    return tf.TensorSpec(shape, dtype, name=name)


# --------------------------------------------------------------------------------------------
# Model definitions
# --------------------------------------------------------------------------------------------
def multi_signature() -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec([1, 4], tf.float32, "a"), spec([1, 4], tf.float32, "b")])
        def add(self, a, b):
            return {"sum": a + b}

        @tf.function(input_signature=[spec([2, 3], tf.float32, "x")])
        def mul(self, x):
            return {"product": x * 3.0}

    m = M()
    return convert_module(m, {"add": m.add.get_concrete_function(),
                              "mul": m.mul.get_concrete_function()})


def dynamic_batch() -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec([None, 4], tf.float32, "x")])
        def f(self, x):
            return {"y": x * 2.0 + 1.0}

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()})


def multi_io() -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec([1, 3], tf.float32, "zeta"),
                                      spec([1, 3], tf.int32, "alpha"),
                                      spec([2], tf.uint8, "mid")])
        def f(self, zeta, alpha, mid):
            return {"out_b": zeta * 2.0,
                    "out_a": alpha + 7,
                    "count": tf.reshape(tf.reduce_sum(tf.cast(mid, tf.int64)), [1])}

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()})


def extra_types() -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec([4], tf.bool, "flags"),
                                      spec([3], tf.float64, "wide"),
                                      spec([2], tf.int64, "big")])
        def f(self, flags, wide, big):
            return {"not_flags": tf.logical_not(flags),
                    "wide_x2": tf.cast(tf.cast(wide, tf.float32) * 2.0, tf.float64),
                    "big_plus": big + 1}

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()})


def int16_fc() -> bytes:
    rng = np.random.default_rng(16)
    w = tf.constant(rng.normal(size=(8, 4)).astype(np.float32) * 0.5)
    b = tf.constant(rng.normal(size=(4,)).astype(np.float32) * 0.1)

    class M(tf.Module):
        @tf.function(input_signature=[spec([1, 8], tf.float32, "x")])
        def f(self, x):
            return {"y": tf.nn.relu(tf.matmul(x, w) + b)}

    def representative():
        r = np.random.default_rng(1616)
        for _ in range(64):
            yield [r.uniform(-2.0, 2.0, size=(1, 8)).astype(np.float32)]

    def configure(conv):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        conv.inference_input_type = tf.int16
        conv.inference_output_type = tf.int16

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()}, configure)


def _float_base(shape, fn) -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec(shape, tf.float32, "x")])
        def f(self, x):
            return {"y": fn(x)}

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()})


def _insert_input_dequantize(buf: bytes, new_type: int, quant) -> bytes:
    """Turn subgraph 0's first input into `new_type` (with `quant` parameters) and insert a
    DEQUANTIZE op that feeds a new float32 tensor to every op that read the input. The input
    keeps its tensor index, so the signature still points at it."""
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))
    sg = model.subgraphs[0]
    in_idx = sg.inputs[0]
    original = sg.tensors[in_idx]
    deq = copy.deepcopy(original)
    deq.name = original.name + b"_dequantized"
    deq.type = schema.TensorType.FLOAT32
    deq.quantization = None
    sg.tensors.append(deq)
    deq_idx = len(sg.tensors) - 1
    for op in sg.operators:
        op.inputs = [deq_idx if i == in_idx else i for i in op.inputs]
    original.type = new_type
    original.quantization = quant

    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.DEQUANTIZE
    code.deprecatedBuiltinCode = schema.BuiltinOperator.DEQUANTIZE
    code.version = 3 if new_type == schema.TensorType.FLOAT16 else 5
    model.operatorCodes.append(code)
    op = schema.OperatorT()
    op.opcodeIndex = len(model.operatorCodes) - 1
    op.inputs = [in_idx]
    op.outputs = [deq_idx]
    sg.operators.insert(0, op)

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def float16_input() -> bytes:
    base = _float_base([1, 4], lambda x: x * 2.0 + 1.0)
    return _insert_input_dequantize(base, schema.TensorType.FLOAT16, None)


def per_channel_input() -> bytes:
    base = _float_base([1, 2, 2, 3], lambda x: x * 1.5)
    q = schema.QuantizationParametersT()
    q.scale = [0.5, 0.25, 0.125]
    q.zeroPoint = [-3, 0, 5]
    q.quantizedDimension = 3
    return _insert_input_dequantize(base, schema.TensorType.INT8, q)


def string_io() -> bytes:
    class M(tf.Module):
        @tf.function(input_signature=[spec([2], tf.string, "s")])
        def f(self, s):
            return {"reversed": tf.gather(s, [1, 0])}

    m = M()
    return convert_module(m, {"serving_default": m.f.get_concrete_function()})


MODELS = {
    "multi_signature": multi_signature,
    "dynamic_batch": dynamic_batch,
    "multi_io": multi_io,
    "extra_types": extra_types,
    "int16_fc": int16_fc,
    "float16_input": float16_input,
    "per_channel_input": per_channel_input,
    "string_io": string_io,
}


# --------------------------------------------------------------------------------------------
def smoke_test(path: str) -> str:
    """Load, allocate and invoke every signature once with zero/empty inputs."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=path, num_threads=1)
    sigs = it.get_signature_list()
    for key in sigs:
        runner = it.get_signature_runner(key)
        feeds = {}
        for name, d in runner.get_input_details().items():
            shape = [1 if s < 0 else s for s in d["shape_signature"]]
            if d["dtype"] == np.bytes_ or d["dtype"] == np.object_:
                feeds[name] = np.array([b"x"] * int(np.prod(shape)), dtype=object).reshape(shape)
            else:
                feeds[name] = np.zeros(shape, d["dtype"])
        runner(**feeds)
    ins = [(d["name"], d["dtype"].__name__, list(d["shape_signature"])) for d in it.get_input_details()]
    outs = [(d["name"], d["dtype"].__name__, list(d["shape_signature"])) for d in it.get_output_details()]
    return f"signatures {list(sigs)}; inputs {ins}; outputs {outs}"


def main():
    os.makedirs(OUT, exist_ok=True)
    dropped = []
    for name, make in MODELS.items():
        path = os.path.join(OUT, f"{name}.tflite")
        try:
            data = make()
        except Exception as e:  # conversion failure: report and skip
            dropped.append((name, f"conversion failed: {type(e).__name__}: {e}"))
            continue
        with open(path, "wb") as f:
            f.write(data)
        try:
            info = smoke_test(path)
        except Exception as e:
            os.remove(path)
            dropped.append((name, f"ai_edge_litert refused it: {type(e).__name__}: {e}"))
            continue
        print(f"{name}.tflite ({len(data)} bytes): {info}")
    for name, why in dropped:
        print(f"DROPPED {name}: {why}")


if __name__ == "__main__":
    main()
