#!/usr/bin/env python3
"""Print the face-detection graph configs compiled into PyPI mediapipe==0.10.21.

The wheel ships only a tiny wrapper graph as a file
(mediapipe/modules/face_detection/face_detection_short_range_cpu.binarypb, 262 bytes, which just
calls the "FaceDetectionShortRange" subgraph). The subgraphs that hold the anchor, decoding and
NMS options (FaceDetectionShortRange, FaceDetection; MediaPipe's face_detection_short_range.pbtxt
and face_detection.pbtxt) are compiled into mediapipe/python/_framework_bindings*.so as
serialized CalculatorGraphConfig protos. This script finds them by their `type` field, parses
them with mediapipe's own proto classes, checks that each parse re-serializes byte-for-byte, and
prints them as text protos (plus the wrapper .binarypb files).

Runs in a throwaway venv with mediapipe==0.10.21 installed (tools/detectors/mediapipe_check.sh
makes one under /tmp). Output: tools/detectors/mediapipe_face_detection_graphs.pbtxt
Usage: python dump_mediapipe_graphs.py > tools/detectors/mediapipe_face_detection_graphs.pbtxt
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
from importlib.metadata import version

import mediapipe
# Register the option extensions used by these graphs so text_format can print them.
import mediapipe.modules.face_detection.face_detection_pb2  # noqa: F401
from mediapipe.calculators.tensor import (image_to_tensor_calculator_pb2,  # noqa: F401
                                          inference_calculator_pb2,
                                          tensors_to_detections_calculator_pb2)
from mediapipe.calculators.tflite import ssd_anchors_calculator_pb2  # noqa: F401
from mediapipe.calculators.util import non_max_suppression_calculator_pb2  # noqa: F401
from mediapipe.framework import calculator_pb2
from google.protobuf import text_format

WANT = ["FaceDetectionShortRange", "FaceDetection"]
MP_DIR = os.path.dirname(mediapipe.__file__)


def parse_ok(blob: bytes, name: str):
    g = calculator_pb2.CalculatorGraphConfig()
    try:
        g.ParseFromString(blob)
    except Exception:
        return None
    if g.type != name or not g.node or g.SerializeToString() != blob:
        return None
    return g


def find_graphs(so: bytes, name: str):
    """Yield (offset, config) for each embedded CalculatorGraphConfig whose type is `name`."""
    tag = b"\xa2\x01" + bytes([len(name)]) + name.encode()  # field 20 (type), length-delimited
    for m in re.finditer(re.escape(tag), so):
        best = None
        for start in range(m.start() - 1, max(0, m.start() - 20000), -1):
            if so[start] == 0x0A and parse_ok(so[start:m.end()], name):
                best = start  # keep the earliest start that still parses cleanly
        if best is None:
            continue
        end = m.end()
        for extra in range(1, 2000):  # trailing graph_options / options fields
            if parse_ok(so[best:m.end() + extra], name):
                end = m.end() + extra
        yield best, parse_ok(so[best:end], name), hashlib.sha256(so[best:end]).hexdigest()


def main():
    so_path = glob.glob(os.path.join(MP_DIR, "python", "_framework_bindings*.so"))[0]
    so = open(so_path, "rb").read()
    print(f"# Face-detection graph configs of PyPI mediapipe=={version('mediapipe')} "
          f"(printed by tools/detectors/dump_mediapipe_graphs.py)")
    print(f"# Embedded graphs come from {os.path.relpath(so_path, os.path.dirname(MP_DIR))}"
          f" (sha256 {hashlib.sha256(so).hexdigest()})\n")
    for name in WANT:
        for off, g, sha in find_graphs(so, name):
            print(f"# ===== subgraph type \"{name}\": {len(g.SerializeToString())} bytes at "
                  f"offset {off:#x} of the .so (sha256 of the blob {sha})")
            print(text_format.MessageToString(g))
    for f in sorted(glob.glob(os.path.join(MP_DIR, "modules", "face_detection", "*.binarypb"))):
        g = calculator_pb2.CalculatorGraphConfig()
        data = open(f, "rb").read()
        g.ParseFromString(data)
        print(f"# ===== file {os.path.relpath(f, os.path.dirname(MP_DIR))} ({len(data)} bytes, "
              f"sha256 {hashlib.sha256(data).hexdigest()})")
        print(text_format.MessageToString(g))


if __name__ == "__main__":
    main()
