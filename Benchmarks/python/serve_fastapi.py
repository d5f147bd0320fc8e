#!/usr/bin/env python3
"""The Python side of the serve benchmark: the same job as `netrunner serve`'s
POST /v1/models/{id}/classify, written the way FastAPI users serve a TFLite model.

uvicorn runs --workers N processes; each loads one ai_edge_litert Interpreter at start-up and
warms it up. The handler takes the encoded image as the request body, decodes it with Pillow,
crops the centre square, resizes to 224 with bilinear filtering (what netrunner's default
pipeline does, so the answers are the same), invokes, dequantizes and returns the top 5 as JSON.

Usage: .venv-bench/bin/python -m uvicorn --app-dir Benchmarks/python serve_fastapi:app
           --host 127.0.0.1 --port 8081 --workers 2 --log-level warning
"""
import io
import os
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from fastapi import FastAPI, HTTPException, Request
from PIL import Image

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8.tflite")
LABELS = [line.rstrip("\n") for line in open(os.path.join(ROOT, "Models", "imagenet_labels.txt"), encoding="utf-8")]

interpreter = Interpreter(model_path=MODEL, num_threads=1)
interpreter.allocate_tensors()
INPUT = interpreter.get_input_details()[0]
OUTPUT = interpreter.get_output_details()[0]
interpreter.set_tensor(INPUT["index"], np.zeros(INPUT["shape"], dtype=INPUT["dtype"]))
interpreter.invoke()
SCALE, ZERO = OUTPUT["quantization"]

app = FastAPI()


@app.post("/v1/models/{model_id}/classify")
async def classify(model_id: str, request: Request):
    body = await request.body()
    started = time.perf_counter()
    try:
        image = Image.open(io.BytesIO(body)).convert("RGB")
    except Exception as error:  # a bad upload is the client's fault
        raise HTTPException(status_code=400, detail=f"not an image: {error}")
    decoded = time.perf_counter()
    side = min(image.size)
    left, top = (image.width - side) // 2, (image.height - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((224, 224), Image.BILINEAR)
    interpreter.set_tensor(INPUT["index"], np.asarray(image, dtype=np.uint8)[np.newaxis])
    prepared = time.perf_counter()
    interpreter.invoke()
    scores = (interpreter.get_tensor(OUTPUT["index"])[0].astype(np.float32) - ZERO) * SCALE
    best = np.argsort(-scores, kind="stable")[:5]
    done = time.perf_counter()
    return {
        "model": model_id,
        "inference_results": {"classification": [
            {"index": int(i), "label": LABELS[i], "score": float(scores[i])} for i in best]},
        "decode_latency": (decoded - started) * 1000, "preprocessor_latency": (prepared - decoded) * 1000,
        "inference_latency": (done - prepared) * 1000,
    }
