#!/usr/bin/env python3
"""Side-by-side benchmark of `netrunner bulk` against the Python reference
(Benchmarks/python/bulk_folder.py): whole processes, wall clock and peak RSS.

Run with the benchmark venv (Benchmarks/setup.sh makes it):

  .venv-bench/bin/python Benchmarks/bulk_benchmark.py [--netrunner .build/release/netrunner]
      [--folder out/bench/photos] [--rounds 3] [--many-max 20000] [--skip-many]

1. Throughput: for --threads 1 and 2, alternating rounds of
     netrunner bulk DIR --threads N --output out/bench/bulk-ours-tN.jsonl --restart
     python bulk_folder.py DIR --threads N --output out/bench/bulk-python-tN.jsonl
   each timed as a whole process (wall clock around the child, peak RSS = the child's ru_maxrss
   from os.wait4); the best round per side is quoted, with the ratio ours / Python (target >= 2x).
2. Two-core speed-up of ours: `taskset -c 0 netrunner bulk --threads 1` (one core) against
   unpinned `--threads 2` (best of the rounds each).
3. Memory flatness: folders of symlinks to the photos (nested subfolders of 1,000 files) with
   2,000 and 20,000 files (--many-max 100000 adds 100,000) under out/bench/many; ours
   at --threads 2 on each, peak RSS and images/s. Flat memory: peak RSS barely grows.
4. Agreement: top-1 label per file, ours against Python, for each thread count.

The photo folder is made with python/make_photo_folder.py if it is missing. Exits 2 at once if
the binary has no `bulk` subcommand, 1 if any process fails (non-zero exit, or an output that
does not hold one line per image), else 0.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BULK_PY = os.path.join(HERE, "python", "bulk_folder.py")
MAKE_PHOTOS = os.path.join(HERE, "python", "make_photo_folder.py")
# Everything the benchmark writes goes here (out/ is git-ignored).
OUT = os.path.join(ROOT, "out", "bench")
EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm")
FANOUT = 1000  # files per subfolder in the symlink farms


class Failed(Exception):
    pass


# --- reading our JSON lines: the one place that knows their keys ------------------------------

def top1_of(record: dict) -> tuple[str | None, str | None]:
    """(path, top-1 label) from one JSON line of either side; label None for an error line.

    netrunner bulk: {"image", "error": false, "inference_results": {"classification":
    [{"label", "display_name", "index", "score"}, ...]}, "decode_latency", ...} or {"image",
    "error": true, "error_description"}. bulk_folder.py: {"file", "labels": [{"label", "index",
    "score"}], ...} or {"file", "error": MESSAGE}. Also accepted: "path" for the file and
    "categories" (classify --json), "classification" or "results" for the list.
    """
    path = next((record[k] for k in ("file", "image", "path") if isinstance(record.get(k), str)),
                None)
    if record.get("error"):
        return path, None
    found = None
    nested = record.get("inference_results")
    if isinstance(nested, dict):
        found = nested.get("classification")
    for key in ("categories", "labels", "classification", "results"):
        if found is None and isinstance(record.get(key), list):
            found = record[key]
    if not found:
        return path, None
    best = max(found, key=lambda c: c.get("score", 0.0))  # first of equal scores (best-first list)
    label = best.get("label") or best.get("displayName") or best.get("name")
    return path, (label.split(",")[0].strip() if isinstance(label, str) else None)


def read_top1(jsonl: str, folder: str) -> dict[str, str | None]:
    """{path relative to folder: top-1 label or None} from a JSON Lines file."""
    out = {}
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            path, label = top1_of(json.loads(line))
            if path is None:
                continue
            full = path if os.path.isabs(path) else os.path.join(folder, path)
            if not os.path.isabs(path) and not os.path.exists(full) and os.path.exists(path):
                full = os.path.abspath(path)  # relative to our working directory
            out[os.path.relpath(full, folder)] = label
    return out


def count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


# --- processes ------------------------------------------------------------------------------

def run(cmd: list[str], label: str, log_dir: str) -> dict:
    """Runs cmd to completion: wall seconds, peak RSS (MB), exit code, stdout text."""
    safe = label.replace(" ", "_").replace("/", "_")
    out_path = os.path.join(log_dir, safe + ".out")
    err_path = os.path.join(log_dir, safe + ".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting
    with open(out_path, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    if p.returncode != 0:
        with open(err_path, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-2000:]
        raise Failed(f"{label}: exit status {p.returncode}\n  command: {' '.join(cmd)}\n"
                     f"  stderr (end):\n{tail}")
    return {"wall_s": wall, "rss_mb": usage.ru_maxrss / 1024.0, "stdout": stdout}


def list_images(folder: str) -> list[str]:
    found = []
    for root, _, files in os.walk(folder):
        found.extend(os.path.join(root, f) for f in files if f.lower().endswith(EXTS))
    return found


def check_bulk(netrunner: str) -> None:
    if not (os.path.isfile(netrunner) and os.access(netrunner, os.X_OK)):
        raise SystemExit(f"error: no netrunner binary at {netrunner} (build the release binary: "
                         "swift build -c release)")
    r = subprocess.run([netrunner, "bulk", "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "USAGE: netrunner bulk" not in r.stdout + r.stderr:
        print(f"error: {netrunner} has no `bulk` subcommand yet (`netrunner bulk --help` printed "
              "no 'USAGE: netrunner bulk'); rebuild the release binary with the bulk command "
              "and run this again.", file=sys.stderr)
        sys.exit(2)


def ours_cmd(netrunner, folder, threads, output, pin=None, fast=False):
    cmd = [netrunner, "bulk", folder, "--threads", str(threads), "--output", output, "--restart"]
    if fast:
        cmd.append("--fast-decoding")
    return (["taskset", "-c", pin] + cmd) if pin is not None else cmd


def python_cmd(folder, threads, output, mode="tuned"):
    return [sys.executable, BULK_PY, folder, "--threads", str(threads), "--output", output,
            "--mode", mode]


def checked_ours(r: dict, output: str, images: int, label: str) -> dict:
    lines = count_lines(output)
    if lines != images:
        raise Failed(f"{label}: {output} holds {lines} lines for {images} images")
    r["images_per_s"] = images / r["wall_s"]
    return r


def checked_python(r: dict, output: str, images: int, label: str) -> dict:
    summary = json.loads(r["stdout"].strip().splitlines()[-1])
    if summary.get("images") != images or count_lines(output) != images:
        raise Failed(f"{label}: Python saw {summary.get('images')} images, "
                     f"{count_lines(output)} lines in {output}; expected {images}")
    r["images_per_s"] = images / r["wall_s"]
    r["summary"] = summary
    return r


# --- symlink farms --------------------------------------------------------------------------

def build_farm(root: str, size: int, photos: list[str]) -> str:
    """root/n<size>/d<k>/img_<i>.<ext>: size symlinks to the photos, FANOUT per subfolder."""
    folder = os.path.join(root, f"n{size}")
    if os.path.isdir(folder):
        if len(list_images(folder)) == size:
            return folder
        for dirpath, dirs, files in os.walk(folder):  # only ever delete what this made
            if any(not os.path.islink(os.path.join(dirpath, f)) for f in files):
                raise Failed(f"{folder} holds files that are not symlinks; remove it by hand")
        shutil.rmtree(folder)
    for i in range(size):
        sub = os.path.join(folder, f"d{i // FANOUT:03d}")
        if i % FANOUT == 0:
            os.makedirs(sub)
        src = photos[i % len(photos)]
        os.symlink(src, os.path.join(sub, f"img_{i:06d}{os.path.splitext(src)[1]}"))
    return folder


# --- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    ap.add_argument("--folder", default=os.path.join(OUT, "photos"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--many-root", default=os.path.join(OUT, "many"))
    ap.add_argument("--many-max", type=int, default=20000,
                    help="largest symlink folder (default 20000; 100000 adds that size)")
    ap.add_argument("--skip-many", action="store_true", help="leave out the memory part")
    ap.add_argument("--json", metavar="FILE", help="also write all figures as JSON to FILE")
    args = ap.parse_args()
    if args.rounds < 1 or args.many_max < 2000:
        ap.error("--rounds must be >= 1 and --many-max >= 2000")
    netrunner = os.path.abspath(args.netrunner)
    folder = os.path.abspath(args.folder)
    check_bulk(netrunner)

    if not os.path.isdir(folder):
        print(f"making {folder} ...", file=sys.stderr)
        subprocess.run([sys.executable, MAKE_PHOTOS, "--out", folder], check=True,
                       stdout=subprocess.DEVNULL)
    photos = sorted(list_images(folder))
    images = len(photos)
    if not images:
        raise SystemExit(f"no images in {folder}")
    log_dir = os.path.join(OUT, "logs")
    os.makedirs(log_dir, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    results = {"netrunner": netrunner, "folder": folder, "images": images,
               "rounds": args.rounds, "cpus": os.cpu_count()}
    try:
        # 1. throughput, alternating rounds (the side that goes first alternates too)
        rounds = {}
        # "python" is the tuned script (draft, a decode thread or one interpreter per thread);
        # "plain" is the straightforward one (open, convert, crop, resize, invoke, inline).
        # "ours" is the default (every JPEG pixel decoded, equal to Python); "fast" is
        # --fast-decoding (large JPEGs scaled while decoding).
        sides_all = ["ours", "fast", "python", "plain"]
        for threads in (1, 2):
            ours_out = f"{OUT}/bulk-ours-t{threads}.jsonl"
            for r in range(args.rounds):
                sides = sides_all[r % 4:] + sides_all[:r % 4]
                for side in sides:
                    label = f"{side} t{threads} round{r + 1}"
                    print(f"  {label} ...", file=sys.stderr)
                    if side in ("ours", "fast"):
                        out = ours_out if side == "ours" else f"{OUT}/bulk-fast-t{threads}.jsonl"
                        res = checked_ours(run(ours_cmd(netrunner, folder, threads, out, fast=side == "fast"),
                                               label, log_dir), out, images, label)
                    else:
                        out = f"{OUT}/bulk-{side}-t{threads}.jsonl"
                        mode = "tuned" if side == "python" else "plain"
                        res = checked_python(run(python_cmd(folder, threads, out, mode),
                                                 label, log_dir), out, images, label)
                    rounds.setdefault((side, threads), []).append(res)
        best = {k: max(v, key=lambda x: x["images_per_s"]) for k, v in rounds.items()}

        print(f"\nThroughput: {images} photos in {folder}, whole processes, best of "
              f"{args.rounds} alternating rounds ({os.cpu_count()} CPUs)\n")
        print(f"{'side':<14} {'threads':>7} {'images/s':>9} {'peak RSS MB':>12}   all rounds images/s")
        names = {"ours": "netrunner", "fast": "netrunner fast", "python": "python tuned",
                 "plain": "python plain"}
        for threads in (1, 2):
            for side in sides_all:
                b = best[(side, threads)]
                every = " ".join(f"{x['images_per_s']:.1f}" for x in rounds[(side, threads)])
                print(f"{names[side]:<14} {threads:>7} {b['images_per_s']:>9.1f} {b['rss_mb']:>12.1f}"
                      f"   {every}")
        print()
        results["throughput"] = []
        for threads in (1, 2):
            for mine in ("ours", "fast"):
                for other in ("python", "plain"):
                    o, p = best[(mine, threads)], best[(other, threads)]
                    ratio = o["images_per_s"] / p["images_per_s"]
                    verdict = "meets" if ratio >= 2 else "BELOW"
                    print(f"{names[mine]}/{names[other]} at --threads {threads}: {ratio:.2f}x "
                          f"({verdict} the 2x target)")
                    results["throughput"].append({
                        "threads": threads, "ours": names[mine], "against": names[other],
                        "ratio": round(ratio, 3),
                        "python_layout": p["summary"].get("layout"),
                        "python_workers": p["summary"].get("workers"),
                        **{f"{s}_{k}": round(best[(s, threads)][k], 2) for s in (mine, other)
                           for k in ("images_per_s", "rss_mb")}})

        # 4. agreement (the outputs of the last rounds): the default decodes every JPEG pixel,
        # so its input equals the plain script's (Pillow-exact bilinear resize); --fast-decoding
        # scales large JPEGs in the DCT domain, as the tuned script's draft() does.
        results["agreement"] = []
        for threads, ours_path, other in [(2, f"{OUT}/bulk-ours-t2.jsonl", "plain"),
                                          (1, f"{OUT}/bulk-ours-t1.jsonl", "plain"),
                                          (2, f"{OUT}/bulk-fast-t2.jsonl", "plain"),
                                          (2, f"{OUT}/bulk-fast-t2.jsonl", "python")]:
            ours = read_top1(ours_path, folder)
            py = read_top1(f"{OUT}/bulk-{other}-t{threads}.jsonl", folder)
            common = sorted(set(ours) & set(py))
            same = [k for k in common if ours[k] is not None and ours[k] == py[k]]
            differ = [k for k in common if k not in same]
            what = f"{'ours --fast-decoding' if 'fast' in ours_path else 'ours'} vs {names[other]} " \
                f"at --threads {threads}"
            print(f"top-1 agreement, {what}: {len(same)}/{images} files"
                  f" ({len(common)} matched by path)"
                  + ("; differ: " + ", ".join(f"{k} ({ours[k]} vs {py[k]})" for k in differ[:4])
                     + (" ..." if len(differ) > 4 else "") if differ else ""))
            results["agreement"].append({"threads": threads, "agree": len(same),
                                         "matched": len(common), "differ": differ})

        # 2. two-core speed-up of ours
        pinned, free = [], []
        for r in range(args.rounds):
            for kind in (("pinned", "free") if r % 2 == 0 else ("free", "pinned")):
                label = f"ours {kind} round{r + 1}"
                print(f"  {label} ...", file=sys.stderr)
                out = f"{OUT}/bulk-ours-speedup.jsonl"
                if kind == "pinned":
                    cmd = ours_cmd(netrunner, folder, 1, out, pin="0")
                else:
                    cmd = ours_cmd(netrunner, folder, 2, out)
                res = checked_ours(run(cmd, label, log_dir), out, images, label)
                (pinned if kind == "pinned" else free).append(res["images_per_s"])
        speedup = max(free) / max(pinned)
        print(f"\nTwo-core speed-up of ours: taskset -c 0 --threads 1 {max(pinned):.1f} images/s,"
              f" unpinned --threads 2 {max(free):.1f} images/s: {speedup:.2f}x")
        results["speedup"] = {"one_core_images_per_s": round(max(pinned), 2),
                              "two_threads_images_per_s": round(max(free), 2),
                              "ratio": round(speedup, 3)}

        # 3. memory flatness
        if not args.skip_many:
            sizes = [s for s in (2000, 20000, 100000) if s < args.many_max] + [args.many_max]
            print(f"\nMemory: ours --threads 2 on folders of symlinks to the {images} photos "
                  f"({FANOUT} per subfolder, {args.many_root})\n")
            print(f"{'files':>8} {'images/s':>9} {'peak RSS MB':>12}")
            b = best[("ours", 2)]
            print(f"{images:>8} {b['images_per_s']:>9.1f} {b['rss_mb']:>12.1f}   (the photo folder)")
            results["memory"] = []
            for size in sizes:
                print(f"  building/checking {size} symlinks ...", file=sys.stderr)
                many = build_farm(args.many_root, size, photos)
                out = f"{OUT}/many-out-{size}.jsonl"
                label = f"ours many{size}"
                print(f"  {label} ...", file=sys.stderr)
                res = checked_ours(run(ours_cmd(netrunner, many, 2, out), label, log_dir),
                                   out, size, label)
                print(f"{size:>8} {res['images_per_s']:>9.1f} {res['rss_mb']:>12.1f}")
                results["memory"].append({"files": size,
                                          "images_per_s": round(res["images_per_s"], 2),
                                          "rss_mb": round(res["rss_mb"], 1)})
            m = results["memory"]
            print(f"peak RSS {m[-1]['files']:,} vs {m[0]['files']:,} files: "
                  f"{m[-1]['rss_mb'] / m[0]['rss_mb']:.2f}x "
                  f"({m[-1]['rss_mb'] - m[0]['rss_mb']:+.1f} MB)")
    except Failed as e:
        print(f"\nFAILED: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
    print(f"\n(logs of every process: {log_dir})")


if __name__ == "__main__":
    main()
