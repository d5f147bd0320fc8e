"""Recall@K of Python's embeddings, as metric-learning papers define it (Song et al., 2016):
a photo counts at K when one of the K photos nearest to it (cosine similarity, itself left out)
is of its class; photos whose class has no other photo are not counted.

    recall.py EMBEDDINGS.json CLASSES.json K...   JSON: recall@K for each K, each photo's nearest
                                                  photos in order with their cosines, and the
                                                  recall@1 of each class

EMBEDDINGS.json is what `reference.py embed` writes (by file name); CLASSES.json maps each photo's
path to its class (Tests/Fixtures/Embedding/evaluation-classes.json, which the evaluation test
makes its test bundle of). tools/embedding/record.sh writes
Tests/Fixtures/Embedding/recall.python.json with it.
"""
from __future__ import annotations

import json
import sys

import numpy as np


def main() -> None:
    with open(sys.argv[1]) as file:
        recorded = json.load(file)
    with open(sys.argv[2]) as file:
        class_of = {path.split("/")[-1]: label for path, label in json.load(file).items()}
    ks = [int(k) for k in sys.argv[3:]]
    names = sorted(class_of)
    vectors = np.array(
        [(np.array(recorded[n]["raw"], dtype=np.float64) - recorded[n]["zero_point"]) * recorded[n]["scale"] for n in names]
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = vectors @ vectors.T
    classes = [class_of[n] for n in names]
    counted = [i for i, c in enumerate(classes) if classes.count(c) > 1]
    nearest, right = {}, {k: 0 for k in ks}
    per_class: dict[str, list[int]] = {}
    for i in counted:
        order = [j for j in sorted(range(len(names)), key=lambda j: (-cosines[i, j], names[j])) if j != i]
        nearest[names[i]] = [[names[j], float(cosines[i, j])] for j in order]
        for k in ks:
            right[k] += any(classes[j] == classes[i] for j in order[:k])
        per_class.setdefault(classes[i], []).append(int(classes[order[0]] == classes[i]))
    record = {
        "recall": {f"recall@{k}": right[k] / len(counted) for k in ks},
        "per_class_recall@1": {c: sum(v) / len(v) for c, v in sorted(per_class.items())},
        "nearest": nearest,
    }
    json.dump(record, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
