"""Python's embeddings of photos, as a user of ai_edge_litert computes them (Pillow, numpy).

    reference.py embed MODEL PHOTO...          JSON: each photo's raw output and its dequantized values
    reference.py classify MODEL PHOTO...       JSON: each photo's top class (index and score) and scores
    reference.py penultimate MODEL PHOTO...    JSON: as embed, of a classifier's penultimate layer: the
                                               first input of its last CONV_2D or FULLY_CONNECTED,
                                               read from the whole model with every tensor kept

The image: decoded, converted to RGB, the whole image resized to the input's size with Pillow's
BILINEAR filter (no crop, as Coral's imprinting examples resize), its raw bytes as the uint8
input. Printed to standard output; tools/embedding/record.sh writes the fixtures with it.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from PIL import Image


def load(path: str, size: tuple[int, int]) -> np.ndarray:
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    return np.asarray(rgb.resize(size, Image.BILINEAR), dtype=np.uint8)[None]


def penultimate(interpreter: Interpreter) -> dict:
    """The tensor the classifier's last fully connected layer (or 1 x 1 convolution) reads."""
    ops = [op for op in interpreter._get_ops_details() if op["op_name"] in ("CONV_2D", "FULLY_CONNECTED")]
    index = int(ops[-1]["inputs"][0])
    return next(t for t in interpreter.get_tensor_details() if t["index"] == index)


def run(model: str, photos: list[str], cut: bool = False) -> list[tuple[str, np.ndarray, dict]]:
    interpreter = Interpreter(model_path=model, experimental_preserve_all_tensors=cut)
    interpreter.allocate_tensors()
    entry = interpreter.get_input_details()[0]
    output = penultimate(interpreter) if cut else interpreter.get_output_details()[0]
    _, height, width, _ = entry["shape"]
    answers = []
    for photo in photos:
        interpreter.set_tensor(entry["index"], load(photo, (int(width), int(height))))
        interpreter.invoke()
        answers.append((photo, interpreter.get_tensor(output["index"]).copy(), output))
    return answers


def dequantized(values: np.ndarray, output: dict) -> np.ndarray:
    scale, zero_point = output["quantization"]
    if scale == 0:
        return values.astype(np.float64)
    return (values.astype(np.float64) - zero_point) * scale


def main() -> None:
    mode, model, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
    answers = run(model, photos, cut=mode == "penultimate")
    record = {}
    for photo, values, output in answers:
        name = os.path.basename(photo)
        flat = values.reshape(-1)
        if mode in ("embed", "penultimate"):
            record[name] = {
                "dtype": str(flat.dtype),
                "raw": flat.tolist(),
                "scale": float(output["quantization"][0]),
                "zero_point": int(output["quantization"][1]),
            }
        else:
            scores = dequantized(flat, output)
            best = int(np.argmax(scores))
            record[name] = {"index": best, "score": float(scores[best]), "scores": scores.tolist()}
    # One photo per line: the file stays readable and its diffs small.
    lines = [f" {json.dumps(name)}: {json.dumps(record[name], sort_keys=True)}" for name in sorted(record)]
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()
