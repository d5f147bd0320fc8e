#!/usr/bin/env python3
"""BlazeFace short-range with the classic SSD post-processing op appended.

Makes Models/face_detection_short_range_ssd.tflite: the trained network of
Models/face_detection_short_range.tflite (its operators, tensors and weights copied unchanged,
so `regressors`/`classificators` are bit-identical), followed by a small TFLite graph that ends
in the `TFLite_Detection_PostProcess` custom op (the same op as the classic SSD MobileNet
examples). Outputs, in this order (subgraph outputs and signature "serving_default"):

  0 boxes   float32 [1, 25, 4]  [ymin, xmin, ymax, xmax], normalised to the 128x128 input
                                (i.e. to the letterboxed square, see Models/SOURCES.md)
  1 classes float32 [1, 25]     always 0 (the only class, "face"; labels file face_labels.txt)
  2 scores  float32 [1, 25]     sigmoid scores, descending
  3 count   float32 [1]         number of valid rows

How (route: graph grafting, not a TF re-implementation of BlazeFace):
  1. A TensorFlow module maps the raw outputs to what the op expects and calls a
     tf.function(experimental_implements="TFLite_Detection_PostProcess" ...) stand-in, the way
     the TF Object Detection API exports SSD models; converted with TFLiteConverter
     (allow_custom_ops). The mapping:
       box encodings [1,896,4] = (y_c, x_c, log(max(h/128, 1e-7)), log(max(w/128, 1e-7)))
         from regressors (x_c, y_c, w, h, keypoints...) - the op computes
         y = y_c / y_scale * a_h + a_y and h = exp(h_enc / h_scale) * a_h, so with
         y_scale = x_scale = 128, h_scale = w_scale = 1 and anchors (y, x, 1, 1) this is exactly
         MediaPipe's linear decoding (up to float rounding of exp(log(.)));
       class predictions [1,896,2] = (0 background, sigmoid(clip(classificators, -100, 100))),
         with the score forced to 0 where the decoded w or h is negative (MediaPipe drops those);
       anchors [896,4] constant (y_center, x_center, 1, 1) from blazeface.ssd_anchors().
     Op attributes: max_detections 25, max_classes_per_detection 1, use_regular_nms false,
     nms_score_threshold 0.5, nms_iou_threshold 0.3, num_classes 1, y/x_scale 128, h/w_scale 1.
  2. The two flatbuffers are merged with TensorFlow's schema object API: the post-processing
     subgraph's inputs are rewired to BlazeFace's `regressors` / `classificators` tensors, its
     tensors, buffers and operator codes are appended, and the new outputs become the model's.
     MediaPipe's TFLite metadata block is dropped (it describes the two raw outputs).
  3. Checked with ai_edge_litert: raw intermediate outputs equal the original model's, and the
     boxes/scores equal blazeface.py's decoding + plain IoU NMS on every reference photo.

The op's NMS is plain (hard) IoU NMS, not MediaPipe's weighted blending, and keypoints are not
output. Runs in .venv-models (TensorFlow 2.21.0). Usage: python tools/detectors/make_blazeface_ssd.py
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import blazeface  # noqa: E402

SRC = os.path.join(ROOT, "Models", "face_detection_short_range.tflite")
SRC_SHA256 = "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"
OUT = os.path.join(ROOT, "Models", "face_detection_short_range_ssd.tflite")
LABELS = os.path.join(ROOT, "Models", "face_labels.txt")

N = 896
MAX_DETECTIONS = 25
ATTRS = [  # (name, proto field, value) - TFLite_Detection_PostProcess attributes
    ("max_detections", "i", MAX_DETECTIONS),
    ("max_classes_per_detection", "i", 1),
    ("detections_per_class", "i", MAX_DETECTIONS),
    ("use_regular_nms", "b", "false"),
    ("nms_score_threshold", "f", blazeface.DECODE_OPTIONS["min_score_thresh"]),
    ("nms_iou_threshold", "f", blazeface.NMS_OPTIONS["min_suppression_threshold"]),
    ("num_classes", "i", 1),
    ("y_scale", "f", 128.0),
    ("x_scale", "f", 128.0),
    ("h_scale", "f", 1.0),
    ("w_scale", "f", 1.0),
]
OUTPUT_NAMES = ["boxes", "classes", "scores", "count"]


def postprocess_model() -> bytes:
    anchors = blazeface.ssd_anchors()
    # TFLite_Detection_PostProcess wants anchors as (y_center, x_center, h, w).
    anchors_yxhw = np.stack([anchors[:, 1], anchors[:, 0], anchors[:, 3], anchors[:, 2]], axis=1)
    signature = " ".join(['name: "TFLite_Detection_PostProcess"'] +
                         [f'attr {{ key: "{k}" value {{ {t}: {v} }} }}' for k, t, v in ATTRS])

    @tf.function(experimental_implements=signature)
    def detection_postprocess(box_encodings, class_predictions, anchors):
        # Stand-in body; the converter replaces the whole function by the custom op.
        return (tf.constant(0.0, name="boxes"), tf.constant(0.0, name="classes"),
                tf.constant(0.0, name="scores"), tf.constant(0.0, name="num_detections"))

    class PostProcess(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, N, 16], tf.float32, name="regressors"),
                                      tf.TensorSpec([1, N, 1], tf.float32, name="classificators")])
        def f(self, regressors, classificators):
            xc, yc = regressors[:, :, 0], regressors[:, :, 1]
            w, h = regressors[:, :, 2], regressors[:, :, 3]
            eps = tf.constant(1e-7, tf.float32)
            enc = tf.stack([yc, xc, tf.math.log(tf.maximum(h / 128.0, eps)),
                            tf.math.log(tf.maximum(w / 128.0, eps))], axis=-1)
            valid = tf.cast(tf.logical_and(w >= 0.0, h >= 0.0), tf.float32)[..., None]
            s = tf.sigmoid(tf.clip_by_value(classificators, -100.0, 100.0)) * valid
            cls = tf.concat([tf.zeros_like(s), s], axis=-1)
            b, c, sc, n = detection_postprocess(enc, cls, tf.constant(anchors_yxhw))
            return {"boxes": b, "classes": c, "scores": sc, "count": n}

    m = PostProcess()
    with tempfile.TemporaryDirectory() as d:
        tf.saved_model.save(m, d, signatures={"serving_default": m.f.get_concrete_function()})
        conv = tf.lite.TFLiteConverter.from_saved_model(d)
        conv.allow_custom_ops = True
        return conv.convert()


def load(buf: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))


def tensor_name(t) -> str:
    return t.name.decode() if isinstance(t.name, bytes) else t.name


def output_role(sg_pp, idx, op_outputs) -> str:
    """Which of boxes/classes/scores/count an output tensor is: the custom op's outputs are, in
    order, boxes, classes, scores, num_detections (TFLite kernel contract)."""
    return OUTPUT_NAMES[op_outputs.index(idx)]


def merge(base_buf: bytes, pp_buf: bytes) -> bytes:
    base, pp = load(base_buf), load(pp_buf)
    sg, sp = base.subgraphs[0], pp.subgraphs[0]
    by_name = {tensor_name(sg.tensors[i]): i for i in sg.outputs}
    # post-process inputs -> BlazeFace outputs (matched by name)
    tmap = {}
    for i in sp.inputs:
        name = tensor_name(sp.tensors[i])  # e.g. serving_default_regressors:0
        key = "regressors" if "regressors" in name else "classificators"
        tmap[i] = by_name[key]
    # buffers
    bmap = {0: 0}
    for j, b in enumerate(pp.buffers):
        if j == 0:
            continue
        base.buffers.append(b)
        bmap[j] = len(base.buffers) - 1
    # operator codes
    cmap = {}
    for j, c in enumerate(pp.operatorCodes):
        for k, e in enumerate(base.operatorCodes):
            if (e.builtinCode, e.deprecatedBuiltinCode, e.customCode, e.version) == \
                    (c.builtinCode, c.deprecatedBuiltinCode, c.customCode, c.version):
                cmap[j] = k
                break
        else:
            base.operatorCodes.append(c)
            cmap[j] = len(base.operatorCodes) - 1
    # tensors
    for i, t in enumerate(sp.tensors):
        if i in tmap:
            continue
        t.buffer = bmap[t.buffer]
        sg.tensors.append(t)
        tmap[i] = len(sg.tensors) - 1
    # operators
    custom = None
    for op in sp.operators:
        op.opcodeIndex = cmap[op.opcodeIndex]
        op.inputs = [tmap[i] if i >= 0 else i for i in op.inputs]
        op.outputs = [tmap[i] if i >= 0 else i for i in op.outputs]
        code = base.operatorCodes[op.opcodeIndex]
        if code.customCode in (b"TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess"):
            custom = op
        sg.operators.append(op)
    assert custom is not None and len(custom.outputs) == 4
    # outputs in the classic order, renamed
    for name, idx in zip(OUTPUT_NAMES, custom.outputs):
        sg.tensors[idx].name = name.encode()
    sg.outputs = list(custom.outputs)
    # one signature, so name-based lookup works too
    sig = schema.SignatureDefT()
    sig.signatureKey = b"serving_default"
    sig.subgraphIndex = 0
    tin = schema.TensorMapT()
    tin.name = b"input"
    tin.tensorIndex = sg.inputs[0]
    sig.inputs = [tin]
    sig.outputs = []
    for name, idx in zip(OUTPUT_NAMES, custom.outputs):
        tm = schema.TensorMapT()
        tm.name = name.encode()
        tm.tensorIndex = idx
        sig.outputs.append(tm)
    base.signatureDefs = [sig]
    # The source's TFLITE_METADATA (MediaPipe's: RGB, mean/std 127.5, two raw outputs) would
    # describe the wrong outputs now: drop it (the buffer is emptied, indices stay valid).
    for md in base.metadata or []:
        base.buffers[md.buffer].data = None
    base.metadata = None
    base.description = (b"BlazeFace short-range (MediaPipe 0.10.21, Apache-2.0) + "
                        b"TFLite_Detection_PostProcess; tools/detectors/make_blazeface_ssd.py")
    builder = flatbuffers.Builder(1024)
    builder.Finish(base.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def check(path: str):
    """Raw outputs unchanged; post-processed boxes == numpy decoding + plain NMS."""
    from ai_edge_litert.interpreter import Interpreter
    ref = Interpreter(model_path=SRC, num_threads=1)
    ref.allocate_tensors()
    it = Interpreter(model_path=path, num_threads=1, experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    outs = {d["name"]: d for d in it.get_output_details()}
    print("outputs (interpreter order):",
          [(d["name"], list(d["shape"])) for d in it.get_output_details()])
    print("signature:", it.get_signature_list())
    anchors = blazeface.ssd_anchors()
    for rel in blazeface.FACE_PHOTOS:
        rgb, geo = blazeface.letterbox(os.path.join(ROOT, rel))
        x = blazeface.to_minus1_1(rgb)
        ref.set_tensor(ref.get_input_details()[0]["index"], x)
        ref.invoke()
        raw = {d["name"]: ref.get_tensor(d["index"]) for d in ref.get_output_details()}
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        inner = {d["name"]: d["index"] for d in it.get_tensor_details()}
        for k in ("regressors", "classificators"):
            assert np.array_equal(it.get_tensor(inner[k]), raw[k]), k
        count = int(it.get_tensor(outs["count"]["index"])[0])
        boxes = it.get_tensor(outs["boxes"]["index"])[0, :count]
        scores = it.get_tensor(outs["scores"]["index"])[0, :count]
        dets = blazeface.nms_plain(blazeface.decode(raw["regressors"], raw["classificators"],
                                                    anchors), max_detections=MAX_DETECTIONS)
        assert count == len(dets), (rel, count, len(dets))
        for b, s, d in zip(boxes, scores, dets):
            xmin, ymin, xmax, ymax = d["box"]
            assert abs(float(s) - float(d["score"])) < 1e-6, (s, d["score"])
            assert np.allclose(b, [ymin, xmin, ymax, xmax], atol=1e-5), (b, d["box"])
        print(f"{rel}: {count} detection(s), scores {[round(float(s), 4) for s in scores]}; "
              "matches numpy decode + plain NMS")


def main():
    with open(SRC, "rb") as f:
        base = f.read()
    if hashlib.sha256(base).hexdigest() != SRC_SHA256:
        raise SystemExit(f"{SRC}: unexpected sha256; run tools/detectors/fetch_blazeface.sh")
    merged = merge(base, postprocess_model())
    with open(OUT, "wb") as f:
        f.write(merged)
    with open(LABELS, "w") as f:
        f.write("face\n")
    print(f"{os.path.relpath(OUT, ROOT)}: {len(merged)} bytes, sha256 "
          f"{hashlib.sha256(merged).hexdigest()}")
    check(OUT)


if __name__ == "__main__":
    main()
