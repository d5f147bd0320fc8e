#!/usr/bin/env python3
"""Records what the sample test bundles in TestBundles/ should score, with the Python reference.

Run with `tools/evaluation/record.sh` (pinned ai-edge-litert / numpy / pillow from
tools/models/requirements-reference.txt, plus pycocotools). Writes
Tests/Fixtures/Evaluation/sample_bundles_reference.json.

imagenet-sample.testbundle (classifiers): each model listed in test.json runs on each image with
tools/models/photo_prep.py's preprocessing (RGB, centre square crop, Pillow BILINEAR to 224;
float32 = byte / 255, uint8 = raw bytes, int8 = quantized with the input's scale / zero point,
i.e. byte - 128) and ai_edge_litert's Interpreter (num_threads=1). The output is dequantized with
the output tensor's scale / zero point when quantized. Top 5 = highest probability first, ties by
ascending class index. Labels: Models/imagenet_labels.txt, line i = class i, the short name is the
first comma-separated synonym. An image is right at top-1 (top-5) when any of its accepted labels
(the keys of its "classification" object) equals the top-1 label (is among the top-5 labels),
compared case-insensitively. Accuracy = right / images.

faces.testbundle (detector): tools/detectors/blazeface.py's Pillow letterbox (pad to a centred
black square, BILINEAR to 128, byte / 127.5 - 1), the same interpreter, then blazeface.decode with
min_score_thresh 0.05 instead of 0.5 (every other option as in blazeface.DECODE_OPTIONS), weighted
NMS at IoU 0.3 (MediaPipe's algorithm, as in record_detection_reference.py), highest score first,
at most 100 per image; boxes mapped to original-image pixels (x * S - pad_x, not clipped) and
written as COCO [x, y, width, height]. mAP from pycocotools COCOeval (bbox, area "all", maxDets
100) against test.json's boxes (category "face", iscrowd 0, area = w * h; every image listed,
including those without faces): map50 = stats[1], map50_95 = stats[0]. The mAP is computed from
the rounded numbers written to the fixture, so feeding the fixture's detections to another mAP
implementation must give exactly these values.

Usage: <venv>/bin/python tools/evaluation/record_sample_bundles.py [output.json]
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import json
import os
import sys
from importlib.metadata import version

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "models"))
sys.path.insert(0, os.path.join(ROOT, "tools", "detectors"))
import blazeface  # noqa: E402
import photo_prep  # noqa: E402

OUTPUT = os.path.join(ROOT, "Tests", "Fixtures", "Evaluation", "sample_bundles_reference.json")
CLASSIFIER_BUNDLE = "TestBundles/imagenet-sample.testbundle"
DETECTOR_BUNDLE = "TestBundles/faces.testbundle"
LABELS = "Models/imagenet_labels.txt"
THREADS = 1
DETECTION_THRESHOLD = 0.05
MAX_DETECTIONS = 100


def rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def r(v, n):
    return round(float(v), n)


def model_files() -> dict[str, str]:
    """Model id (Models/bundles/*/model.json) -> repository-relative Models/<file>."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "Models", "bundles", "*", "model.json"))):
        with open(path) as f:
            doc = json.load(f)
        file = os.path.join("Models", doc["model"]["file"])
        assert os.path.exists(os.path.join(ROOT, file)), file
        # The bundle holds a copy; it must be the same model.
        assert sha256_file(os.path.join(os.path.dirname(path), doc["model"]["file"])) == \
            sha256_file(os.path.join(ROOT, file)), path
        out[doc["id"]] = file
    return out


def load_bundle(bundle: str) -> tuple[dict, list[str], dict[str, dict]]:
    with open(os.path.join(ROOT, bundle, "test.json")) as f:
        test = json.load(f)
    images = [i["path"] for i in test["images"] if i["type"] == "file"]
    assert len(images) == len(test["images"]), "only file images are supported"
    labels = {l["path"]: l["inference_results"] for l in test["labels"]}
    assert set(labels) == set(images), (sorted(labels), images)
    return test, images, labels


def model_info(file: str) -> dict:
    return {"file": file, "sha256": sha256_file(os.path.join(ROOT, file))}


def image_info(bundle: str, path: str) -> dict:
    return {"path": path, "sha256": sha256_file(os.path.join(ROOT, bundle, path))}


# ----------------------------------------------------------------------------------------------
# Classifiers
# ----------------------------------------------------------------------------------------------
def classifier_input(rgb: np.ndarray, d: dict) -> np.ndarray:
    scale, zero_point = d["quantization"]
    if d["dtype"] == np.float32:
        return photo_prep.to_float01(rgb)
    if d["dtype"] == np.uint8:
        assert abs(scale - 1 / 255) < 1e-9 and zero_point == 0, (scale, zero_point)
        return rgb[None].copy()
    assert d["dtype"] == np.int8, d["dtype"]
    return photo_prep.quantize(photo_prep.to_float01(rgb), scale, zero_point, np.int8)


def record_classifiers(files: dict[str, str]) -> dict:
    test, images, labels = load_bundle(CLASSIFIER_BUNDLE)
    with open(os.path.join(ROOT, LABELS)) as f:
        names = [line.rstrip("\n").split(",")[0].strip() for line in f]
    assert len(names) == 1000, len(names)
    known = {n.lower() for n in names}
    accepted = {}
    for path in images:
        keys = list(labels[path]["classification"])
        assert keys and all(k.lower() in known for k in keys), (path, keys)
        accepted[path] = keys
    rgbs = {p: photo_prep.load_rgb_224(os.path.join(ROOT, CLASSIFIER_BUNDLE, p)) for p in images}

    models = {}
    for model_id in test["models"]:
        file = files[model_id]
        it = Interpreter(model_path=os.path.join(ROOT, file), num_threads=THREADS)
        it.allocate_tensors()
        ind, outd = it.get_input_details()[0], it.get_output_details()[0]
        out_scale, out_zero_point = outd["quantization"]
        per_image, top1, top5 = [], 0, 0
        for path in images:
            it.set_tensor(ind["index"], classifier_input(rgbs[path], ind))
            it.invoke()
            p = it.get_tensor(outd["index"]).reshape(-1).astype(np.float64)
            if out_scale != 0:
                p = (p - out_zero_point) * out_scale
            order = sorted(range(p.size), key=lambda i: (-p[i], i))[:5]
            want = {k.lower() for k in accepted[path]}
            got = [names[i].lower() for i in order]
            right1, right5 = got[0] in want, any(g in want for g in got)
            top1 += right1
            top5 += right5
            per_image.append({
                "path": path, "accepted": accepted[path],
                "top5": [{"index": int(i), "label": names[i], "probability": r(p[i], 8)} for i in order],
                "top1_correct": bool(right1), "top5_correct": bool(right5)})
        models[model_id] = dict(model_info(file), **{
            "input_dtype": np.dtype(ind["dtype"]).name,
            "output_quantization": None if out_scale == 0 else
            {"scale": float(out_scale), "zero_point": int(out_zero_point)},
            "top1_accuracy": top1 / len(images), "top5_accuracy": top5 / len(images),
            "top1_correct": top1, "top5_correct": top5, "images": per_image})
    return {"bundle": CLASSIFIER_BUNDLE, "id": test["id"], "metric": test["options"]["metric"],
            "image_count": len(images),
            "images": [image_info(CLASSIFIER_BUNDLE, p) for p in images],
            "models": models}


# ----------------------------------------------------------------------------------------------
# Detector
# ----------------------------------------------------------------------------------------------
def coco_map(images: list[dict], truth: dict[str, list], detections: dict[str, list]) -> dict:
    ids = {im["path"]: k + 1 for k, im in enumerate(images)}
    annotations = []
    for im in images:
        for t in truth[im["path"]]:
            assert t["label"] == "face", t
            x, y, w, h = t["box"]
            annotations.append({"id": len(annotations) + 1, "image_id": ids[im["path"]], "category_id": 1,
                                "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})
    results = [{"image_id": ids[p], "category_id": 1, "bbox": d["box"], "score": d["score"]}
               for p, ds in detections.items() for d in ds]
    assert results, "loadRes needs at least one detection"
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = {"info": {}, "licenses": [],
                        "images": [{"id": ids[im["path"]], "width": im["width"], "height": im["height"]}
                                   for im in images],
                        "categories": [{"id": 1, "name": "face"}], "annotations": annotations}
        coco.createIndex()
        evaluation = COCOeval(coco, coco.loadRes(results), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return {"map50": float(evaluation.stats[1]), "map50_95": float(evaluation.stats[0]),
            "coco_stats": [float(v) for v in evaluation.stats]}


def record_detector(files: dict[str, str]) -> dict:
    test, images, labels = load_bundle(DETECTOR_BUNDLE)
    truth = {p: labels[p]["detection"] for p in images}
    anchors = blazeface.ssd_anchors()
    decode_options = dict(blazeface.DECODE_OPTIONS, min_score_thresh=DETECTION_THRESHOLD)
    prepared = {}
    for path in images:
        rgb, geo = blazeface.letterbox(os.path.join(ROOT, DETECTOR_BUNDLE, path))
        prepared[path] = (blazeface.to_minus1_1(rgb), geo)

    models = {}
    for model_id in test["models"]:
        file = files[model_id]
        it = Interpreter(model_path=os.path.join(ROOT, file), num_threads=THREADS)
        it.allocate_tensors()
        out = {d["name"]: d["index"] for d in it.get_output_details()}
        per_image, detections, sized = [], {}, []
        for path in images:
            x, geo = prepared[path]
            it.set_tensor(it.get_input_details()[0]["index"], x)
            it.invoke()
            reg, cls = it.get_tensor(out["regressors"]).copy(), it.get_tensor(out["classificators"]).copy()
            candidates = blazeface.decode(reg, cls, anchors, decode_options)
            kept = blazeface.nms_weighted(candidates, blazeface.NMS_OPTIONS["min_suppression_threshold"])
            kept = sorted(kept, key=lambda d: (-float(d["score"]), d["anchor"]))[:MAX_DETECTIONS]
            dets = []
            for d in kept:
                px = blazeface.to_pixels(d, geo)
                x0, y0, x1, y1 = px["box_px"]
                dets.append({"label": "face", "score": r(px["score"], 7),
                             "box": [r(x0, 4), r(y0, 4), r(x1 - x0, 4), r(y1 - y0, 4)]})
            detections[path] = dets
            sized.append({"path": path, "width": geo["width"], "height": geo["height"]})
            per_image.append({"path": path, "width": geo["width"], "height": geo["height"],
                              "letterbox": {"side": geo["side"], "pad_x": geo["pad_x"], "pad_y": geo["pad_y"]},
                              "truth": truth[path], "candidates": len(candidates),
                              "detections": dets})
        models[model_id] = dict(model_info(file), **coco_map(sized, truth, detections), images=per_image)
    return {"bundle": DETECTOR_BUNDLE, "id": test["id"], "metric": test["options"]["metric"],
            "image_count": len(images),
            "images": [image_info(DETECTOR_BUNDLE, p) for p in images],
            "models": models}


# ----------------------------------------------------------------------------------------------
def main(path: str) -> None:
    files = model_files()
    doc = {
        "generator": "tools/evaluation/record_sample_bundles.py (run by tools/evaluation/record.sh)",
        "versions": {name: version(name) for name in ("ai-edge-litert", "numpy", "pillow", "pycocotools")},
        "threads": THREADS,
        "classifier": {
            "preprocessing": "tools/models/photo_prep.py: RGB, centre square crop, Pillow BILINEAR "
                             "224x224; float32 byte/255, uint8 raw bytes, int8 byte-128",
            "labels": LABELS + " (line i = class i; first comma-separated synonym)",
            "top5": "highest dequantized probability first, ties by ascending index; probability "
                    "rounded to 8 decimals",
            "correct": "any accepted label equals (top-1) / is among (top-5) the predicted labels, "
                       "case-insensitive",
        },
        "detector": {
            "preprocessing": "tools/detectors/blazeface.py letterbox: centred black square pad "
                             "((S-w)//2, (S-h)//2), Pillow BILINEAR 128x128, byte/127.5-1",
            "postprocessing": f"blazeface.decode with score >= {DETECTION_THRESHOLD}, weighted NMS at "
                              f"IoU {blazeface.NMS_OPTIONS['min_suppression_threshold']}, best first, "
                              f"at most {MAX_DETECTIONS} per image",
            "box": "[x, y, width, height] in original-image pixels (not clipped), rounded to 4 "
                   "decimals; score rounded to 7 decimals",
            "map": "pycocotools COCOeval bbox, areaRng all, maxDets 100, computed from the rounded "
                   "detections below; map50 = stats[1], map50_95 = stats[0]; images without faces "
                   "are included",
        },
        "bundles": {
            "imagenet-sample": record_classifiers(files),
            "faces": record_detector(files),
        },
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    print(f"wrote {rel(path)} ({doc['versions']})")
    for name, bundle in doc["bundles"].items():
        for model_id, m in bundle["models"].items():
            if "top1_accuracy" in m:
                print(f"{name} {model_id}: top-1 {m['top1_accuracy']:.4f} ({m['top1_correct']}/{bundle['image_count']}), "
                      f"top-5 {m['top5_accuracy']:.4f} ({m['top5_correct']}/{bundle['image_count']})")
                for im in m["images"]:
                    print(f"   {im['path']}: " + "; ".join(
                        f"{t['label']} {t['probability']:.4f}" for t in im["top5"])
                        + f"  [top1 {'ok' if im['top1_correct'] else 'MISS'}, "
                          f"top5 {'ok' if im['top5_correct'] else 'MISS'}]")
            else:
                print(f"{name} {model_id}: mAP@0.5 {m['map50']:.4f}, mAP@0.5:0.95 {m['map50_95']:.4f}")
                for im in m["images"]:
                    print(f"   {im['path']}: truth {[t['box'] for t in im['truth']]}; "
                          f"{len(im['detections'])} detections: " + "; ".join(
                              f"{d['score']:.3f} {[round(v, 1) for v in d['box']]}" for d in im["detections"][:4])
                          + (" ..." if len(im["detections"]) > 4 else ""))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else OUTPUT)
