#!/usr/bin/env python3
"""Makes TestBundles/pose-sample.testbundle and segmentation-sample.testbundle from Google
Coral's test_data (github: google-coral/test_data), read from a git mirror of it:

    make_test_bundles.py GIT_DIR    (e.g. /work/.mirror/google-coral+test_data/repo)

Pose: squat.bmp as a JPEG (quality 92), labelled with Coral's MoveNet reference keypoints
(movenet_single_pose_lightning_ptq_reference.csv: x and y in [0, 1] of the image, times its
width and height), and the same photo mirrored left to right, its keypoints mirrored and their
left and right names swapped, and turned a quarter anticlockwise (MoveNet finds a person
lying on its side less well: some keypoints are missed).

Segmentation: bird_segmentation.bmp with Coral's bird_segmentation_mask.bmp (Pascal VOC class
indices) as is, and dog_segmentation_256.bmp with Coral's dog_segmentation_mask_256.bmp, a
three-class pet mask (0 the dog, 1 the background, 2 its outline) mapped to Pascal VOC: dog 12,
background 0, the outline 255 (Pascal's "not scored"). Masks are grayscale PNGs of class indices.
"""
import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
    "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
    "right_ankle",
]


def show(git_dir, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path], check=True,
                          capture_output=True).stdout


def image(git_dir, path):
    return Image.open(io.BytesIO(show(git_dir, path)))


def mirrored_name(name):
    if name.startswith("left_"):
        return "right_" + name[5:]
    if name.startswith("right_"):
        return "left_" + name[6:]
    return name


def write_test(folder, test):
    with open(os.path.join(folder, "test.json"), "w") as out:
        out.write("{\n")
        head = {key: test[key] for key in ("name", "id", "version", "models", "options")}
        for key, value in head.items():
            out.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        out.write('  "images": [\n')
        out.write(",\n".join("    " + json.dumps(item) for item in test["images"]) + "\n  ],\n")
        out.write('  "labels": [\n')
        out.write(",\n".join("    " + json.dumps(item) for item in test["labels"]) + "\n  ]\n}\n")


def pose(git_dir, root):
    folder = os.path.join(root, "pose-sample.testbundle")
    os.makedirs(os.path.join(folder, "images"), exist_ok=True)
    photo = image(git_dir, "squat.bmp").convert("RGB")
    width, height = photo.size
    rows = list(csv.DictReader(io.StringIO(show(git_dir, "movenet_single_pose_lightning_ptq_reference.csv").decode())))
    points = {NAMES[int(row["keypoint_id"])]: (float(row["keypoint_x"]) * width, float(row["keypoint_y"]) * height)
              for row in rows}
    photo.save(os.path.join(folder, "images/squat.jpg"), quality=92)
    photo.transpose(Image.FLIP_LEFT_RIGHT).save(os.path.join(folder, "images/squat_mirrored.jpg"), quality=92)
    # A quarter turn anticlockwise: (x, y) goes to (y, width - x); MoveNet does worse on it.
    photo.transpose(Image.ROTATE_90).save(os.path.join(folder, "images/squat_turned.jpg"), quality=92)

    def label(path, keypoints):
        return {"path": path, "inference_results": {"pose": {"keypoints": [
            {"name": name, "x": round(x, 2), "y": round(y, 2)} for name, (x, y) in keypoints]}}}

    mirrored = {mirrored_name(name): (width - x, y) for name, (x, y) in points.items()}
    turned = {name: (y, width - x) for name, (x, y) in points.items()}
    write_test(folder, {
        "name": "MoveNet on Coral's squat photo", "id": "pose-sample", "version": "1",
        "models": ["movenet-single-pose-lightning-ptq"], "options": {"iterations": 1, "metric": "PCK@0.2"},
        "images": [{"type": "file", "path": "images/squat.jpg"}, {"type": "file", "path": "images/squat_mirrored.jpg"},
                   {"type": "file", "path": "images/squat_turned.jpg"}],
        "labels": [label("images/squat.jpg", [(name, points[name]) for name in NAMES]),
                   label("images/squat_mirrored.jpg", [(name, mirrored[name]) for name in NAMES]),
                   label("images/squat_turned.jpg", [(name, turned[name]) for name in NAMES])],
    })


def segmentation(git_dir, root):
    folder = os.path.join(root, "segmentation-sample.testbundle")
    os.makedirs(os.path.join(folder, "images"), exist_ok=True)
    os.makedirs(os.path.join(folder, "masks"), exist_ok=True)
    image(git_dir, "bird_segmentation.bmp").convert("RGB").save(os.path.join(folder, "images/bird.jpg"), quality=92)
    image(git_dir, "dog_segmentation_256.bmp").convert("RGB").save(os.path.join(folder, "images/dog.jpg"), quality=92)
    bird = np.asarray(image(git_dir, "bird_segmentation_mask.bmp").convert("L"))
    Image.fromarray(bird, mode="L").save(os.path.join(folder, "masks/bird.png"), optimize=True)
    pet = np.asarray(image(git_dir, "dog_segmentation_mask_256.bmp").convert("L"))
    dog = np.choose(np.clip(pet, 0, 2), [12, 0, 255]).astype(np.uint8)
    Image.fromarray(dog, mode="L").save(os.path.join(folder, "masks/dog.png"), optimize=True)
    write_test(folder, {
        "name": "DeepLab v3 on Coral's segmentation photos", "id": "segmentation-sample", "version": "1",
        "models": ["deeplabv3-mnv2-pascal-quant", "deeplabv3-mnv2-dm05-pascal-quant"],
        "options": {"iterations": 1, "metric": "mean_iou"},
        "images": [{"type": "file", "path": "images/bird.jpg"}, {"type": "file", "path": "images/dog.jpg"}],
        "labels": [
            {"path": "images/bird.jpg", "inference_results": {"segmentation": {"mask": "masks/bird.png"}}},
            {"path": "images/dog.jpg", "inference_results": {"segmentation": {"mask": "masks/dog.png"}}},
        ],
    })


if __name__ == "__main__":
    git_dir = sys.argv[1]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../TestBundles")
    pose(git_dir, root)
    segmentation(git_dir, root)
