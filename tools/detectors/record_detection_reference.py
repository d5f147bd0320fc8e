#!/usr/bin/env python3
"""Record the BlazeFace detection reference with Python ai_edge_litert (no TensorFlow, no MediaPipe).

Runs in .venv-ref (ai-edge-litert 2.3.0 + numpy + pillow). Writes
Tests/Fixtures/DetectionReference/:

  reference.json
  <stem>.input_u8.bin           uint8 [128,128,3] RGB after the Pillow letterbox (before scaling)
  <stem>.input.bin              float32 [1,128,128,3], the exact input tensor bytes
  <stem>.regressors.bin         float32 [1,896,16] raw output
  <stem>.classificators.bin     float32 [1,896,1]  raw output
  <stem>.ssd_<name>.bin         outputs of Models/face_detection_short_range_ssd.tflite (if present)
  anchors.bin                   float32 [896,4] (x_center, y_center, w, h)
(all little-endian, C order). Also read, not written: mediapipe_detections.json and
<stem>.mediapipe_input_u8.bin from tools/detectors/mediapipe_check.py (MediaPipe itself).

Preprocessing ("pillow_letterbox", see blazeface.py): RGB; pad to a centred black square of side
max(w, h) with integer offsets ((S-w)//2, (S-h)//2); Pillow BILINEAR resize to 128x128;
float32(byte) / 127.5 - 1. Post-processing: MediaPipe 0.10.21's FaceDetectionShortRange options
(anchors, decoding, sigmoid, score >= 0.5, NMS at IoU 0.3), re-implemented in numpy
(blazeface.py), both with plain IoU NMS and with MediaPipe's weighted ("blending") NMS. Boxes are
reported in original-image pixels as [xmin, ymin, xmax, ymax] (x_px = x_norm * S - pad_x).

Checks against MediaPipe (numbers written into reference.json):
  * "iou_vs_mediapipe": IoU between each weighted-NMS box of the Pillow pipeline and the matching
    box of MediaPipe's legacy face_detection solution (different resampler, so not exact);
  * "exact_path": the same numpy post-processing fed MediaPipe's own OpenCV-resampled input must
    reproduce MediaPipe's boxes to a small fraction of a pixel.

Usage: .venv-ref/bin/python tools/detectors/record_detection_reference.py
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib.metadata import version

import numpy as np
import PIL
from ai_edge_litert.interpreter import Interpreter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import blazeface  # noqa: E402

OUT_DIR = os.path.join(ROOT, "Tests", "Fixtures", "DetectionReference")
MODEL = "Models/face_detection_short_range.tflite"
SSD_MODEL = "Models/face_detection_short_range_ssd.tflite"
MP_JSON = os.path.join(OUT_DIR, "mediapipe_detections.json")
THREADS = [1, 2]


def rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_bin(name: str, arr: np.ndarray) -> str:
    path = os.path.join(OUT_DIR, name)
    arr = np.ascontiguousarray(arr)
    arr.astype(arr.dtype.newbyteorder("<")).tofile(path)
    return rel(path)


def tensor_info(d) -> dict:
    return {"name": d["name"], "index": int(d["index"]), "dtype": np.dtype(d["dtype"]).name,
            "shape": [int(v) for v in d["shape"]]}


def r(v, n=6):
    return round(float(v), n)


def det_json(d: dict) -> dict:
    return {"score": r(d["score"], 7),
            "box_px": [r(v, 4) for v in d["box_px"]],
            "box_norm": [r(v, 7) for v in d["box_norm"]],
            "keypoints_px": [[r(x, 4), r(y, 4)] for x, y in d["keypoints_px"]],
            "anchor": d["anchor"], "merged": d["merged"]}


def run(it: Interpreter, x: np.ndarray) -> dict:
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return {d["name"]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def best_iou(box, others):
    if not others:
        return None, None
    ious = [blazeface.iou(box, o["box_px"]) for o in others]
    k = int(np.argmax(ious))
    return ious[k], k


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in os.listdir(OUT_DIR):  # keep MediaPipe's files, rewrite ours
        if f.endswith(".bin") and ".mediapipe_" not in f:
            os.remove(os.path.join(OUT_DIR, f))
    mp_doc = None
    if os.path.exists(MP_JSON):
        with open(MP_JSON) as f:
            mp_doc = json.load(f)
    mp_by_file = {p["file"]: p for p in (mp_doc or {}).get("photos", [])}

    anchors = blazeface.ssd_anchors()
    assert anchors.shape == (blazeface.DECODE_OPTIONS["num_boxes"], 4)
    anchors_bin = write_bin("anchors.bin", anchors)

    interps = {t: Interpreter(model_path=os.path.join(ROOT, MODEL), num_threads=t) for t in THREADS}
    for it in interps.values():
        it.allocate_tensors()
    it1 = interps[1]
    ssd = None
    if os.path.exists(os.path.join(ROOT, SSD_MODEL)):
        ssd = Interpreter(model_path=os.path.join(ROOT, SSD_MODEL), num_threads=1)
        ssd.allocate_tensors()

    photos = []
    report = []
    for photo in blazeface.FACE_PHOTOS:
        stem = os.path.splitext(os.path.basename(photo))[0]
        rgb, geo = blazeface.letterbox(os.path.join(ROOT, photo))
        x = blazeface.to_minus1_1(rgb)
        outs = {t: run(interps[t], x) for t in THREADS}
        reg, cls = outs[1]["regressors"], outs[1]["classificators"]
        identical = all(np.array_equal(outs[t][k], outs[1][k]) for t in THREADS for k in outs[1])
        cands = blazeface.decode(reg, cls, anchors)
        weighted = [blazeface.to_pixels(d, geo) for d in blazeface.nms_weighted(cands)]
        plain = [blazeface.to_pixels(d, geo) for d in blazeface.nms_plain(cands)]
        entry = {
            "file": photo,
            "sha256": sha256_file(os.path.join(ROOT, photo)),
            "width": geo["width"], "height": geo["height"],
            "letterbox": {"side": geo["side"], "pad_x": geo["pad_x"], "pad_y": geo["pad_y"]},
            "input_u8": write_bin(f"{stem}.input_u8.bin", rgb),
            "input": write_bin(f"{stem}.input.bin", x),
            "outputs": {"regressors": write_bin(f"{stem}.regressors.bin", reg),
                        "classificators": write_bin(f"{stem}.classificators.bin", cls)},
            "threads": THREADS,
            "threads_bit_identical": identical,
            "max_score": r((1.0 / (1.0 + np.exp(-np.clip(cls.astype(np.float64), -100, 100)))).max()),
            "candidates_above_threshold": len(cands),
            "candidate_anchors": [d["anchor"] for d in cands],
            "detections_weighted_nms": [det_json(d) for d in weighted],
            "detections_plain_nms": [det_json(d) for d in plain],
        }
        mp = mp_by_file.get(photo)
        if mp is not None:
            legacy = mp["legacy_solution"]
            entry["mediapipe"] = {"legacy_solution": legacy,
                                  "tasks_face_detector": mp["tasks_face_detector"]}
            ious = []
            for d in weighted:
                v, k = best_iou(d["box_px"], legacy)
                ious.append({"iou": None if v is None else r(v, 4), "mediapipe_index": k,
                             "score_numpy": r(d["score"], 4),
                             "score_mediapipe": None if k is None else legacy[k]["score"]})
            entry["iou_vs_mediapipe"] = ious
            entry["count_matches_mediapipe"] = len(weighted) == len(legacy)
            # exact path: MediaPipe's own resampling -> our numpy post-processing
            u8_path = os.path.join(ROOT, mp["opencv_input_u8"])
            u8 = np.fromfile(u8_path, dtype=np.uint8).reshape(1, 128, 128, 3)
            # OpenCV convertTo(CV_32F, scale 2/255, offset -1)
            xo = (u8.astype(np.float32) * np.float32(2.0 / 255.0) + np.float32(-1.0))
            o = run(it1, xo)
            dets = blazeface.nms_weighted(blazeface.decode(o["regressors"], o["classificators"],
                                                           anchors))
            w, h = geo["width"], geo["height"]
            s = max(w, h)
            # MediaPipe pads symmetrically in float: offsets (S - w) / 2, (S - h) / 2
            geo_f = {"side": s, "pad_x": (s - w) / 2.0, "pad_y": (s - h) / 2.0}
            exact = [blazeface.to_pixels(d, geo_f) for d in dets]
            diff = 0.0
            ok = len(exact) == len(legacy)
            for d in exact:
                v, k = best_iou(d["box_px"], legacy)
                if k is None:
                    ok = False
                    continue
                diff = max(diff, max(abs(a - b) for a, b in zip(d["box_px"], legacy[k]["box_px"])),
                           abs(d["score"] - legacy[k]["score"]))
            entry["exact_path"] = {
                "input_u8": mp["opencv_input_u8"],
                "detections_weighted_nms": [det_json(d) for d in exact],
                "same_count_as_mediapipe": ok,
                "max_abs_diff_vs_mediapipe": r(diff, 6),
            }
        if ssd is not None:
            so = run(ssd, x)
            n = int(so["count"][0])
            s_geo = geo
            entry["ssd_model"] = {
                "outputs": {k: write_bin(f"{stem}.ssd_{k}.bin", so[k])
                            for k in ("boxes", "classes", "scores", "count")},
                "count": n,
                "scores": [r(v, 7) for v in so["scores"][0, :n]],
                "classes": [int(v) for v in so["classes"][0, :n]],
                "boxes_norm_yxyx": [[r(v, 7) for v in b] for b in so["boxes"][0, :n]],
                "boxes_px": [[r(b[1] * s_geo["side"] - s_geo["pad_x"], 4),
                              r(b[0] * s_geo["side"] - s_geo["pad_y"], 4),
                              r(b[3] * s_geo["side"] - s_geo["pad_x"], 4),
                              r(b[2] * s_geo["side"] - s_geo["pad_y"], 4)]
                             for b in so["boxes"][0, :n]],
                "matches_plain_nms": n == len(plain) and all(
                    abs(float(sc) - p["score"]) < 1e-6 and np.allclose(
                        [b[1], b[0], b[3], b[2]], p["box_norm"], atol=1e-5)
                    for sc, b, p in zip(so["scores"][0, :n], so["boxes"][0, :n], plain)),
            }
        photos.append(entry)
        report.append((photo, weighted, entry))

    doc = {
        "generator": "tools/detectors/record_detection_reference.py",
        "ai_edge_litert": version("ai-edge-litert"),
        "numpy": np.__version__,
        "pillow": PIL.__version__,
        "model": {"file": MODEL, "sha256": sha256_file(os.path.join(ROOT, MODEL)),
                  "bytes": os.path.getsize(os.path.join(ROOT, MODEL)),
                  "inputs": [tensor_info(d) for d in it1.get_input_details()],
                  "outputs": [tensor_info(d) for d in it1.get_output_details()]},
        "preprocessing": {
            "name": "pillow_letterbox",
            "steps": [
                "decode, convert to RGB (no EXIF rotation)",
                "S = max(width, height); paste onto an S x S black (0,0,0) canvas at "
                "(pad_x, pad_y) = ((S - width) // 2, (S - height) // 2)",
                "resize S x S -> 128 x 128 with Pillow BILINEAR (Image.resize, area-aware when "
                "shrinking)",
                "input = float32(byte) / float32(127.5) - float32(1), NHWC [1,128,128,3]",
            ],
            "to_pixels": "x_px = x_norm * S - pad_x, y_px = y_norm * S - pad_y",
            "mediapipe_differs": (
                "MediaPipe 0.10.21 (ImageToTensorCalculator, keep_aspect_ratio: true, "
                "border_mode: BORDER_ZERO, output_tensor_float_range [-1, 1]) also letterboxes "
                "with black, but resamples with OpenCV warpPerspective INTER_LINEAR (no "
                "antialiasing) and pads by (S - w) / 2 in float; see exact_path."),
        },
        "config_source": "tools/detectors/mediapipe_face_detection_graphs.pbtxt (graphs "
                         "FaceDetectionShortRange + FaceDetection embedded in mediapipe 0.10.21)",
        "anchor_options": blazeface.ANCHOR_OPTIONS,
        "decode_options": blazeface.DECODE_OPTIONS,
        "nms_options": blazeface.NMS_OPTIONS,
        "keypoint_names": blazeface.KEYPOINT_NAMES,
        "detection_format": {
            "box_px": "[xmin, ymin, xmax, ymax] in original image pixels (float)",
            "box_norm": "[xmin, ymin, xmax, ymax] normalised to the 128x128 letterboxed input",
            "keypoints_px": "6 [x, y] in original pixels, order keypoint_names",
            "anchor": "index of the best-scoring anchor of the detection",
            "merged": "number of candidates blended by weighted NMS (1 for plain NMS)",
            "score": "sigmoid(clip(raw, -100, 100)) of the best anchor (weighted NMS keeps it)",
        },
        "anchors": {"file": anchors_bin, "count": int(anchors.shape[0]),
                    "layout": "float32 [896, 4]: x_center, y_center, w, h (normalised)",
                    "order": "stride-8 layer: 16x16 cells x 2 anchors (y, then x, then anchor); "
                             "stride-16 layers 1-3 merged: 8x8 cells x 6 anchors",
                    "values": [[float(v) for v in a] for a in anchors]},
        "mediapipe_source": None if mp_doc is None else {
            "file": rel(MP_JSON), "mediapipe": mp_doc.get("mediapipe"),
            "notes": mp_doc.get("notes")},
        "photos": photos,
    }
    if ssd is not None:
        doc["ssd_model"] = {
            "file": SSD_MODEL, "sha256": sha256_file(os.path.join(ROOT, SSD_MODEL)),
            "bytes": os.path.getsize(os.path.join(ROOT, SSD_MODEL)),
            "labels": "Models/face_labels.txt",
            "inputs": [tensor_info(d) for d in ssd.get_input_details()],
            "outputs": [tensor_info(d) for d in ssd.get_output_details()],
            "signature_list": ssd.get_signature_list(),
            "notes": "same preprocessing and input bytes as the raw model; boxes are "
                     "[ymin, xmin, ymax, xmax] normalised to the 128x128 letterboxed input; "
                     "plain IoU NMS 0.3 (not weighted), score >= 0.5, max 25 detections; "
                     "boxes_px converted here with the photo's letterbox",
        }
    with open(os.path.join(OUT_DIR, "reference.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    for photo, weighted, entry in report:
        print(f"{photo} ({entry['width']}x{entry['height']}): "
              f"{entry['candidates_above_threshold']} candidates, "
              f"{len(weighted)} face(s), threads bit-identical: {entry['threads_bit_identical']}")
        for d, iou in zip(weighted, entry.get("iou_vs_mediapipe", [{}] * len(weighted))):
            print(f"   score {d['score']:.4f} box {[round(v, 1) for v in d['box_px']]} "
                  f"IoU vs MediaPipe {iou.get('iou')} (MediaPipe score {iou.get('score_mediapipe')})")
        if "exact_path" in entry:
            e = entry["exact_path"]
            print(f"   exact path: same count {e['same_count_as_mediapipe']}, max |diff| "
                  f"{e['max_abs_diff_vs_mediapipe']}")
        if "ssd_model" in entry:
            s = entry["ssd_model"]
            print(f"   ssd model: count {s['count']}, scores {s['scores']}, boxes_px "
                  f"{[[round(v, 1) for v in b] for b in s['boxes_px']]}, "
                  f"matches plain NMS {s['matches_plain_nms']}")
    total = sum(os.path.getsize(os.path.join(OUT_DIR, f)) for f in os.listdir(OUT_DIR))
    print(f"{rel(OUT_DIR)}: {len(os.listdir(OUT_DIR))} files, {total} bytes")


if __name__ == "__main__":
    main()
