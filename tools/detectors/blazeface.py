"""BlazeFace short-range pre- and post-processing in numpy (Pillow + numpy only).

A re-implementation, written from the configuration that ships inside PyPI `mediapipe==0.10.21`
(the FaceDetectionShortRange / FaceDetection graphs embedded in
mediapipe/python/_framework_bindings*.so, printed by tools/detectors/dump_mediapipe_graphs.py
into tools/detectors/mediapipe_face_detection_graphs.pbtxt), of:

  * SsdAnchorsCalculator      -> ssd_anchors()
  * TensorsToDetectionsCalculator -> decode()          (box + keypoint decoding, sigmoid, threshold)
  * NonMaxSuppressionCalculator   -> nms_plain(), nms_weighted()   (DEFAULT and WEIGHTED algorithms)

Arithmetic is float32 where MediaPipe's C++ uses float, so results can be compared closely.

Preprocessing (letterbox()): this is *our* contract for the reference, chosen to be exactly
reproducible with integer offsets while keeping MediaPipe's aspect-ratio-preserving letterbox:
  1. decode, convert to RGB (no EXIF rotation),
  2. S = max(width, height); paste the image onto an S x S black (0, 0, 0) canvas at
     offset (pad_x, pad_y) = ((S - width) // 2, (S - height) // 2),
  3. resize the S x S canvas to 128 x 128 with Pillow's BILINEAR filter (area-aware when
     shrinking, like photo_prep.py's 224 resize),
  4. float32 value = byte / 127.5 - 1  (numpy: u8.astype(float32) / float32(127.5) - float32(1)).
Mapping back: x_pixels = x_normalised * S - pad_x, y_pixels = y_normalised * S - pad_y.
"""
from __future__ import annotations

import math

import numpy as np
from PIL import Image

INPUT_SIZE = 128

# SsdAnchorsCalculatorOptions after FaceDetectionShortRange's FaceDetectionOptions are applied
# (FaceDetection graph node options + option_value mappings; see the .pbtxt dump).
ANCHOR_OPTIONS = {
    "num_layers": 4,
    "min_scale": 0.1484375,
    "max_scale": 0.75,
    "input_size_height": 128,
    "input_size_width": 128,
    "anchor_offset_x": 0.5,
    "anchor_offset_y": 0.5,
    "strides": [8, 16, 16, 16],
    "aspect_ratios": [1.0],
    "reduce_boxes_in_lowest_layer": False,
    "interpolated_scale_aspect_ratio": 1.0,
    "fixed_anchor_size": True,
}

# TensorsToDetectionsCalculatorOptions (same source).
DECODE_OPTIONS = {
    "num_classes": 1,
    "num_boxes": 896,
    "num_coords": 16,
    "box_coord_offset": 0,
    "keypoint_coord_offset": 4,
    "num_keypoints": 6,
    "num_values_per_keypoint": 2,
    "reverse_output_order": True,  # raw box = (x_center, y_center, w, h); keypoints (x, y)
    "x_scale": 128.0,
    "y_scale": 128.0,
    "w_scale": 128.0,
    "h_scale": 128.0,
    "apply_exponential_on_box_size": False,
    "sigmoid_score": True,
    "score_clipping_thresh": 100.0,
    "min_score_thresh": 0.5,
}

# NonMaxSuppressionCalculatorOptions (same source).
NMS_OPTIONS = {
    "min_suppression_threshold": 0.3,
    "overlap_type": "INTERSECTION_OVER_UNION",
    "algorithm": "WEIGHTED",
}

# Photos used by the detection reference (repository-relative). coffee.jpg is the negative case
# (no face; best sigmoid score 0.31). chelsea.png (a cat) is not used as one: with the Pillow
# letterbox below it gives a 0.578 false positive (MediaPipe's OpenCV resize gives none), too
# close to the 0.5 threshold to be a stable test.
FACE_PHOTOS = [
    "Tests/Fixtures/Photos/test/grace_hopper.jpg",
    "Tests/Fixtures/Photos/calibration/astronaut.jpg",
    "Tests/Fixtures/Photos/faces/two_portraits.jpg",
    "Tests/Fixtures/Photos/test/coffee.jpg",
]

KEYPOINT_NAMES = ["right_eye", "left_eye", "nose_tip", "mouth_center", "right_ear_tragion",
                  "left_ear_tragion"]  # MediaPipe FaceKeyPoint order (subject's right/left)


# ----------------------------------------------------------------------------------------------
# Preprocessing
# ----------------------------------------------------------------------------------------------
def letterbox(path: str) -> tuple[np.ndarray, dict]:
    """Photo -> (uint8 [128, 128, 3] RGB, geometry dict)."""
    with Image.open(path) as im:
        img = im.convert("RGB")
    w, h = img.size
    side = max(w, h)
    pad_x, pad_y = (side - w) // 2, (side - h) // 2
    canvas = Image.new("RGB", (side, side), (0, 0, 0))
    canvas.paste(img, (pad_x, pad_y))
    small = canvas.resize((INPUT_SIZE, INPUT_SIZE), Image.BILINEAR)
    geo = {"width": w, "height": h, "side": side, "pad_x": pad_x, "pad_y": pad_y}
    return np.asarray(small, dtype=np.uint8).copy(), geo


def to_minus1_1(rgb: np.ndarray) -> np.ndarray:
    """uint8 [H, W, 3] -> float32 [1, H, W, 3] = byte / 127.5 - 1."""
    return (rgb.astype(np.float32) / np.float32(127.5) - np.float32(1.0))[None]


# ----------------------------------------------------------------------------------------------
# Anchors (SsdAnchorsCalculator::GenerateAnchors)
# ----------------------------------------------------------------------------------------------
def _calculate_scale(min_scale, max_scale, stride_index, num_strides):
    if num_strides == 1:
        return (min_scale + max_scale) * 0.5
    return min_scale + (max_scale - min_scale) * 1.0 * stride_index / (num_strides - 1.0)


def ssd_anchors(opt: dict = ANCHOR_OPTIONS) -> np.ndarray:
    """float32 [N, 4] rows (x_center, y_center, w, h), in MediaPipe's order:
    layer groups of equal stride; inside a group y (rows), then x (columns), then anchor id."""
    strides = opt["strides"]
    n_layers = opt["num_layers"]
    out = []
    layer_id = 0
    while layer_id < n_layers:
        heights, widths, ratios, scales = [], [], [], []
        last = layer_id
        while last < len(strides) and strides[last] == strides[layer_id]:
            scale = _calculate_scale(opt["min_scale"], opt["max_scale"], last, len(strides))
            if last == 0 and opt["reduce_boxes_in_lowest_layer"]:
                ratios += [1.0, 2.0, 0.5]
                scales += [0.1, scale, scale]
            else:
                for ar in opt["aspect_ratios"]:
                    ratios.append(ar)
                    scales.append(scale)
                if opt["interpolated_scale_aspect_ratio"] > 0.0:
                    nxt = 1.0 if last == len(strides) - 1 else _calculate_scale(
                        opt["min_scale"], opt["max_scale"], last + 1, len(strides))
                    scales.append(math.sqrt(scale * nxt))
                    ratios.append(opt["interpolated_scale_aspect_ratio"])
            last += 1
        for r, s in zip(ratios, scales):
            rs = math.sqrt(r)
            heights.append(s / rs)
            widths.append(s * rs)
        stride = strides[layer_id]
        fm_h = int(math.ceil(opt["input_size_height"] / stride))
        fm_w = int(math.ceil(opt["input_size_width"] / stride))
        for y in range(fm_h):
            for x in range(fm_w):
                for a in range(len(heights)):
                    # float32 arithmetic as in the C++ ((y + offset) * 1.0f / feature_map_height)
                    yc = np.float32(np.float32(y + opt["anchor_offset_y"]) / np.float32(fm_h))
                    xc = np.float32(np.float32(x + opt["anchor_offset_x"]) / np.float32(fm_w))
                    if opt["fixed_anchor_size"]:
                        aw, ah = 1.0, 1.0
                    else:
                        aw, ah = widths[a], heights[a]
                    out.append((xc, yc, aw, ah))
        layer_id = last
    return np.asarray(out, dtype=np.float32)


# ----------------------------------------------------------------------------------------------
# Decoding (TensorsToDetectionsCalculator, CPU path)
# ----------------------------------------------------------------------------------------------
def decode(regressors: np.ndarray, classificators: np.ndarray, anchors: np.ndarray,
           opt: dict = DECODE_OPTIONS) -> list[dict]:
    """Raw outputs [1, N, 16] / [1, N, 1] -> candidate detections (before NMS), in anchor order.

    Each: {"anchor": i, "score": float32, "box": [xmin, ymin, xmax, ymax] (float32, normalised
    to the 128x128 input), "keypoints": [[x, y] * 6]}. Boxes with negative width/height (or NaN)
    are dropped, as MediaPipe does."""
    f32 = np.float32
    raw = regressors.reshape(-1, opt["num_coords"]).astype(np.float32)
    sc = classificators.reshape(-1, opt["num_classes"]).astype(np.float32)
    ax, ay, aw, ah = (anchors[:, k] for k in range(4))
    o = opt["box_coord_offset"]
    if opt["reverse_output_order"]:
        xc, yc, w, h = raw[:, o], raw[:, o + 1], raw[:, o + 2], raw[:, o + 3]
    else:
        yc, xc, h, w = raw[:, o], raw[:, o + 1], raw[:, o + 2], raw[:, o + 3]
    xc = xc / f32(opt["x_scale"]) * aw + ax
    yc = yc / f32(opt["y_scale"]) * ah + ay
    if opt["apply_exponential_on_box_size"]:
        h = np.exp(h / f32(opt["h_scale"])) * ah
        w = np.exp(w / f32(opt["w_scale"])) * aw
    else:
        h = h / f32(opt["h_scale"]) * ah
        w = w / f32(opt["w_scale"]) * aw
    ymin, xmin = yc - h / f32(2), xc - w / f32(2)
    ymax, xmax = yc + h / f32(2), xc + w / f32(2)
    kps = []
    for k in range(opt["num_keypoints"]):
        off = opt["keypoint_coord_offset"] + k * opt["num_values_per_keypoint"]
        if opt["reverse_output_order"]:
            kx, ky = raw[:, off], raw[:, off + 1]
        else:
            ky, kx = raw[:, off], raw[:, off + 1]
        kps.append((kx / f32(opt["x_scale"]) * aw + ax, ky / f32(opt["y_scale"]) * ah + ay))
    # scores: clip, sigmoid, best class
    if opt["score_clipping_thresh"]:
        t = f32(opt["score_clipping_thresh"])
        sc = np.clip(sc, -t, t)
    if opt["sigmoid_score"]:
        with np.errstate(over="ignore"):  # exp(100) overflows float32 -> inf -> score 0, as in C++
            sc = f32(1) / (f32(1) + np.exp(-sc))
    best = sc.max(axis=1)
    dets = []
    for i in range(raw.shape[0]):
        if best[i] < f32(opt["min_score_thresh"]):
            continue
        bw, bh = xmax[i] - xmin[i], ymax[i] - ymin[i]
        if not (bw >= 0 and bh >= 0):  # negative or NaN
            continue
        dets.append({"anchor": i, "score": best[i],
                     "box": [xmin[i], ymin[i], xmax[i], ymax[i]],
                     "keypoints": [[kps[k][0][i], kps[k][1][i]] for k in range(len(kps))]})
    return dets


# ----------------------------------------------------------------------------------------------
# NMS (NonMaxSuppressionCalculator)
# ----------------------------------------------------------------------------------------------
def iou(a, b) -> float:
    """OverlapSimilarity(INTERSECTION_OVER_UNION) on [xmin, ymin, xmax, ymax] boxes."""
    ix0, iy0 = max(a[0], b[0]), max(a[1], b[1])
    ix1, iy1 = min(a[2], b[2]), min(a[3], b[3])
    if ix1 < ix0 or iy1 < iy0:
        return 0.0
    inter = float(ix1 - ix0) * float(iy1 - iy0)
    union = float(a[2] - a[0]) * float(a[3] - a[1]) + float(b[2] - b[0]) * float(b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _by_score(dets):
    # descending score; ties by anchor index (MediaPipe's std::sort order is unspecified on ties)
    return sorted(dets, key=lambda d: (-float(d["score"]), d["anchor"]))


def nms_plain(dets: list[dict], threshold: float = NMS_OPTIONS["min_suppression_threshold"],
              max_detections: int = -1) -> list[dict]:
    """Algorithm DEFAULT: keep the best box, drop every later box whose IoU with a kept box is
    > threshold."""
    kept = []
    for d in _by_score(dets):
        if any(iou(d["box"], k["box"]) > threshold for k in kept):
            continue
        kept.append(d)
        if 0 < max_detections <= len(kept):
            break
    return [dict(d, merged=1) for d in kept]


def nms_weighted(dets: list[dict], threshold: float = NMS_OPTIONS["min_suppression_threshold"]
                 ) -> list[dict]:
    """Algorithm WEIGHTED ("blending"): take the best remaining box; every remaining box whose
    IoU with it is > threshold (itself included) is a candidate; the output box corners and
    keypoints are the score-weighted means of the candidates; its score stays the best one."""
    remaining = _by_score(dets)
    out = []
    while remaining:
        top = remaining[0]
        cands = [d for d in remaining if iou(d["box"], top["box"]) > threshold]
        rest = [d for d in remaining if not iou(d["box"], top["box"]) > threshold]
        f32 = np.float32
        total = f32(0)
        acc = np.zeros(4, np.float32)
        kacc = np.zeros((len(top["keypoints"]), 2), np.float32)
        for c in cands:
            s = f32(c["score"])
            total += s
            acc += np.asarray(c["box"], np.float32) * s
            kacc += np.asarray(c["keypoints"], np.float32) * s
        box = acc / total if cands else np.asarray(top["box"], np.float32)
        kps = kacc / total if cands else np.asarray(top["keypoints"], np.float32)
        out.append({"anchor": top["anchor"], "score": top["score"], "box": list(box),
                    "keypoints": kps.tolist(), "merged": len(cands)})
        if len(rest) == len(remaining):
            break
        remaining = rest
    return out


def to_pixels(det: dict, geo: dict) -> dict:
    """Normalised (letterboxed 128x128 space) detection -> original-image pixels (float64)."""
    s, px, py = geo["side"], geo["pad_x"], geo["pad_y"]
    b = [float(v) for v in det["box"]]
    return {
        "score": float(det["score"]),
        "box_px": [b[0] * s - px, b[1] * s - py, b[2] * s - px, b[3] * s - py],
        "box_norm": b,
        "keypoints_px": [[float(x) * s - px, float(y) * s - py] for x, y in det["keypoints"]],
        "anchor": int(det["anchor"]),
        "merged": int(det.get("merged", 1)),
    }


def iou_px(a, b) -> float:
    return iou(a, b)
