#!/usr/bin/env python3
"""Reads a NetRunner similarity index (`.nrindex`, from `netrunner similar index`) with numpy.

The layout (docs/embeddings.md#the-index-file), every number little-endian, nothing aligned or
padded:

    offset  size             field
    0       8                magic: the ASCII bytes NRINDEX1
    8       4   uint32       dimension D: values per embedding, 1 to 65,536
    12      8   uint64       count N: embeddings, at most 50,000,000
    20      4   uint32       M: the model's name's length in bytes, at most 65,536
    24      M                the model's name, UTF-8 (a catalog id, hub:NAME, or a path)
    24+M    4*N*D float32    the embeddings, row after row, each of unit length
    ...     N times          each photo's path: a uint32 length (at most 65,536), then UTF-8

and nothing after the last path. A file that says otherwise is refused, as NetRunner refuses it.

    import nrindex
    index = nrindex.load("out/pets.nrindex")
    index.embeddings.shape            # (N, D), float32
    index.paths[0], index.model
    index.search(index.embeddings[0], k=5)   # [(path, cosine), ...], most similar first

As a command: `nrindex.py INDEX [--json]` prints the model, the count, the dimension and the
paths (with --json, the embeddings too: {"model", "dimension", "paths", "embeddings"}).
"""
import dataclasses
import json
import struct
import sys

import numpy as np

MAGIC = b"NRINDEX1"
MAXIMUM_DIMENSION = 65_536
MAXIMUM_COUNT = 50_000_000
MAXIMUM_TEXT = 65_536


class NRIndexError(ValueError):
    """A file that is not a NetRunner similarity index, or is cut short."""


@dataclasses.dataclass
class Index:
    """An index's model, photos and embeddings (N x D float32, unit rows)."""

    model: str
    paths: list
    embeddings: np.ndarray

    @property
    def dimension(self):
        return self.embeddings.shape[1]

    def search(self, query, k=5, excluding=None):
        """The k photos nearest a query (cosine similarity, most similar first), as `similar search`."""
        query = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if query.shape != (self.dimension,) or not np.isfinite(norm) or norm == 0:
            raise ValueError(f"a query of {self.dimension} finite values, not all zero, is needed")
        similarities = self.embeddings @ (query / norm)
        if excluding is not None:
            similarities[excluding] = -np.inf
        order = np.argsort(-similarities, kind="stable")[: max(0, min(k, len(self.paths) - (excluding is not None)))]
        return [(self.paths[i], float(similarities[i])) for i in order]


def load(path):
    """Reads an index file, checking every size it declares against the file and the limits."""
    with open(path, "rb") as handle:
        data = handle.read()

    def bad(reason):
        return NRIndexError(f"{path} is not a NetRunner similarity index: {reason}")

    if len(data) < 24:
        raise bad("it is cut short")
    if data[:8] != MAGIC:
        raise bad("it does not start with NRINDEX1")
    dimension, count, model_length = struct.unpack_from("<IQI", data, 8)
    if not 1 <= dimension <= MAXIMUM_DIMENSION:
        raise bad(f"a dimension of {dimension}")
    if count > MAXIMUM_COUNT:
        raise bad(f"{count} embeddings (at most {MAXIMUM_COUNT})")
    offset = 24
    if model_length > MAXIMUM_TEXT or offset + model_length > len(data):
        raise bad("its model name is cut short or not UTF-8")
    try:
        model = data[offset : offset + model_length].decode("utf-8")
    except UnicodeDecodeError:
        raise bad("its model name is cut short or not UTF-8") from None
    offset += model_length
    values = count * dimension
    if offset + 4 * values > len(data):
        raise bad("its embeddings are cut short")
    # The floats start wherever the model's name ends: copied into an aligned array.
    embeddings = np.frombuffer(data, dtype="<f4", count=values, offset=offset).astype(np.float32)
    embeddings = embeddings.reshape(count, dimension)
    if not np.isfinite(embeddings).all():
        raise bad("an embedding holds a value that is not a number")
    offset += 4 * values
    paths = []
    for _ in range(count):
        if offset + 4 > len(data):
            raise bad("its paths are cut short")
        (length,) = struct.unpack_from("<I", data, offset)
        offset += 4
        if length > MAXIMUM_TEXT or offset + length > len(data):
            raise bad("its paths are cut short")
        try:
            paths.append(data[offset : offset + length].decode("utf-8"))
        except UnicodeDecodeError:
            raise bad("its paths are cut short") from None
        offset += length
    if offset != len(data):
        raise bad(f"{len(data) - offset} bytes follow its last path")
    return Index(model=model, paths=paths, embeddings=embeddings)


def main(arguments):
    if len(arguments) not in (1, 2) or (len(arguments) == 2 and arguments[1] != "--json"):
        print("usage: nrindex.py INDEX [--json]", file=sys.stderr)
        return 64
    try:
        index = load(arguments[0])
    except (OSError, NRIndexError) as error:
        print(error, file=sys.stderr)
        return 1
    if len(arguments) == 2:
        json.dump(
            {"model": index.model, "dimension": index.dimension, "paths": index.paths,
             "embeddings": index.embeddings.tolist()}, sys.stdout)
        print()
        return 0
    print(f"{len(index.paths)} embeddings of {index.dimension} values, model {index.model or '(not named)'}")
    for path in index.paths:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
