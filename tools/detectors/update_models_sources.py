#!/usr/bin/env python3
"""Append (or refresh) the face-detector section of Models/SOURCES.md.

Models/SOURCES.md is written by tools/models/make_mobilenet_v2.py, which rewrites the whole file.
This script owns everything from the MARKER line to the end of the file: it keeps whatever comes
before the marker untouched and rewrites the rest, so it can be re-run after make_mobilenet_v2.py
(which drops the section) and is idempotent otherwise. Python standard library only.

Usage: python3 tools/detectors/update_models_sources.py
"""
from __future__ import annotations

import hashlib
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCES = os.path.join(ROOT, "Models", "SOURCES.md")
MARKER = "<!-- face detector section: written by tools/detectors/update_models_sources.py -->"
FILES = ["face_detection_short_range.tflite", "face_detection_short_range_ssd.tflite",
         "face_labels.txt"]


def row(name: str) -> str:
    path = os.path.join(ROOT, "Models", name)
    with open(path, "rb") as f:
        data = f.read()
    return f"| `{name}` | {len(data)} | `{hashlib.sha256(data).hexdigest()}` |"


SECTION = """
# Face detector: BlazeFace short-range (MediaPipe)

Fetched by `tools/detectors/fetch_blazeface.sh`; the SSD variant built by
`tools/detectors/make_blazeface_ssd.py`; this section written by
`tools/detectors/update_models_sources.py`. Reference outputs: `Tests/Fixtures/DetectionReference/`
(`tools/detectors/record_detection_reference.py`, see `tools/detectors/README.md`).

| File | Bytes | sha256 |
|---|---|---|
{rows}

## Origin and licence

- `face_detection_short_range.tflite` is a byte-for-byte copy of
  `mediapipe/modules/face_detection/face_detection_short_range.tflite` from the PyPI wheel
  `mediapipe==0.10.21` (`mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl`, sha256
  `05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3`), fetched with
  `pip download --no-deps` and unzipped member by member (mediapipe is not installed).
- Licence: **Apache-2.0** (the wheel's `LICENSE` file and its `License: Apache 2.0` metadata;
  Copyright The MediaPipe Authors / Google). BlazeFace: Bazarevsky et al., "BlazeFace:
  Sub-millisecond Neural Face Detection on Mobile GPUs", 2019.
- Flatbuffer description `keras2tflite_facedetector-front.tflite.generated`; 164 operators
  (CONV_2D, DEPTHWISE_CONV_2D, ADD, RELU, PAD, MAX_POOL_2D, RESHAPE, CONCATENATION) with float16
  weights expanded by 74 DEQUANTIZE ops; no SignatureDef. It carries MediaPipe's TFLite metadata
  (name "Short Range Face Detection"; input `ImageProperties color_space: RGB`,
  `NormalizationOptions mean [127.5] std [127.5]`, stats min -1 max 1; outputs "raw
  boxes/keypoints" and "scores").

## Tensors

| | Name | Type | Shape | Interpreter index |
|---|---|---|---|---|
| input 0 | `input` | float32 | [1, 128, 128, 3] NHWC | 0 |
| output 0 | `regressors` | float32 | [1, 896, 16] | 175 |
| output 1 | `classificators` | float32 | [1, 896, 1] | 174 |

`regressors` row i (anchor i): `x_c, y_c, w, h` of the box, then 6 keypoints as `x, y` pairs
(right eye, left eye, nose tip, mouth centre, right ear tragion, left ear tragion; the subject's
right/left), all in 128-pixel input units relative to the anchor. `classificators`: one logit.

## Input contract

- RGB, float32, value = byte / 127.5 - 1 (range [-1, 1]): from the metadata above and from
  MediaPipe's `ImageToTensorCalculator` option `output_tensor_float_range {{ min: -1.0 max: 1.0 }}`.
- **Aspect ratio is kept (letterbox), not stretched.** MediaPipe's FaceDetection graph sets
  `keep_aspect_ratio: true` and `border_mode: BORDER_ZERO` on ImageToTensorCalculator: the whole
  image is padded symmetrically to a square (side = max(width, height)) with black (byte 0, i.e.
  -1.0) and that square is resampled to 128x128 (CPU path: OpenCV `warpPerspective`,
  INTER_LINEAR, no antialiasing; padding offset (S - w) / 2 in float). Detections are projected
  back through the same transform (DetectionProjectionCalculator).
- The NetRunner reference (`Tests/Fixtures/DetectionReference/`) uses the same letterbox with
  integer offsets and Pillow's resampler: paste onto an S x S black canvas at
  ((S - w) // 2, (S - h) // 2), Pillow `resize((128, 128), BILINEAR)` (antialiased like the
  MobileNet contract), then `float32(byte) / 127.5 - 1`; pixels = normalised * S - offset.
  Its boxes agree with MediaPipe's at IoU >= 0.92 on the reference photos; fed MediaPipe's own
  OpenCV-resampled input, the same post-processing reproduces MediaPipe to < 1e-4 px.

## Where the constants come from

The wheel has no `.pbtxt`, and its only face-detection graph files
(`mediapipe/modules/face_detection/face_detection_short_range_cpu.binarypb`, 262 bytes) merely
call the subgraph `FaceDetectionShortRange`. That subgraph and `FaceDetection` (MediaPipe's
`face_detection_short_range.pbtxt` and `face_detection.pbtxt`) are compiled into
`mediapipe/python/_framework_bindings.cpython-311-x86_64-linux-gnu.so` as serialized
CalculatorGraphConfig protos. `tools/detectors/dump_mediapipe_graphs.py` extracts them (parse
with mediapipe's own proto classes, byte-exact re-serialization check) into
`tools/detectors/mediapipe_face_detection_graphs.pbtxt`. Quoted from there:

```
# FaceDetectionShortRange: node "FaceDetection", FaceDetectionOptions
  model_path: "mediapipe/modules/face_detection/face_detection_short_range.tflite"
  tensor_width: 128  tensor_height: 128
  num_layers: 4  strides: 8 strides: 16 strides: 16 strides: 16
  interpolated_scale_aspect_ratio: 1.0
  num_boxes: 896  x_scale: 128.0 y_scale: 128.0 w_scale: 128.0 h_scale: 128.0
  min_score_thresh: 0.5
# FaceDetection: ImageToTensorCalculatorOptions
  keep_aspect_ratio: true  output_tensor_float_range {{ min: -1.0 max: 1.0 }}  border_mode: BORDER_ZERO
# FaceDetection: SsdAnchorsCalculatorOptions (+ option_value: input_size_width/height <- tensor_width/height,
#   num_layers, strides, interpolated_scale_aspect_ratio <- FaceDetectionOptions above)
  min_scale: 0.1484375  max_scale: 0.75  anchor_offset_x: 0.5  anchor_offset_y: 0.5
  num_layers: 1 (overridden: 4)  aspect_ratios: 1.0  fixed_anchor_size: true
# FaceDetection: TensorsToDetectionsCalculatorOptions (+ num_boxes, x/y/w/h_scale, min_score_thresh from above)
  num_classes: 1  num_coords: 16  keypoint_coord_offset: 4  num_keypoints: 6
  num_values_per_keypoint: 2  box_coord_offset: 0  reverse_output_order: true
  sigmoid_score: true  score_clipping_thresh: 100.0
# FaceDetection: NonMaxSuppressionCalculatorOptions
  min_suppression_threshold: 0.3  overlap_type: INTERSECTION_OVER_UNION  algorithm: WEIGHTED
```

## Anchors (SsdAnchorsCalculator)

896 anchors, each (x_center, y_center, w, h), normalised. Strides 8, 16, 16, 16: layers with the
same stride are generated together. Stride 8: 16x16 cells x 2 anchors (aspect ratio 1.0 plus the
interpolated one) = 512; stride 16 (layers 1-3 merged): 8x8 cells x 6 anchors = 384. Order: for
each layer group, row y, then column x, then anchor. x_center = (x + 0.5) / feature_map_width,
y_center = (y + 0.5) / feature_map_height (feature map = ceil(128 / stride)). `fixed_anchor_size:
true` makes every w = h = 1.0 (min_scale/max_scale then do not matter). The 896 values are in
`Tests/Fixtures/DetectionReference/anchors.bin` and `reference.json`.

## Decoding (TensorsToDetectionsCalculator)

For anchor a and raw row r (reverse_output_order: x before y):
x_c = r[0] / 128 * a.w + a.x, y_c = r[1] / 128 * a.h + a.y, w = r[2] / 128 * a.w,
h = r[3] / 128 * a.h (linear, no exp); box = (x_c - w/2, y_c - h/2, x_c + w/2, y_c + h/2)
normalised to the 128x128 input; keypoint k = (r[4+2k] / 128 * a.w + a.x, r[5+2k] / 128 * a.h + a.y).
Score = sigmoid(clamp(logit, -100, 100)); keep score >= 0.5; boxes with negative width or height
are dropped. Then NMS, then projection to the original image.

## NMS

MediaPipe uses **weighted NMS** ("blending", algorithm WEIGHTED) at IoU threshold 0.3: take the
highest-scoring remaining detection; every remaining detection with IoU > 0.3 against it
(itself included) is merged: box corners and keypoints become their score-weighted mean, the
score stays the top score; repeat. Plain (hard) IoU NMS at 0.3 is recorded in the reference too.

## SSD variant: `face_detection_short_range_ssd.tflite`

The same trained network (operators, tensors and weights copied unchanged; `regressors` and
`classificators` stay bit-identical as intermediate tensors) followed by a few ops and the
`TFLite_Detection_PostProcess` custom op (built into the TFLite/LiteRT op resolver), grafted on by
`tools/detectors/make_blazeface_ssd.py`: box encodings (y_c, x_c, log(h/128), log(w/128)) with
anchors (y, x, 1, 1) and y/x_scale 128, h/w_scale 1 reproduce the linear decoding above; class
scores = (0 background, sigmoid(logit)), 0 where w or h < 0. Op options: max_detections 25,
max_classes_per_detection 1, use_regular_nms false, nms_score_threshold 0.5, nms_iou_threshold
0.3, num_classes 1. Same input and preprocessing as above; MediaPipe's metadata block is removed.

| Output (interpreter order) | Name | Type | Shape | Meaning |
|---|---|---|---|---|
| 0 | `boxes` | float32 | [1, 25, 4] | [ymin, xmin, ymax, xmax], normalised to the 128x128 letterboxed input |
| 1 | `classes` | float32 | [1, 25] | class index, always 0 = line 1 of `face_labels.txt` ("face") |
| 2 | `scores` | float32 | [1, 25] | sigmoid scores, descending |
| 3 | `count` | float32 | [1] | number of valid rows |

This is the classic SSD order (boxes, classes, scores, count). A SignatureDef `serving_default`
maps input `input` and outputs `boxes`, `classes`, `count`, `scores` (Python's
`get_signature_list()` sorts them alphabetically); resolve by name or shape rather than position.
Note the post-process op does plain IoU NMS (not MediaPipe's blending) and drops keypoints; its
boxes equal the reference's plain-NMS boxes. `face_labels.txt` is one line, `face`, no
background line.
"""


def main():
    with open(SOURCES, encoding="utf-8") as f:
        text = f.read()
    head = text.split(MARKER)[0].rstrip("\n") + "\n"
    rows = "\n".join(row(n) for n in FILES)
    with open(SOURCES, "w", encoding="utf-8") as f:
        f.write(head + "\n" + MARKER + "\n" + SECTION.format(rows=rows).lstrip("\n"))
    print(f"updated {os.path.relpath(SOURCES, ROOT)}")


if __name__ == "__main__":
    main()
