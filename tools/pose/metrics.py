#!/usr/bin/env python3
"""The pose and segmentation metrics of `netrunner evaluate`, computed independently in Python
(ai_edge_litert + Pillow + numpy) on a test bundle, for the Swift tests to compare with:

    metrics.py BUNDLE MODEL_ID=MODEL.tflite ... --lines ANSWERS.jsonl > METRICS.json

Each model runs on each labelled image with reference.py's preprocessing (RGB, the whole image
resized to the input with Pillow BILINEAR, raw uint8 bytes). Its answers are written to
ANSWERS.jsonl as NetRunner results lines (so NetRunner can score the very same answers), and
the metrics of those answers are printed as JSON.

Pose (labels `{"pose": {"keypoints": [{"name", "x", "y"}], "box": [x, y, w, h]?}}`):
- PCK@0.2: a labelled keypoint is right when the answer's keypoint of that name lies within 0.2
  of the torso diameter (the labelled left_shoulder to right_hip distance; without those two,
  the larger side of the person's box) of it; the share of right keypoints over every labelled
  keypoint of every image, and per keypoint name.
- OKS, COCO's object keypoint similarity with its per-keypoint sigmas:
  mean over labelled COCO keypoints of exp(-d^2 / (2 * area * (2 sigma)^2)), area = the box's
  width times height (the box given, else the labelled keypoints' bounding box), averaged
  over images. An image is right when its OKS is at least 0.5.

Segmentation (labels `{"segmentation": {"mask": "masks/x.png"}}`, a grayscale PNG of class
indices, 255 not scored): the counts of every image added up; per class
IoU = TP / (TP + FP + FN) over the pixels with a label; mean IoU over the classes present
(in a label or an answer); pixel accuracy = right pixels / labelled pixels. An image is right
when its own mean IoU is at least 0.5.
"""
import base64
import io
import json
import math
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import run  # noqa: E402

NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
    "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
    "right_ankle",
]
# COCO's keypoint sigmas (pycocotools cocoeval.py: these over 10), in NAMES' order.
SIGMAS = [s / 10.0 for s in [.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89]]
PCK_FRACTION = 0.2
EPS = float(np.spacing(1))


def f32(value):
    """A value as NetRunner holds it (Float), so both sides score the same numbers."""
    return float(np.float32(value))


def line(image, model, size, results):
    return {"image": image, "model": model, "iteration": 1, "error": False, "decode_latency": 0,
            "preprocessor_latency": 0, "inference_latency": 0, "total_latency": 0,
            "image_width": size[0], "image_height": size[1], "inference_results": results}


def pose_answer(model, path):
    image, output = run(model, path)
    keypoints = output.reshape(-1, 3)
    return image.size, [{"name": NAMES[i], "x": f32(float(x) * image.width), "y": f32(float(y) * image.height),
                         "score": f32(s)} for i, (y, x, s) in enumerate(keypoints)]


def pose_scores(labels, answers):
    """labels: {image: label}; answers: {image: [keypoint]} -> metrics, breakdown, per image."""
    right = labelled = 0
    per_name = {}
    oks_values = []
    images = {}
    for image, label in labels.items():
        if image not in answers:
            continue
        truth = {k["name"]: (float(k["x"]), float(k["y"])) for k in label["keypoints"]}
        found = {k["name"]: (float(k["x"]), float(k["y"])) for k in answers[image]}
        if "box" in label:
            box_w, box_h = float(label["box"][2]), float(label["box"][3])
        else:
            xs = [x for x, _ in truth.values()]
            ys = [y for _, y in truth.values()]
            box_w, box_h = max(xs) - min(xs), max(ys) - min(ys)
        if "left_shoulder" in truth and "right_hip" in truth:
            (ax, ay), (bx, by) = truth["left_shoulder"], truth["right_hip"]
            torso = math.hypot(ax - bx, ay - by)
        else:
            torso = max(box_w, box_h)
        threshold = PCK_FRACTION * torso
        area = box_w * box_h
        image_right = 0
        similarity = 0.0
        scored = 0
        for name, (x, y) in truth.items():
            labelled += 1
            entry = per_name.setdefault(name, [0, 0])
            entry[1] += 1
            distance2 = None
            if name in found:
                fx, fy = found[name]
                distance2 = (fx - x) ** 2 + (fy - y) ** 2
                if math.sqrt(distance2) <= threshold:
                    right += 1
                    image_right += 1
                    entry[0] += 1
            if name in NAMES:
                scored += 1
                if distance2 is not None:
                    k = 2 * SIGMAS[NAMES.index(name)]
                    similarity += math.exp(-distance2 / (k * k) / (area + EPS) / 2)
        oks = similarity / scored if scored else 0.0
        oks_values.append(oks)
        images[image] = {"pck": image_right / len(truth) if truth else 0.0, "oks": oks}
    metric = {"pck": right / labelled if labelled else 0.0,
              "oks": sum(oks_values) / len(oks_values) if oks_values else 0.0}
    breakdown = {name: {"pck": entry[0] / entry[1], "count": entry[1]} for name, entry in per_name.items()}
    return metric, breakdown, images


def segment_answer(model, path, labels):
    image, output = run(model, path)
    classes = output[0]
    if classes.ndim == 3:
        classes = classes.argmax(axis=-1)
    classes = np.where((classes >= 0) & (classes < 255), classes, 255).astype(np.uint8)
    mask = np.asarray(Image.fromarray(classes, mode="L").resize(image.size, Image.NEAREST))
    values, counts = np.unique(mask, return_counts=True)
    areas = sorted(((int(c), int(v)) for v, c in zip(values, counts) if v != 255), key=lambda a: (-a[0], a[1]))
    png = io.BytesIO()
    Image.fromarray(mask, mode="L").save(png, format="PNG")
    result = {"areas": [{"index": v, "label": labels[v] if v < len(labels) else None, "pixels": c}
                        for c, v in areas],
              "mask": {"encoding": "png", "width": image.width, "height": image.height,
                       "data": base64.b64encode(png.getvalue()).decode()}}
    return image.size, result, mask


def counts(truth, answer):
    """Per class [tp, fp, fn] over the pixels with a label."""
    scored = truth != 255
    table = {}
    for c in np.union1d(np.unique(truth[scored]), np.unique(answer[scored & (answer != 255)])):
        c = int(c)
        tp = int(np.sum(scored & (truth == c) & (answer == c)))
        fp = int(np.sum(scored & (truth != c) & (answer == c)))
        fn = int(np.sum(scored & (truth == c) & (answer != c)))
        table[c] = [tp, fp, fn]
    return table, int(np.sum(scored))


def mean_iou(table):
    ious = [tp / (tp + fp + fn) for tp, fp, fn in table.values() if tp + fp + fn > 0]
    return sum(ious) / len(ious) if ious else 0.0


def segment_scores(truths, masks, labels):
    total = {}
    right = labelled = 0
    images = {}
    for image, truth in truths.items():
        if image not in masks:
            continue
        answer = masks[image]
        if truth.shape != answer.shape:
            truth = np.asarray(Image.fromarray(truth, mode="L").resize(answer.shape[::-1], Image.NEAREST))
        table, scored = counts(truth, answer)
        for c, (tp, fp, fn) in table.items():
            entry = total.setdefault(c, [0, 0, 0])
            entry[0] += tp
            entry[1] += fp
            entry[2] += fn
        image_right = sum(tp for tp, _, _ in table.values())
        right += image_right
        labelled += scored
        images[image] = {"mean_iou": mean_iou(table), "pixel_accuracy": image_right / scored if scored else 0.0}
    metric = {"mean_iou": mean_iou(total), "pixel_accuracy": right / labelled if labelled else 0.0}
    breakdown = {(labels[c] if c < len(labels) else f"class {c}"): {
        "iou": tp / (tp + fp + fn), "pixels": tp + fn} for c, (tp, fp, fn) in total.items() if tp + fp + fn > 0}
    return metric, breakdown, images


def main():
    args = sys.argv[1:]
    lines_path = args[args.index("--lines") + 1]
    del args[args.index("--lines"):args.index("--lines") + 2]
    bundle, models = args[0], dict(arg.split("=", 1) for arg in args[1:])
    with open(os.path.join(bundle, "test.json")) as handle:
        test = json.load(handle)
    pascal = [line.strip() for line in open(os.path.join(os.path.dirname(__file__), "../../Models/"
                                                         "pascal_voc_segmentation_labels.txt")) if line.strip()]
    labels = {item["path"]: item["inference_results"] for item in test["labels"]}
    out = {"bundle": os.path.basename(os.path.normpath(bundle)), "models": {}}
    with open(lines_path, "w") as lines:
        for model_id, model in models.items():
            if all("pose" in value for value in labels.values()):
                answers = {}
                for image, label in labels.items():
                    size, keypoints = pose_answer(model, os.path.join(bundle, image))
                    answers[image] = keypoints
                    lines.write(json.dumps(line(image, model_id, size, {"pose": keypoints})) + "\n")
                metric, breakdown, images = pose_scores({k: v["pose"] for k, v in labels.items()}, answers)
            else:
                masks = {}
                truths = {}
                for image, label in labels.items():
                    size, result, mask = segment_answer(model, os.path.join(bundle, image), pascal)
                    masks[image] = mask
                    truths[image] = np.asarray(Image.open(os.path.join(bundle, label["segmentation"]["mask"])))
                    lines.write(json.dumps(line(image, model_id, size, {"segmentation": result})) + "\n")
                metric, breakdown, images = segment_scores(truths, masks, pascal)
            out["models"][model_id] = {"metric": metric, "breakdown": breakdown, "images": images}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
