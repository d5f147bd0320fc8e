#!/usr/bin/env python3
"""Write TFLite metadata (TFLite Support schema "M001") into the uint8 MobileNetV2.

Input : Models/mobilenet_v2_1.0_224_uint8.tflite, Models/imagenet_labels.txt
Output: Models/mobilenet_v2_1.0_224_uint8_metadata.tflite

Uses tflite-support's own metadata writer (image_classifier.MetadataWriter), the same code the
TFLite Task Library's models were made with, so the result is what the Task Library and
MediaPipe Tasks expect: a "TFLITE_METADATA" buffer in the model flatbuffer plus the associated
files appended as an uncompressed (stored) zip.

Runs in the venv made by tools/metadata/build.sh (tflite-support 0.4.4, see requirements.txt).
Deterministic: the zip entry timestamps are pinned to 1980-01-01 00:00:00 so a re-run rewrites
a byte-identical file.

The float32 model is deliberately not given metadata here: with the 14 MB float model the
output would exceed the repository's 5 MB per-file limit, and the uint8 model carries the same
float contract (see NORM_* below).
"""
import ctypes
import hashlib
import os
import sys
import tempfile
import time
import types
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC_MODEL = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8.tflite")
SRC_LABELS = os.path.join(ROOT, "Models", "imagenet_labels.txt")
DST_MODEL = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8_metadata.tflite")

SRC_MODEL_SHA256 = "31e761da59ce87e8dc8a2eea65fa2eacd9c914aa206177cf2c24df8527b48a4c"
SRC_LABELS_SHA256 = "4eb3da435cf544e4a6f390f62c84cb9c9bb68cf8b14e97f8a063452382e5efd2"

# The float contract of the model: the (dequantized) input is RGB in [0, 1] = byte / 255, i.e.
# (x - 0) / 255. The uint8 input's quantization (scale 1/255, zero point 0) says the same. The
# Task Library ignores NormalizationOptions for uint8 inputs (it feeds the raw bytes), so this
# is correct for it, and it is the value a float32 twin of the model would need.
NORM_MEAN = [0.0]
NORM_STD = [255.0]

MODEL_NAME = "MobileNetV2 1.0 224 ImageNet (uint8 quantized)"
MODEL_DESCRIPTION = (
    "Identify the most prominent object in the image from a set of 1,000 ImageNet-1k "
    "(ILSVRC2012) categories, no background class. torchvision MobileNetV2 weights converted "
    "to TFLite and fully integer-quantized (uint8 input and output) by NetRunner's "
    "tools/models/make_mobilenet_v2.py. Input: RGB 224x224 bytes (float contract byte/255); "
    "the ImageNet mean/std normalisation is done inside the graph. Output: 1,000 softmax "
    "probabilities (uint8, scale 1/256).")
MODEL_VERSION = "1"
MODEL_AUTHOR = ("NetRunner project (conversion, quantization, metadata); MobileNetV2 weights: "
                "torchvision (Soumith Chintala and contributors)")
MODEL_LICENSE = ("BSD-3-Clause (torchvision weights). Labels: OpenCV "
                 "classification_classes_ILSVRC2012.txt, Apache-2.0 AND BSD-3-Clause.")

INPUT_NAME = "image"
INPUT_DESCRIPTION = (
    "Input image to be classified: RGB, 224x224, NHWC [1, 224, 224, 3] uint8 raw bytes "
    "(quantization scale 1/255, zero point 0: the float value is byte / 255 in [0, 1]). "
    "NetRunner's reference preprocessing: centre crop to a square, bilinear resize. Do not "
    "apply the ImageNet mean/std normalisation: it is inside the graph.")
OUTPUT_NAME = "probability"
OUTPUT_DESCRIPTION = (
    "Probabilities of the 1,000 labels respectively: [1, 1000] uint8, quantization scale 1/256 "
    "(= 0.00390625), zero point 0. Index i is line i (0-based) of labels.txt.")

LABELS_NAME = "labels.txt"           # TENSOR_AXIS_LABELS, no locale: fills class_name
LABELS_EN_NAME = "labels_en.txt"     # TENSOR_AXIS_LABELS, locale "en": fills display_name


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def preload_libusb():
    """tflite-support 0.4.4's native modules link libusb-1.0.so.0, absent on this machine.

    The pinned PyPI package libusb-package ships the library; loading it RTLD_GLOBAL first
    satisfies the dependency (no system package needed)."""
    try:
        import libusb_package
    except ImportError:
        return
    lib = os.path.join(os.path.dirname(libusb_package.__file__), "libusb-1.0.so")
    if os.path.exists(lib):
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)


class _FixedTime:
    """Stand-in for the `time` module inside `zipfile` so writestr() stamps 1980-01-01."""

    @staticmethod
    def time():
        return 0.0

    @staticmethod
    def localtime(_=None):
        return time.struct_time((1980, 1, 1, 0, 0, 0, 1, 1, 0))


def main() -> int:
    preload_libusb()
    from tflite_support.metadata_writers import image_classifier, metadata_info, writer_utils
    from tflite_support import metadata_schema_py_generated as _metadata_fb

    model_buf = open(SRC_MODEL, "rb").read()
    labels = open(SRC_LABELS, "rb").read()
    assert sha256(model_buf) == SRC_MODEL_SHA256, "source model changed"
    assert sha256(labels) == SRC_LABELS_SHA256, "labels changed"
    lines = labels.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert len(lines) == 1000, len(lines)
    # Display names: the first synonym of each line (e.g. "tench, Tinca tinca" -> "tench").
    short = "".join(line.split(",")[0].strip() + "\n" for line in lines).encode("utf-8")

    in_type = writer_utils.get_input_tensor_types(model_buf)[0]
    out_type = writer_utils.get_output_tensor_types(model_buf)[0]

    with tempfile.TemporaryDirectory() as tmp:
        labels_path = os.path.join(tmp, LABELS_NAME)
        labels_en_path = os.path.join(tmp, LABELS_EN_NAME)
        open(labels_path, "wb").write(labels)           # byte-identical copy
        open(labels_en_path, "wb").write(short)

        general_md = metadata_info.GeneralMd(
            name=MODEL_NAME, version=MODEL_VERSION, description=MODEL_DESCRIPTION,
            author=MODEL_AUTHOR, licenses=MODEL_LICENSE)
        input_md = metadata_info.InputImageTensorMd(
            name=INPUT_NAME, description=INPUT_DESCRIPTION,
            norm_mean=NORM_MEAN, norm_std=NORM_STD,
            color_space_type=_metadata_fb.ColorSpaceType.RGB, tensor_type=in_type)
        label_md = metadata_info.LabelFileMd(file_path=labels_path)
        label_md.description = ("ImageNet-1k class names, one per line in output order "
                                "(comma-separated synonyms, as in Models/imagenet_labels.txt).")
        label_en_md = metadata_info.LabelFileMd(file_path=labels_en_path, locale="en")
        label_en_md.description = ("Display names (locale en): the first synonym of each line "
                                   "of labels.txt.")
        output_md = metadata_info.ClassificationTensorMd(
            name=OUTPUT_NAME, description=OUTPUT_DESCRIPTION,
            label_files=[label_md, label_en_md], tensor_type=out_type)

        writer = image_classifier.MetadataWriter.create_from_metadata_info(
            model_buf, general_md=general_md, input_md=input_md, output_md=output_md)
        saved = zipfile.time
        zipfile.time = _FixedTime
        try:
            out = writer.populate()
        finally:
            zipfile.time = saved
        metadata_json = writer.get_metadata_json()

    out = bytes(out)
    # Sanity: the zip is stored (uncompressed) and holds the two files byte for byte.
    import io
    with zipfile.ZipFile(io.BytesIO(out)) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        assert sorted(infos) == sorted([LABELS_NAME, LABELS_EN_NAME]), sorted(infos)
        for info in infos.values():
            assert info.compress_type == zipfile.ZIP_STORED, info
        assert zf.read(LABELS_NAME) == labels
        assert zf.read(LABELS_EN_NAME) == short

    with open(DST_MODEL, "wb") as f:
        f.write(out)
    print(metadata_json)
    print(f"wrote {os.path.relpath(DST_MODEL, ROOT)}: {len(out)} bytes, sha256 {sha256(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
