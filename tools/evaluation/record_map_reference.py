"""Records a COCO-style mAP case and pycocotools' answer for the Swift tests.

Run with `tools/evaluation/record.sh`; it writes Tests/Fixtures/Evaluation/coco_map_case.json:
the ground truth and detections of a synthetic scene set (fixed seed) and, from pycocotools'
COCOeval (bbox, area "all", maxDets 100), mAP at IoU 0.5, mAP at 0.5:0.95, and per-class AP at
both.
"""

import contextlib
import io
import json
import random
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

CLASSES = ["cat", "dog", "face"]


def jitter(rng, box, amount):
    x, y, w, h = box
    return [
        round(x + rng.uniform(-amount, amount) * w, 2),
        round(y + rng.uniform(-amount, amount) * h, 2),
        round(max(1.0, w * (1 + rng.uniform(-amount, amount))), 2),
        round(max(1.0, h * (1 + rng.uniform(-amount, amount))), 2),
    ]


def main(path):
    rng = random.Random(20261121)
    images, truth, detections = [], [], []
    for image_id in range(1, 13):
        images.append({"id": image_id, "width": 640, "height": 480})
        for _ in range(rng.randint(0, 4)):
            w, h = rng.uniform(20, 200), rng.uniform(20, 200)
            box = [round(rng.uniform(0, 640 - w), 2), round(rng.uniform(0, 480 - h), 2), round(w, 2), round(h, 2)]
            label = rng.choice(CLASSES)
            truth.append({"image": image_id, "label": label, "box": box})
            # Most objects are found, with boxes of varying quality; some twice; some missed.
            if rng.random() < 0.85:
                detected = label if rng.random() < 0.85 else rng.choice(CLASSES)
                detections.append({"image": image_id, "label": detected, "box": jitter(rng, box, rng.choice([0.02, 0.08, 0.2])), "score": round(rng.uniform(0.3, 1.0), 4)})
            if rng.random() < 0.25:
                detections.append({"image": image_id, "label": label, "box": jitter(rng, box, 0.3), "score": round(rng.uniform(0.05, 0.6), 4)})
        for _ in range(rng.randint(0, 2)):  # false alarms
            w, h = rng.uniform(20, 150), rng.uniform(20, 150)
            box = [round(rng.uniform(0, 640 - w), 2), round(rng.uniform(0, 480 - h), 2), round(w, 2), round(h, 2)]
            detections.append({"image": image_id, "label": rng.choice(CLASSES), "box": box, "score": round(rng.uniform(0.05, 0.9), 4)})

    category_ids = {name: i + 1 for i, name in enumerate(CLASSES)}
    dataset = {
        "info": {}, "licenses": [],
        "images": images,
        "categories": [{"id": i, "name": n} for n, i in category_ids.items()],
        "annotations": [
            {"id": k + 1, "image_id": t["image"], "category_id": category_ids[t["label"]], "bbox": t["box"],
             "area": t["box"][2] * t["box"][3], "iscrowd": 0}
            for k, t in enumerate(truth)
        ],
    }
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = dataset
        coco.createIndex()
        results = coco.loadRes([
            {"image_id": d["image"], "category_id": category_ids[d["label"]], "bbox": d["box"], "score": d["score"]}
            for d in detections
        ])
        evaluation = COCOeval(coco, results, "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    precision = evaluation.eval["precision"]  # [T, R, K, A, M]

    def ap(class_index, threshold_index=None):
        p = precision[:, :, class_index, 0, 2] if threshold_index is None else precision[threshold_index, :, class_index, 0, 2]
        p = p[p > -1]
        return float(np.mean(p)) if p.size else None

    reference = {
        "tool": "pycocotools 2.0.10 COCOeval bbox, areaRng all, maxDets 100",
        "mAP50": float(evaluation.stats[1]),
        "mAP50_95": float(evaluation.stats[0]),
        "perClassAP50": {name: ap(i, 0) for i, name in enumerate(CLASSES)},
        "perClassAP50_95": {name: ap(i) for i, name in enumerate(CLASSES)},
    }
    with open(path, "w") as f:
        json.dump({"truth": truth, "detections": detections, "reference": reference}, f, indent=1)
        f.write("\n")
    print(json.dumps(reference, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
