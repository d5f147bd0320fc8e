#!/usr/bin/env python3
"""Python's answer for the pose and segmentation tests (ai_edge_litert + Pillow + numpy).

    reference.py pose MODEL IMAGE            -> JSON: 17 keypoints [x, y, score] in image pixels
    reference.py segment MODEL IMAGE OUT.npy -> JSON summary; the category mask (uint8, image size)

Preprocessing is NetRunner's for these tasks: RGB, the whole image resized to the input with
Pillow BILINEAR (no crop), raw uint8 bytes. Keypoints: MoveNet's [y, x, score] in [0, 1] of the
input, times the image's width and height. Mask: argmax (or the model's int64 class ids), resized
to the image by nearest neighbour (Pillow NEAREST).
"""
import json
import sys

import numpy as np
from PIL import Image
from ai_edge_litert.interpreter import Interpreter


def run(model, path):
    interpreter = Interpreter(model_path=model, num_threads=1)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    _, height, width, _ = detail["shape"]
    image = Image.open(path).convert("RGB")
    resized = np.asarray(image.resize((int(width), int(height)), Image.BILINEAR), dtype=np.uint8)
    interpreter.set_tensor(detail["index"], resized[np.newaxis].astype(detail["dtype"]))
    interpreter.invoke()
    output = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    return image, output


def main():
    task, model, path = sys.argv[1:4]
    image, output = run(model, path)
    if task == "pose":
        keypoints = output.reshape(-1, 3)
        print(json.dumps([[float(x) * image.width, float(y) * image.height, float(s)] for y, x, s in keypoints]))
    else:
        classes = output[0]
        if classes.ndim == 3:
            classes = classes.argmax(axis=-1)
        small = Image.fromarray(classes.astype(np.uint8), mode="L")
        mask = np.asarray(small.resize(image.size, Image.NEAREST))
        np.save(sys.argv[4], mask)
        values, counts = np.unique(mask, return_counts=True)
        print(json.dumps({"width": image.width, "height": image.height,
                          "areas": {int(v): int(c) for v, c in zip(values, counts)}}))


if __name__ == "__main__":
    main()
