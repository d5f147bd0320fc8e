#!/usr/bin/env python3
"""Writes the crafted index files and results lines of issue 54, findings 9 and 10 ("hostile
inputs, round six"), from an index and its results file written by `netrunner similar index`:

    python3 tools/trial/make_index_cases.py BASE.nrindex RESULTS.jsonl OUT_FOLDER

Standard library only. Writes into OUT_FOLDER, with `cases.json` saying what each file is and
what NetRunner must answer (`tools/trial/round_six.py` checks it):

  index_nan.nrindex, index_inf.nrindex, index_3e38.nrindex, index_zero.nrindex,
  index_denormal.nrindex      the second embedding replaced: one value NaN, one value +inf, every
                              value 3e38, every value 0, every value a subnormal (1e-40); refused,
                              naming "embedding 2 of N" and its photo
  index_wrong_dimension.nrindex  the header's dimension one less than the rows hold: refused
  index_truncated.nrindex     cut in the middle of the embeddings: refused
  index_short_unit.nrindex    unit vectors of 8 values: read by `similar`, refused by `serve --index`
                              (the served model's embeddings have 1024)
  lines_*.jsonl               the results file with its first line made hostile: a nested "image"
                              or "float_embedding", a repeated "image" or "float_embedding" (the
                              decoder's reading: the first), and numbers JSON refuses (0x1p3, +1,
                              .5, 007) in the embedding
"""
from __future__ import annotations

import json
import math
import os
import struct
import sys


def read_index(path: str) -> tuple[int, str, list[list[float]], list[str], bytes]:
    data = open(path, "rb").read()
    assert data[:8] == b"NRINDEX1", path
    dimension, count, model_length = struct.unpack_from("<IQI", data, 8)
    model = data[24:24 + model_length].decode()
    at = 24 + model_length
    rows = [list(struct.unpack_from(f"<{dimension}f", data, at + 4 * dimension * row)) for row in range(count)]
    at += 4 * dimension * count
    paths = []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        paths.append(data[at + 4:at + 4 + length].decode())
        at += 4 + length
    return dimension, model, rows, paths, data


def write_index(dimension: int, model: str, rows: list[list[float]], paths: list[str], header_dimension=None) -> bytes:
    out = b"NRINDEX1" + struct.pack("<IQ", header_dimension or dimension, len(rows))
    out += struct.pack("<I", len(model.encode())) + model.encode()
    for row in rows:
        out += struct.pack(f"<{len(row)}f", *row)
    for path in paths:
        out += struct.pack("<I", len(path.encode())) + path.encode()
    return out


def main() -> None:
    base, results, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    dimension, model, rows, paths, data = read_index(base)
    assert len(rows) >= 2, "the base index needs two embeddings"
    cases = []

    def write(name: str, body: bytes, **expect) -> None:
        with open(os.path.join(out, name), "wb") as handle:
            handle.write(body)
        cases.append({"file": name, **expect})

    second = f"embedding 2 of {len(rows)} ({paths[1]})"
    for name, row, words in (
        ("nan", [math.nan] + rows[1][1:], "not a number"),
        ("inf", [math.inf] + rows[1][1:], "not a number"),
        ("3e38", [3e38] * dimension, "has a length of"),
        ("zero", [0.0] * dimension, "all zeros"),
        ("denormal", [1e-40] * dimension, "has a length of"),
    ):
        body = write_index(dimension, model, [rows[0], row] + rows[2:], paths)
        write(f"index_{name}.nrindex", body, kind="index", expect="refused", words=[second, words])
    write("index_wrong_dimension.nrindex", write_index(dimension, model, rows, paths, header_dimension=dimension - 1),
          kind="index", expect="refused", words=["is not a NetRunner similarity index"])
    vectors_end = 24 + len(model.encode()) + 4 * dimension * len(rows)
    write("index_truncated.nrindex", data[:vectors_end - 4 * dimension // 2], kind="index", expect="refused",
          words=["cut short"])
    unit = [1 / math.sqrt(8)] * 8
    write("index_short_unit.nrindex", write_index(8, model, [unit for _ in rows], paths), kind="index",
          expect="served model refused", words=["8"])

    lines = open(results).read().splitlines()
    first = json.loads(lines[0])
    real_image = first["image"]
    real = first["inference_results"]["embedding"]["float_embedding"]
    decoy = [1.0] + [0.0] * (len(real) - 1)
    decoy_text = json.dumps(decoy, separators=(",", ":"))
    vector_key = '"float_embedding":['
    assert lines[0].count(vector_key) == 1 and lines[0].count('"image":') == 1

    def hostile(name: str, line: str, **expect) -> None:
        write(f"lines_{name}.jsonl", ("\n".join([line] + lines[1:]) + "\n").encode(), kind="lines", **expect)

    hostile("nested_image", lines[0].replace("{", '{"extra":{"image":"decoy.jpg"},', 1), expect="indexed",
            image=real_image, embedding=real)
    hostile("nested_vector", lines[0].replace("{", '{"extra":{"float_embedding":' + decoy_text + "},", 1),
            expect="indexed", image=real_image, embedding=real)
    hostile("vector_in_string", lines[0].replace("{", '{"extra":"\\"float_embedding\\":' + decoy_text + '",', 1),
            expect="indexed", image=real_image, embedding=real)
    # A repeated key: Foundation's decoder reads the first, and so must the fast reader.
    hostile("repeated_image", lines[0].replace('"image":', '"image":"decoy.jpg","image":', 1), expect="indexed",
            image="decoy.jpg", embedding=real)
    hostile("repeated_vector", lines[0].replace(vector_key, '"float_embedding":' + decoy_text + "," + vector_key, 1),
            expect="indexed", image=real_image, embedding=decoy)
    for name, number in (("hex", "0x1p3"), ("plus", "+1"), ("point", ".5"), ("leading_zeros", "007")):
        hostile(f"number_{name}", lines[0].replace(vector_key, vector_key + number + ",", 1), expect="refused",
                words=["line 1"])

    with open(os.path.join(out, "cases.json"), "w") as handle:
        json.dump({"model": model, "dimension": dimension, "count": len(rows), "cases": cases}, handle, indent=1)
    for case in cases:
        print(f"{case['file']}: {case['expect']}")


if __name__ == "__main__":
    main()
