#!/usr/bin/env python3
"""Pose and segmentation throughput: `netrunner bulk` against a Python multiprocessing.Pool doing
the same job with ai_edge_litert, at equal workers, whole processes, best of N alternating rounds.

  .venv-bench/bin/python Benchmarks/task_benchmark.py [--netrunner .build/release/netrunner]
      [--folder out/bench/photos] [--images 40] [--workers 2] [--rounds 3] [--tasks classify,pose,segment]

Each side reads the same photos (the first --images of Benchmarks/python/make_photo_folder.py's
folder, JPEG and BMP, 0.2-2 MP) and writes one JSON line per image:

- pose (MoveNet single-pose lightning): RGB, the whole image resized to 192x192 (Pillow
  BILINEAR; ours: the same, exact decoding), invoke, the 17 keypoints in the image's pixels.
- classify (MobileNetV2 uint8, the yardstick: the ratio the new tasks are held to, measured in
  the same run): the centre square resized to 224x224, invoke, the top 5 scores.
- segment (DeepLab v3 MobileNetV2, Pascal VOC): the whole image resized to 513x513, invoke, the
  class map resized to the image by nearest neighbour, each class's area, the mask as a base64
  grayscale PNG (what `bulk` writes).

Ours: `netrunner bulk DIR --model Models/bundles/<model>.tiobundle --threads W --output F
--restart`. Python: multiprocessing.Pool(W), one single-threaded interpreter per worker made in
the initializer, Pool.imap over the paths in order, the lines written by the parent. The ratio
printed is ours / Python in images per second (above 1: we are faster). Everything is written
under out/bench/tasks (git-ignored). Exits 1 if a process fails or writes the wrong line count.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import multiprocessing
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "out", "bench", "tasks")
MAKE_PHOTOS = os.path.join(HERE, "python", "make_photo_folder.py")
EXTS = (".jpg", ".jpeg", ".png", ".bmp")
TASKS = {
    "classify": ("mobilenet_v2_1.0_224_uint8", "classification"),
    "pose": ("movenet_single_pose_lightning_ptq", "pose"),
    "segment": ("deeplabv3_mnv2_pascal_quant", "segmentation"),
}
NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
    "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
    "right_ankle",
]

_state: dict = {}


def init_worker(model: str, task: str) -> None:
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    _state.update(it=it, inp=inp, out=out["index"], task=task, quant=out["quantization"])


def one_image(path: str) -> str:
    import numpy as np
    from PIL import Image
    it, inp, task = _state["it"], _state["inp"], _state["task"]
    try:
        image = Image.open(path).convert("RGB")
        _, height, width, _ = inp["shape"]
        shown = image
        if task == "classification":  # the centre square, as ours and pool_folder.py crop
            side = min(image.size)
            left, top = (image.width - side) // 2, (image.height - side) // 2
            shown = image.crop((left, top, left + side, top + side))
        resized = np.asarray(shown.resize((int(width), int(height)), Image.BILINEAR), dtype=np.uint8)
        it.set_tensor(inp["index"], resized[np.newaxis].astype(inp["dtype"]))
        it.invoke()
        output = it.get_tensor(_state["out"])
        line = {"image": path, "error": False, "image_width": image.width, "image_height": image.height}
        if task == "classification":
            scale, zero = _state["quant"]
            scores = (output[0].astype(np.float32) - zero) * scale if scale else output[0].astype(np.float32)
            top = np.argsort(-scores, kind="stable")[:5]
            line["inference_results"] = {"classification": [{"index": int(i), "score": float(scores[i])} for i in top]}
        elif task == "pose":
            keypoints = output.reshape(-1, 3)
            line["inference_results"] = {"pose": [
                {"name": NAMES[i], "x": float(x) * image.width, "y": float(y) * image.height, "score": float(s)}
                for i, (y, x, s) in enumerate(keypoints)]}
        else:
            classes = output[0]
            if classes.ndim == 3:
                classes = classes.argmax(axis=-1)
            classes = np.where((classes >= 0) & (classes < 255), classes, 255).astype(np.uint8)
            mask = Image.fromarray(classes, mode="L").resize(image.size, Image.NEAREST)
            counts = np.bincount(np.asarray(mask).ravel(), minlength=256)
            areas = sorted(((int(c), i) for i, c in enumerate(counts[:255]) if c), key=lambda a: (-a[0], a[1]))
            png = io.BytesIO()
            mask.save(png, format="PNG")
            line["inference_results"] = {"segmentation": {
                "areas": [{"index": i, "pixels": c} for c, i in areas],
                "mask": {"encoding": "png", "width": image.width, "height": image.height,
                         "data": base64.b64encode(png.getvalue()).decode()}}}
        return json.dumps(line)
    except Exception as error:  # noqa: BLE001 - one bad image is one error line
        return json.dumps({"image": path, "error": True, "error_description": str(error)})


def python_side(model: str, task: str, paths: list[str], workers: int, output: str) -> None:
    with multiprocessing.Pool(workers, initializer=init_worker, initargs=(model, task)) as pool, \
            open(output, "w") as out:
        for line in pool.imap(one_image, paths, chunksize=1):
            out.write(line + "\n")


def timed(cmd: list[str], log: str) -> float:
    with open(log, "wb") as err:
        start = time.perf_counter()
        status = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL).returncode
        wall = time.perf_counter() - start
    if status != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            raise SystemExit(f"{' '.join(cmd)}: exit status {status}\n{f.read()[-2000:]}")
    return wall


def lines_of(path: str) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip() and b'"error":false' in line.replace(b" ", b""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    ap.add_argument("--folder", default=os.path.join(ROOT, "out", "bench", "photos"))
    ap.add_argument("--images", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", default="classify,pose,segment")
    ap.add_argument("--python-worker", nargs=4, metavar=("MODEL", "TASK", "WORKERS", "OUTPUT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.python_worker:  # the Python side as a whole process of its own, paths on stdin
        model, task, workers, output = args.python_worker
        python_side(model, task, sys.stdin.read().split("\n")[:-1], int(workers), output)
        return
    if not 1 <= args.images <= 10_000 or not 1 <= args.workers <= 64 or not 1 <= args.rounds <= 20:
        ap.error("--images 1...10000, --workers 1...64, --rounds 1...20")
    tasks = [t for t in args.tasks.split(",") if t]
    if any(t not in TASKS for t in tasks):
        ap.error(f"--tasks: some of {', '.join(TASKS)}")
    netrunner = os.path.abspath(args.netrunner)
    if not os.access(netrunner, os.X_OK):
        raise SystemExit(f"no netrunner binary at {netrunner} (swift build -c release --product netrunner)")
    if not os.path.isdir(args.folder):
        subprocess.run([sys.executable, MAKE_PHOTOS, "--out", args.folder], check=True, stdout=subprocess.DEVNULL)
    photos = sorted(os.path.join(r, f) for r, _, fs in os.walk(args.folder) for f in fs if f.lower().endswith(EXTS))
    photos = photos[:args.images]
    folder = os.path.join(OUT, f"photos-{len(photos)}")
    os.makedirs(folder, exist_ok=True)
    for photo in photos:  # a folder of links to exactly these photos, for bulk
        link = os.path.join(folder, os.path.basename(photo))
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(photo), link)
    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    print(f"{len(paths)} photos, {args.workers} workers each side, best of {args.rounds} rounds, "
          f"{os.cpu_count()} CPUs", file=sys.stderr)
    figures = {}
    for task in tasks:
        name, kind = TASKS[task]
        bundle = os.path.join(ROOT, "Models", "bundles", name + ".tiobundle")
        model = os.path.join(ROOT, "Models", name + ".tflite")
        best = {"ours": 0.0, "python": 0.0}
        for round_ in range(args.rounds):
            for side in (["ours", "python"] if round_ % 2 == 0 else ["python", "ours"]):
                output = os.path.join(OUT, f"{task}-{side}.jsonl")
                log = os.path.join(OUT, f"{task}-{side}.log")
                if side == "ours":
                    cmd = [netrunner, "bulk", folder, "--model", bundle, "--threads", str(args.workers),
                           "--output", output, "--restart", "--no-progress"]
                    wall = timed(cmd, log)
                else:
                    cmd = [sys.executable, os.path.abspath(__file__), "--python-worker", model, kind,
                           str(args.workers), output]
                    with open(log, "wb") as err:
                        start = time.perf_counter()
                        done = subprocess.run(cmd, input="".join(p + "\n" for p in paths).encode(),
                                              stdout=subprocess.DEVNULL, stderr=err)
                        wall = time.perf_counter() - start
                    if done.returncode != 0:
                        raise SystemExit(f"the Python side of {task} failed: see {log}")
                answered = lines_of(output)
                if answered != len(paths):
                    raise SystemExit(f"{task} {side}: {answered} answers for {len(paths)} images in {output}")
                rate = len(paths) / wall
                best[side] = max(best[side], rate)
                print(f"  {task} {side} round {round_ + 1}: {rate:.2f} images/s", file=sys.stderr)
        ratio = best["ours"] / best["python"]
        figures[task] = {"ours_images_per_s": round(best["ours"], 2),
                         "python_images_per_s": round(best["python"], 2), "ratio": round(ratio, 2)}
        print(f"{task}: netrunner {best['ours']:.2f} images/s, Python Pool {best['python']:.2f} images/s "
              f"at {args.workers} workers: {ratio:.2f}x")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
