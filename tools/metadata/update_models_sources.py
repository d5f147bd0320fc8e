#!/usr/bin/env python3
"""Append (or refresh) the TFLite-metadata section at the end of Models/SOURCES.md.

Models/SOURCES.md is rewritten whole by tools/models/make_mobilenet_v2.py, and
tools/detectors/update_models_sources.py owns everything from its marker to the end of the file;
both drop this section. This script owns everything from MARKER to the end: it keeps what comes
before untouched and rewrites the rest, so after regenerating the others run, in order,
make_mobilenet_v2.py -> tools/detectors/update_models_sources.py -> this script.
Idempotent. Python standard library only.
"""
import hashlib
import json
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCES = os.path.join(ROOT, "Models", "SOURCES.md")
MODEL = os.path.join(ROOT, "Models", "mobilenet_v2_1.0_224_uint8_metadata.tflite")
DUMP = os.path.join(ROOT, "Tests", "Fixtures", "Metadata",
                    "mobilenet_v2_1.0_224_uint8_metadata.json")
MARKER = "<!-- metadata section: written by tools/metadata/update_models_sources.py -->"

SECTION = """
# ImageNet classifier with TFLite metadata

Written by `tools/metadata/write_metadata.py` (run via `tools/metadata/build.sh`, see
`tools/metadata/README.md`); this section by `tools/metadata/update_models_sources.py`. Metadata
dump for tests: `Tests/Fixtures/Metadata/mobilenet_v2_1.0_224_uint8_metadata.json` (and
`face_detection_short_range.json` for the BlazeFace model above, read only).

| File | Bytes | sha256 |
|---|---|---|
| `mobilenet_v2_1.0_224_uint8_metadata.tflite` | {size} | `{sha}` |

## Origin and licence

- `Models/mobilenet_v2_1.0_224_uint8.tflite` (above; sha256 `31e761da...b48a4c`) plus standard
  TFLite Support metadata (schema `metadata_schema.fbs`, file identifier `M001`, min parser
  version {min_parser}) written with PyPI `tflite-support==0.4.4`
  (`tflite_support.metadata_writers.image_classifier.MetadataWriter`, the writer used for the
  TFLite Task Library's models). Same graph, tensors and weights: re-parsed with
  ai-edge-litert 2.3.0's schema the model equals the original field by field once the metadata
  entry and its buffer are removed, and its outputs on every uint8 case of
  `Tests/Fixtures/Reference` (1 and 2 threads) are bit-identical to the original's
  (`tools/metadata/check_model.py`).
- Licences: weights BSD-3-Clause (torchvision); labels Apache-2.0 AND BSD-3-Clause (OpenCV's
  `classification_classes_ILSVRC2012.txt`, as `imagenet_labels.txt` above); the metadata text
  is NetRunner's own.
- The float32 model is not given metadata: with it the file would be ~14 MB, over the 5 MB
  per-file limit, and it would add nothing the uint8 model does not exercise.

## What the metadata says

- Model: name "{name}", version "{version}", author and licence strings as in the dump.
- Storage: metadata buffer "TFLITE_METADATA" = model buffer {buf_index}, {meta_size} bytes at
  file offset {meta_offset} (the converter's "min_runtime_version" and "CONVERSION_METADATA"
  entries are kept). Associated files: an uncompressed (stored) zip appended after the flatbuffer,
  starting at file offset {zip_start}; central-directory offsets are absolute (from the start of
  the file), as Python's zipfile writes them; entry timestamps fixed at 1980-01-01 00:00.
- Input tensor metadata "image": ImageProperties color_space RGB; NormalizationOptions
  mean {mean}, std {std} (the float contract: value = byte / 255 in [0, 1], matching the input
  quantization scale 1/255, zero point 0; the Task Library ignores normalization for uint8
  inputs and feeds raw bytes); stats min {in_min} max {in_max} (the writer's uint8 range).
- Output tensor metadata "probability": FeatureProperties; stats min {out_min} max {out_max};
  associated files (both TENSOR_AXIS_LABELS, 1000 lines, line i = output index i, no background):
{files}
- No ScoreThresholdingOptions and no score calibration: the Task Library returns all classes
  unless the caller sets a threshold.
"""


def main():
    data = open(MODEL, "rb").read()
    d = json.load(open(DUMP))
    assert d["file_sha256"] == hashlib.sha256(data).hexdigest(), "dump is stale: run build.sh dump"
    md = d["tflite_metadata"]["metadata"]
    sg = md["subgraph_metadata"][0]
    inp, outp = sg["input_tensor_metadata"][0], sg["output_tensor_metadata"][0]
    norm = inp["process_units"][0]["options"]
    entries = {e["name"]: e for e in d["associated_files_zip"]["entries"]}
    files = []
    for f in outp["associated_files"]:
        e = entries[f["name"]]
        loc = f'locale "{f["locale"]}"' if "locale" in f else "no locale (class names)"
        files.append(f'  - `{f["name"]}`, {loc}: {e["size"]} bytes, sha256 `{e["sha256"]}`')
    files[0] += " (byte-identical to `imagenet_labels.txt`)"
    if len(files) > 1:
        files[1] += " (display names: the first synonym of each line)"
    section = SECTION.format(
        size=len(data), sha=d["file_sha256"], min_parser=md.get("min_parser_version"),
        name=md["name"], version=md["version"],
        buf_index=d["tflite_metadata"]["buffer_index"], meta_size=d["tflite_metadata"]["size"],
        meta_offset=d["tflite_metadata"]["offset_in_file"],
        zip_start=d["associated_files_zip"]["zip_start_in_file"],
        mean=norm["mean"], std=norm["std"],
        in_min=inp["stats"]["min"], in_max=inp["stats"]["max"],
        out_min=outp["stats"]["min"], out_max=outp["stats"]["max"],
        files="\n".join(files))
    text = open(SOURCES, encoding="utf-8").read()
    head = text.split(MARKER)[0].rstrip("\n") + "\n"
    with open(SOURCES, "w", encoding="utf-8") as f:
        f.write(head + "\n" + MARKER + "\n" + section.lstrip("\n"))
    print(f"updated {os.path.relpath(SOURCES, ROOT)}")


if __name__ == "__main__":
    main()
