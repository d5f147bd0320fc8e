#!/usr/bin/env python3
"""Writes issue 43's tiny models with huge tensors into Tests/Fixtures/Hostile/: a few hundred
bytes of flatbuffer that make the runtime allocate hundreds of megabytes or gigabytes.

    tile_88mb.tflite   x float32 [1,1,1,1] -> TILE by [1,1024,1024,21] -> y float32 [1,1024,1024,21]
                       (88 MB of output tensor)
    tile_1400mb.tflite the same tiled by [1,4096,4096,21] (1.4 GB), as the issue's 1,068-byte model

Written with the flatbuffers builder against TFLite's schema (field numbers from
tensorflow/lite/schema/schema.fbs), then loaded, allocated and run once with ai_edge_litert to
prove they are real models (the 1.4 GB one is only loaded and allocated unless --run-large).

Run in the venv of tools/models/requirements-reference.txt (ai-edge-litert 2.3.0, flatbuffers
25.12.19, numpy; hash-pinned):

    .venv-ref/bin/python tools/models/make_hostile_models.py
"""
from __future__ import annotations

import os
import sys

import flatbuffers
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "Hostile")

FLOAT32, INT32 = 0, 2  # TensorType
TILE = 69  # BuiltinOperator


def int_vector(builder: flatbuffers.Builder, values: list[int]) -> int:
    builder.StartVector(4, len(values), 4)
    for value in reversed(values):
        builder.PrependInt32(value)
    return builder.EndVector()


def offset_vector(builder: flatbuffers.Builder, offsets: list[int]) -> int:
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


def byte_vector(builder: flatbuffers.Builder, data: bytes) -> int:
    return builder.CreateByteVector(data)


def tile_model(multiples: list[int]) -> bytes:
    builder = flatbuffers.Builder(1024)
    # Buffers: 0 empty (the convention), 1 the multiples.
    constant = byte_vector(builder, np.array(multiples, dtype="<i4").tobytes())
    builder.StartObject(3)
    buffer0 = builder.EndObject()
    builder.StartObject(3)
    builder.PrependUOffsetTRelativeSlot(0, constant, 0)
    buffer1 = builder.EndObject()
    buffers = offset_vector(builder, [buffer0, buffer1])

    def tensor(name: str, shape: list[int], kind: int, buffer: int) -> int:
        text = builder.CreateString(name)
        dims = int_vector(builder, shape)
        builder.StartObject(8)
        builder.PrependUOffsetTRelativeSlot(0, dims, 0)
        builder.PrependInt8Slot(1, kind, 0)
        builder.PrependUint32Slot(2, buffer, 0)
        builder.PrependUOffsetTRelativeSlot(3, text, 0)
        return builder.EndObject()

    output_shape = [1 * multiples[0], multiples[1], multiples[2], multiples[3]]
    tensors = offset_vector(
        builder,
        [
            tensor("x", [1, 1, 1, 1], FLOAT32, 0),
            tensor("multiples", [4], INT32, 1),
            tensor("y", output_shape, FLOAT32, 0),
        ],
    )
    op_inputs = int_vector(builder, [0, 1])
    op_outputs = int_vector(builder, [2])
    builder.StartObject(5)
    builder.PrependUint32Slot(0, 0, 0)
    builder.PrependUOffsetTRelativeSlot(1, op_inputs, 0)
    builder.PrependUOffsetTRelativeSlot(2, op_outputs, 0)
    operator = builder.EndObject()
    operators = offset_vector(builder, [operator])
    inputs = int_vector(builder, [0])
    outputs = int_vector(builder, [2])
    name = builder.CreateString("main")
    builder.StartObject(5)
    builder.PrependUOffsetTRelativeSlot(0, tensors, 0)
    builder.PrependUOffsetTRelativeSlot(1, inputs, 0)
    builder.PrependUOffsetTRelativeSlot(2, outputs, 0)
    builder.PrependUOffsetTRelativeSlot(3, operators, 0)
    builder.PrependUOffsetTRelativeSlot(4, name, 0)
    subgraph = builder.EndObject()
    subgraphs = offset_vector(builder, [subgraph])
    builder.StartObject(4)
    builder.PrependInt8Slot(0, min(TILE, 127), 0)
    builder.PrependInt32Slot(2, 1, 1)
    builder.PrependInt32Slot(3, TILE, 0)
    code = builder.EndObject()
    codes = offset_vector(builder, [code])
    description = builder.CreateString("issue 43: a tiny model with a huge tensor")
    builder.StartObject(8)
    builder.PrependUint32Slot(0, 3, 0)
    builder.PrependUOffsetTRelativeSlot(1, codes, 0)
    builder.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    builder.PrependUOffsetTRelativeSlot(3, description, 0)
    builder.PrependUOffsetTRelativeSlot(4, buffers, 0)
    model = builder.EndObject()
    builder.Finish(model, file_identifier=b"TFL3")
    return bytes(builder.Output())


def check(path: str, run: bool) -> None:
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path)
    interpreter.allocate_tensors()
    output = interpreter.get_output_details()[0]
    print(f"  {os.path.basename(path)}: output {output['shape'].tolist()} {output['dtype'].__name__}")
    if run:
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], np.full((1, 1, 1, 1), 0.5, "float32"))
        interpreter.invoke()
        y = interpreter.get_tensor(output["index"])
        assert float(y.min()) == 0.5 and float(y.max()) == 0.5
        print(f"  ran: {y.nbytes} bytes of 0.5")


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, multiples, run in (
        ("tile_88mb.tflite", [1, 1024, 1024, 21], True),
        ("tile_1400mb.tflite", [1, 4096, 4096, 21], "--run-large" in sys.argv),
    ):
        data = tile_model(multiples)
        path = os.path.join(OUT, name)
        with open(path, "wb") as file:
            file.write(data)
        print(f"{name}: {len(data)} bytes")
        check(path, run)


if __name__ == "__main__":
    main()
