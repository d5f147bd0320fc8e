#!/usr/bin/env python3
"""Cold-start reference: classify ONE image and print the top-5, as a user's minimal script would.

Time the whole process (interpreter start-up, imports, model load, decode, inference), e.g.
  hyperfine -w 1 '.venv-ref/bin/python Benchmarks/python/classify_one.py Tests/Fixtures/Photos/test/chelsea.png'
or a shell loop with `time`. Preprocessing follows Models/SOURCES.md (centre square crop,
224x224 BILINEAR, float32 = byte / 255; quantized inputs use the input tensor's scale/zero point).

Usage: python classify_one.py IMAGE [MODEL] [LABELS]
       (defaults: Models/mobilenet_v2_1.0_224_float32.tflite, Models/imagenet_labels.txt)
"""
import os
import sys

import numpy as np
from PIL import Image
from ai_edge_litert.interpreter import Interpreter

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
image = sys.argv[1]
model = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "Models", "mobilenet_v2_1.0_224_float32.tflite")
labels_path = sys.argv[3] if len(sys.argv) > 3 else os.path.join(root, "Models", "imagenet_labels.txt")

img = Image.open(image).convert("RGB")
side = min(img.size)
left, top = (img.width - side) // 2, (img.height - side) // 2
img = img.crop((left, top, left + side, top + side)).resize((224, 224), Image.BILINEAR)
x = np.asarray(img, dtype=np.float32)[None] / np.float32(255.0)

interpreter = Interpreter(model_path=model)
interpreter.allocate_tensors()
inp = interpreter.get_input_details()[0]
out = interpreter.get_output_details()[0]
if inp["dtype"] != np.float32:  # quantized input: q = round(x / scale) + zero_point
    scale, zero = inp["quantization"]
    info = np.iinfo(inp["dtype"])
    x = np.clip(np.round(x / scale) + zero, info.min, info.max).astype(inp["dtype"])
interpreter.set_tensor(inp["index"], x)
interpreter.invoke()
y = interpreter.get_tensor(out["index"])[0].astype(np.float32)
if out["quantization"][0]:
    y = (y - out["quantization"][1]) * out["quantization"][0]

with open(labels_path, encoding="utf-8") as f:
    labels = [line.split(",")[0].strip() for line in f]
for i in np.argsort(-y, kind="stable")[:5]:
    print(f"{y[i]:.4f}  {labels[i]}")
