#!/usr/bin/env python3
"""Independent check: MediaPipe's own face detector on the reference face photos.

Runs in a throwaway venv with PyPI mediapipe==0.10.21 (tools/detectors/mediapipe_check.sh makes
it under /tmp; never in the repository's venvs). Runs both MediaPipe front-ends on the same
model file, Models/face_detection_short_range.tflite (identical bytes to the wheel's):

  * legacy solution  mp.solutions.face_detection.FaceDetection(model_selection=0,
    min_detection_confidence=0.5): graph FaceDetectionShortRangeCpu (letterbox, anchors,
    decoding, weighted NMS 0.3); boxes are relative floats -> converted to pixels here;
  * Tasks API  mediapipe.tasks.python.vision.FaceDetector (min_detection_confidence=0.5,
    min_suppression_threshold=0.3 default); boxes are integer pixels.

Also writes, per photo, <stem>.mediapipe_input_u8.bin: MediaPipe's own CPU preprocessing
reproduced with OpenCV (ImageToTensorCalculator, OpenCV converter: ROI = whole image padded to a
square around its centre (keep_aspect_ratio), cv2.warpPerspective INTER_LINEAR, BORDER_CONSTANT 0),
as uint8 HWC [128, 128, 3] before the [-1, 1] scaling. record_detection_reference.py feeds it to
the model and its numpy post-processing, which must then reproduce MediaPipe's boxes almost
exactly (the "exact path" check), besides the IoU check on the Pillow letterbox pipeline.

Writes Tests/Fixtures/DetectionReference/mediapipe_detections.json, which
record_detection_reference.py copies into reference.json (key "mediapipe") and compares with
its numpy pipeline (IoU per face).
Usage: <venv>/bin/python tools/detectors/mediapipe_check.py
"""
from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import blazeface  # noqa: E402

import mediapipe as mp  # noqa: E402
from mediapipe.tasks.python import BaseOptions, vision  # noqa: E402

MODEL = os.path.join(ROOT, "Models", "face_detection_short_range.tflite")
OUT = os.path.join(ROOT, "Tests", "Fixtures", "DetectionReference", "mediapipe_detections.json")


def opencv_letterbox(rgb: np.ndarray) -> np.ndarray:
    """ImageToTensorOpenCvConverter on the whole image with keep_aspect_ratio: uint8 [128,128,3]."""
    import cv2
    h, w = rgb.shape[:2]
    side = max(w, h)
    src = cv2.boxPoints(cv2.RotatedRect((w / 2.0, h / 2.0), (side, side), 0.0))
    n = float(blazeface.INPUT_SIZE)
    dst = np.array([[0, n], [0, 0], [n, 0], [n, n]], np.float32)  # same corner order as MediaPipe
    m = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
    return cv2.warpPerspective(rgb, m, (int(n), int(n)), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT)


def r6(v):
    return round(float(v), 6)


def main():
    legacy = mp.solutions.face_detection.FaceDetection(model_selection=0,
                                                       min_detection_confidence=0.5)
    tasks = vision.FaceDetector.create_from_options(vision.FaceDetectorOptions(
        base_options=BaseOptions(model_asset_path=MODEL), min_detection_confidence=0.5))
    photos = []
    for rel in blazeface.FACE_PHOTOS:
        path = os.path.join(ROOT, rel)
        with Image.open(path) as im:
            rgb = np.asarray(im.convert("RGB"))
        h, w = rgb.shape[:2]
        res = legacy.process(rgb)
        leg = []
        for d in res.detections or []:
            b = d.location_data.relative_bounding_box
            kps = [[r6(k.x * w), r6(k.y * h)] for k in d.location_data.relative_keypoints]
            leg.append({"score": r6(d.score[0]),
                        "box_relative": [r6(b.xmin), r6(b.ymin), r6(b.width), r6(b.height)],
                        "box_px": [r6(b.xmin * w), r6(b.ymin * h), r6((b.xmin + b.width) * w),
                                   r6((b.ymin + b.height) * h)],
                        "keypoints_px": kps})
        tr = tasks.detect(mp.Image(image_format=mp.ImageFormat.SRGB, data=np.ascontiguousarray(rgb)))
        tsk = []
        for d in tr.detections:
            bb = d.bounding_box
            tsk.append({"score": r6(d.categories[0].score),
                        "box_px": [bb.origin_x, bb.origin_y, bb.origin_x + bb.width,
                                   bb.origin_y + bb.height],
                        "keypoints_px": [[r6(k.x * w), r6(k.y * h)] for k in d.keypoints]})
        stem = os.path.splitext(os.path.basename(rel))[0]
        u8 = opencv_letterbox(np.ascontiguousarray(rgb))
        u8_name = f"{stem}.mediapipe_input_u8.bin"
        u8.astype(np.uint8).tofile(os.path.join(os.path.dirname(OUT), u8_name))
        photos.append({"file": rel, "width": w, "height": h,
                       "opencv_input_u8": f"Tests/Fixtures/DetectionReference/{u8_name}",
                       "legacy_solution": leg, "tasks_face_detector": tsk})
        print(f"{rel}: legacy {[(x['score'], [round(v) for v in x['box_px']]) for x in leg]}; "
              f"tasks {[(x['score'], x['box_px']) for x in tsk]}", file=sys.stderr)
    doc = {
        "generator": "tools/detectors/mediapipe_check.py",
        "mediapipe": version("mediapipe"),
        "opencv_python": version("opencv-contrib-python"),
        "model": "Models/face_detection_short_range.tflite",
        "notes": ("legacy_solution = mp.solutions.face_detection.FaceDetection(model_selection=0, "
                  "min_detection_confidence=0.5) (graph FaceDetectionShortRangeCpu; boxes relative to "
                  "the image, box_px = relative * width/height); tasks_face_detector = "
                  "mediapipe.tasks.python.vision.FaceDetector(min_detection_confidence=0.5) with the "
                  "same .tflite (integer pixel boxes). Boxes are [xmin, ymin, xmax, ymax] in original "
                  "image pixels; keypoints in MediaPipe order (right eye, left eye, nose tip, mouth "
                  "centre, right ear tragion, left ear tragion)."),
        "photos": photos,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
