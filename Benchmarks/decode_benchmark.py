#!/usr/bin/env python3
"""Equal cores: `netrunner bulk` against a Python multiprocessing.Pool, in one run.

Run with the benchmark venv (Benchmarks/setup.sh makes it; `make bench-decode` does all):

  .venv-bench/bin/python Benchmarks/decode_benchmark.py [--netrunner .build/release/netrunner]
      [--workers 1,2] [--rounds 2] [--count 96] [--fidelity-count 1000] [--json FILE]

On four sets of JPEG photos made from the committed photos (python/make_photo_folder.py; nothing
is committed): 0.2-2 MP, 1-12 MP, phone-like 1-12 MP (--phone: a quarter progressive, chroma
4:2:0/4:2:2/4:4:4, a quarter stored turned under an EXIF orientation) and progressive 1-12 MP
(4:2:0, libjpeg's standard script, as Pillow saves them), --count each. For each number of workers N, in alternating
order, best of --rounds, each a whole process timed by its wall clock:

  exact     netrunner bulk DIR --threads N      (the default: the input equals a full decode's)
  fast      netrunner bulk DIR --threads N --fast-decoding
  plain     python pool_folder.py --mode plain --workers N   (Pillow full decode, crop, resize)
  draft     python pool_folder.py --mode draft --workers N   (Pillow draft(): DCT scaling)
  limit     python pool_folder.py --mode invoke --workers N  (invoke only: the runtime's limit)

With --iphone-count N (24 by default), N iPhone-like HEICs (12 MP in 512x512 HEVC tiles with a
320-pixel thumbnail, a quarter portrait stored landscape under an irot; python/heif_iphone.py) and JPEG copies of the same pixels:
exact and fast (which decodes the thumbnail) against pillow-heif's full decode (plain) and its
thumbnail (draft mode) in a Pool, with the fast path's top-1 against the exact path's beside
draft()'s against plain Pillow's on the JPEG copies (issue 45's bar).

Then, for each of --formats (WebP, HEIC, AVIF, GIF, TIFF), --format-count of the 0.2-2 MP photos
re-encoded in that format: exact against plain (Pillow; pillow-heif for HEIC) at each N, with the
top-1 agreement (equal for WebP, GIF and TIFF, whose pixels are Pillow's; HEIC and AVIF are
decoded by another libheif/libavif: see docs/library.md).

With --ways-count N (24 by default), the same N photos of 3-12 MP saved five ways (baseline,
EXIF-rotated, progressive, 4:4:4, 4:2:2): exact against plain at each N, with both sides' decode
time per photo beside libjpeg-turbo's own full decode (tjbench warm, djpeg cold; Debian's
libjpeg-turbo-progs).

Prints images/s and the ratios exact/plain, fast/plain, fast/draft, exact/limit, with the peak
RSS of our process. Fidelity on each set: top-1 of exact against plain (the same input bytes, so
the same answers), and of fast against exact (top-1 agreement, mean |difference| of the exact
top-1's score), beside the model's noise floor on the same photos (python/noise_floor.py: +-1
level of random noise on the exact input). With --fidelity-count > 0, a third set of that many varied JPEGs (0.1-24 MP,
quality 60-98, 4:4:4/4:2:2/4:2:0, one in three progressive) gives the fast path's fidelity figures
on many photos (our two paths only; the set is made once and kept under out/bench/).

The issue's targets (issue 23): exact >= 1.5x plain on 0.2-2 MP and >= 2.5x on 1-12 MP at 2
workers; fast >= 3x plain on 1-12 MP and >= 1.5x draft; fast's top-1 equal to exact's on >= 99%
of >= 1,000 photos with mean |score difference| <= 0.01. Exit status 1 if a run fails.
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
POOL = os.path.join(HERE, "python", "pool_folder.py")
NOISE = os.path.join(HERE, "python", "noise_floor.py")
MAKE_PHOTOS = os.path.join(HERE, "python", "make_photo_folder.py")
OUT = os.path.join(ROOT, "out", "bench")

SETS = [  # name, min MP, max MP, seed, make_photo_folder.py's options
    ("0.2-2 MP", 0.2, 2.0, 11, []),
    ("1-12 MP", 1.0, 12.0, 12, []),
    ("phone-like 1-12 MP", 1.0, 12.0, 14, ["--phone"]),
    ("progressive 1-12 MP", 1.0, 12.0, 15, ["--as", "progressive"]),
]
# The same photos saved each way (make_photo_folder.py --as STYLE), 3-12 MP.
WAYS = ["baseline", "rotated", "progressive", "444", "422"]


def make_set(folder: str, count: int, lo: float, hi: float, seed: int, options: list[str] | None = None) -> None:
    if os.path.isdir(folder) and len(os.listdir(folder)) == count:
        return
    print(f"making {folder} ({count} photos, {lo}-{hi} MP) ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, MAKE_PHOTOS, "--out", folder, "--count", str(count), "--seed", str(seed),
           "--min-mp", str(lo), "--max-mp", str(hi), "--bmp-fraction", "0"]
    subprocess.run(cmd + (options or []), check=True, stdout=subprocess.DEVNULL)


def mean_of(jsonl: str, key: str) -> float:
    """The mean of one per-photo timing in a JSON-lines output (decode_latency, decode_ms)."""
    values = [json.loads(line).get(key) for line in open(jsonl, encoding="utf-8")]
    values = [v for v in values if isinstance(v, (int, float))]
    return sum(values) / max(1, len(values))


def libjpeg_own(folder: str) -> dict:
    """libjpeg-turbo's own full decode of each photo (Debian's libjpeg-turbo-progs): tjbench warm
    (the same file decoded again and again, accurate DCT, no output written) and djpeg cold (one
    process per file, output to /dev/null), in ms per photo; {} without the tools."""
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    found: dict = {}
    if shutil.which("tjbench"):
        total = 0.0
        for path in files:
            out = subprocess.run(["tjbench", path, "-accuratedct", "-nowrite", "-benchtime", "0.3", "-warmup",
                                  "0.1"], capture_output=True, text=True, check=True).stdout
            rates = [float(line.split()[-2]) for line in out.splitlines() if "Frame rate" in line]
            total += 1000.0 / rates[-1]
        found["tjbench_warm_ms"] = round(total / len(files), 2)
    if shutil.which("djpeg"):
        start = time.perf_counter()
        for path in files:
            subprocess.run(["djpeg", "-dct", "int", "-outfile", os.devnull, path], check=True)
        found["djpeg_cold_ms"] = round(1000 * (time.perf_counter() - start) / len(files), 2)
    return found


def ways(netrunner: str, count: int, workers: list[int], rounds: int) -> list[dict]:
    """The same `count` photos of 3-12 MP saved each way of WAYS: our exact path against the Pillow
    Pool at each N, the per-photo decode times of both sides and libjpeg-turbo's own."""
    rows = []
    for style in WAYS:
        folder = os.path.join(OUT, f"decode-ways-{style}-{count}")
        make_set(folder, count, 3.0, 12.0, 36, ["--as", style])
        own = libjpeg_own(folder)
        for n in workers:
            def out(side: str) -> str:
                return os.path.join(OUT, "decode", f"ways-{style}-{side}-w{n}.jsonl")
            sides = {
                "exact": [netrunner, "bulk", folder, "--threads", str(n), "--output", out("exact"), "--restart"],
                "plain": [sys.executable, POOL, folder, "--workers", str(n), "--mode", "plain",
                          "--output", out("plain")],
            }
            best = {side: got["wall_s"] for side, got in best_runs(sides, rounds).items()}
            row = {"style": style, "workers": n, "ms": {k: round(1000 * v, 1) for k, v in best.items()},
                   "ratio": round(best["plain"] / best["exact"], 3),
                   "decode_ms_per_photo": {"ours (region)": round(mean_of(out("exact"), "decode_latency"), 2),
                                           "pillow (full)": round(mean_of(out("plain"), "decode_ms"), 2), **own},
                   "top1_equal": agreement(out("plain"), out("exact"))["top1_equal"]}
            rows.append(row)
            d = row["decode_ms_per_photo"]
            print(f"{count} photos of 3-12 MP saved {style}, {n} worker(s): exact {row['ms']['exact']:.0f} ms, "
                  f"Pool {row['ms']['plain']:.0f} ms, {row['ratio']:.2f}x; top-1 equal on {row['top1_equal']}/"
                  f"{count}; decode ms/photo: " + ", ".join(f"{k} {v}" for k, v in d.items()), flush=True)
    return rows


def timed(cmd: list[str]) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"failed ({code}): {' '.join(cmd)}\n{err[-2000:]}")
    return {"wall_s": wall, "rss_mb": usage.ru_maxrss / 1024, "stdout": out}


def best_runs(sides: dict[str, list[str]], rounds: int) -> dict[str, dict]:
    """Each side's fastest of `rounds` runs (timed()), the sides run in turn, in reverse order every
    other round so that none always runs first."""
    best: dict[str, dict] = {}
    for r in range(rounds):
        for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            got = timed(sides[side])
            if side not in best or got["wall_s"] < best[side]["wall_s"]:
                best[side] = got
    return best


def top1(jsonl: str) -> dict[str, tuple[int, float]]:
    """{file name: (top-1 class index, its score)} from either side's JSON lines."""
    found = {}
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            path = r.get("file") or r.get("image")
            if r.get("error"):
                found[os.path.basename(path)] = (-1, 0.0)
                continue
            cats = r.get("labels") or r["inference_results"]["classification"]
            best = max(cats, key=lambda c: c["score"])
            found[os.path.basename(path)] = (int(best["index"]), float(best["score"]))
    return found


def scores(jsonl: str) -> dict[str, dict[int, float]]:
    """{file name: {class index: score}} of the listed classes (top 5)."""
    found = {}
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            path = r.get("file") or r.get("image")
            if r.get("error"):
                continue
            cats = r.get("labels") or r["inference_results"]["classification"]
            found[os.path.basename(path)] = {int(c["index"]): float(c["score"]) for c in cats}
    return found


def agreement(a: str, b: str) -> dict:
    """Top-1 agreement of b against a, and the mean |score difference| of a's top-1 class."""
    ta, tb, sb = top1(a), top1(b), scores(b)
    same = sum(1 for k in ta if tb.get(k, (None,))[0] == ta[k][0])
    diffs = [abs(ta[k][1] - sb.get(k, {}).get(ta[k][0], 0.0)) for k in ta]
    # Where a is sure of its answer (its top-1 ahead of its second by a margin), b should agree:
    # close calls are where any change of input (even +-1 level of noise) flips top-1.
    sa = scores(a)
    sure = {}
    for margin in (0.3, 0.5):
        keys = [k for k in ta if k in sa and
                ta[k][1] - max((v for c, v in sa[k].items() if c != ta[k][0]), default=0.0) >= margin]
        agreed = sum(1 for k in keys if tb.get(k, (None,))[0] == ta[k][0])
        sure[f"margin_{margin}"] = {"photos": len(keys), "top1_equal": agreed}
    return {"photos": len(ta), "top1_equal": same, "top1_equal_fraction": same / max(1, len(ta)),
            "mean_abs_top1_score_difference": sum(diffs) / max(1, len(diffs)),
            "max_abs_top1_score_difference": max(diffs, default=0.0), "where_sure": sure}


FORMAT_OPTIONS = {  # Pillow's save arguments: what a phone or a web page would give
    "webp": ("webp", {"format": "WEBP", "quality": 85}),
    "heic": ("heic", {"format": "HEIF", "quality": 85}),
    "avif": ("avif", {"format": "AVIF", "quality": 70}),
    "gif": ("gif", {"format": "GIF"}),
    "tiff": ("tif", {"format": "TIFF", "compression": "tiff_lzw"}),
}


def make_format_set(fmt: str, count: int) -> str:
    """`count` photos of 0.2-2 MP (the JPEG set's recipe) re-encoded as `fmt` (made once, kept)."""
    source = os.path.join(OUT, f"decode-format-source-{count}")
    make_set(source, count, *SETS[0][1:])
    folder = os.path.join(OUT, f"decode-format-{fmt}-{count}")
    if os.path.isdir(folder) and len(os.listdir(folder)) == count:
        return folder
    print(f"making {folder} ({count} photos as {fmt}) ...", file=sys.stderr, flush=True)
    from PIL import Image
    try:
        import pillow_heif
        pillow_heif.register_heif_opener()
    except ImportError:
        pass
    os.makedirs(folder, exist_ok=True)
    ext, options = FORMAT_OPTIONS[fmt]
    for name in sorted(os.listdir(source))[:count]:
        image = Image.open(os.path.join(source, name)).convert("RGB")
        if fmt == "gif":
            image = image.quantize(256)
        image.save(os.path.join(folder, os.path.splitext(name)[0] + "." + ext), **options)
    return folder


def format_sets(netrunner: str, formats: list[str], count: int, workers: list[int], rounds: int) -> list[dict]:
    """Our exact path against Pillow (pillow-heif for HEIC) on each format, at each worker count."""
    rows = []
    for fmt in formats:
        folder = make_format_set(fmt, count)
        for n in workers:
            def out(side: str) -> str:
                return os.path.join(OUT, "decode", f"{fmt}-{side}-w{n}.jsonl")
            sides = {
                "exact": [netrunner, "bulk", folder, "--threads", str(n), "--output", out("exact"), "--restart"],
                "plain": [sys.executable, POOL, folder, "--workers", str(n), "--mode", "plain",
                          "--output", out("plain")],
            }
            sides["limit"] = [sys.executable, POOL, folder, "--workers", str(n), "--mode", "invoke",
                              "--output", out("limit")]
            if fmt == "webp":  # the one new format whose decoder scales (libwebp's rescaler)
                sides["fast"] = sides["exact"][:-2] + [out("fast"), "--restart", "--fast-decoding"]
            best = {side: got["wall_s"] for side, got in best_runs(sides, rounds).items()}
            ips = {k: count / v for k, v in best.items()}
            agree = agreement(out("plain"), out("exact"))
            row = {"format": fmt, "workers": n, "images_per_s": {k: round(v, 2) for k, v in ips.items()},
                   "ratio": round(ips["exact"] / ips["plain"], 3), "exact/limit": round(ips["exact"] / ips["limit"], 3),
                   "top1_equal": agree["top1_equal"], "photos": agree["photos"]}
            fast = ""
            if "fast" in ips:
                row["fast_vs_exact"] = agreement(out("exact"), out("fast"))
                fast = (f"; fast {ips['fast']:.1f}/s, {ips['fast'] / ips['plain']:.2f}x, top-1 = exact on "
                        f"{row['fast_vs_exact']['top1_equal']}/{count}")
            rows.append(row)
            print(f"{fmt}, {count} photos of 0.2-2 MP, {n} worker(s): exact {ips['exact']:.1f}/s, Pillow "
                  f"{ips['plain']:.1f}/s, {row['ratio']:.2f}x, {row['exact/limit']:.2f} of the limit "
                  f"({ips['limit']:.1f}/s); top-1 equal on {agree['top1_equal']}/{agree['photos']}{fast}", flush=True)
    return rows


IPHONE_SIZE = (4032, 3024)  # 12 MP, as an iPhone's main camera


def make_iphone_set(count: int) -> tuple[str, str]:
    """`count` iPhone-like HEICs (12 MP in a grid of 512x512 HEVC tiles, a 320-pixel thumbnail, a
    quarter portrait, stored landscape and turned by an irot: python/heif_iphone.py, through
    libheif's own encoder) and JPEG copies of the same pixels (quality 90, 4:2:0), made once and
    kept."""
    source = os.path.join(OUT, f"decode-iphone-source-{count}")
    make_set(source, count, 11.0, 12.5, 15, ["--phone"])
    heic = os.path.join(OUT, f"decode-iphone-heic-{count}")
    jpeg = os.path.join(OUT, f"decode-iphone-jpeg-{count}")
    if all(os.path.isdir(f) and len(os.listdir(f)) == count for f in (heic, jpeg)):
        return heic, jpeg
    print(f"making {heic} and {jpeg} ({count} iPhone-like photos) ...", file=sys.stderr, flush=True)
    sys.path.insert(0, os.path.join(HERE, "python"))
    import heif_iphone
    from PIL import Image, ImageOps
    for folder in (heic, jpeg):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    for index, name in enumerate(sorted(os.listdir(source))[:count]):
        with Image.open(os.path.join(source, name)) as im:
            photo = ImageOps.exif_transpose(im).convert("RGB")
        size = IPHONE_SIZE if index % 4 else IPHONE_SIZE[::-1]
        photo = ImageOps.fit(photo, size, Image.Resampling.BILINEAR)
        stem = os.path.splitext(name)[0]
        photo.save(os.path.join(jpeg, stem + ".jpg"), quality=90, subsampling=2)
        if index % 4:
            heif_iphone.write(photo, os.path.join(heic, stem + ".heic"))
        else:
            # A portrait photo as an iPhone stores one: the sensor's landscape grid, turned by an
            # irot (EXIF orientation 6's turn).
            heif_iphone.write(photo.transpose(Image.Transpose.ROTATE_90), os.path.join(heic, stem + ".heic"),
                              orientation=6)
    return heic, jpeg


def iphone_set(netrunner: str, count: int, workers: list[int], rounds: int) -> list[dict]:
    """The iPhone-like HEICs: exact and fast (the thumbnail) against pillow-heif's full decode and
    its thumbnail in a Pool; the JPEG copies' draft() against plain Pillow as the fidelity anchor."""
    heic, jpeg = make_iphone_set(count)
    rows = []
    for n in workers:
        def out(side: str) -> str:
            return os.path.join(OUT, "decode", f"iphone-{side}-w{n}.jsonl")
        pool = [sys.executable, POOL, "--workers", str(n)]
        sides = {
            "exact": [netrunner, "bulk", heic, "--threads", str(n), "--output", out("exact"), "--restart"],
            "fast": [netrunner, "bulk", heic, "--threads", str(n), "--output", out("fast"), "--restart",
                     "--fast-decoding"],
            "plain": pool + [heic, "--mode", "plain", "--output", out("plain")],
            "thumbnail": pool + [heic, "--mode", "draft", "--output", out("thumbnail")],
            "limit": pool + [heic, "--mode", "invoke", "--output", out("limit")],
        }
        best = best_runs(sides, rounds)
        ips = {k: count / v["wall_s"] for k, v in best.items()}
        # The anchor's fidelity, once: draft() against plain Pillow on the JPEG copies.
        if n == workers[0]:
            for mode in ("plain", "draft"):
                timed(pool + [jpeg, "--mode", mode, "--output", out(f"jpeg-{mode}")])
        jpeg_plain = os.path.join(OUT, "decode", f"iphone-jpeg-plain-w{workers[0]}.jsonl")
        jpeg_draft = os.path.join(OUT, "decode", f"iphone-jpeg-draft-w{workers[0]}.jsonl")
        row = {
            "workers": n, "images_per_s": {k: round(v, 2) for k, v in ips.items()},
            "our_peak_rss_mb": {k: round(best[k]["rss_mb"], 1) for k in ("exact", "fast")},
            "ratios": {"exact/plain": round(ips["exact"] / ips["plain"], 3),
                       "fast/exact": round(ips["fast"] / ips["exact"], 3),
                       "fast/thumbnail": round(ips["fast"] / ips["thumbnail"], 3),
                       "exact/limit": round(ips["exact"] / ips["limit"], 3),
                       "fast/limit": round(ips["fast"] / ips["limit"], 3)},
            "exact_vs_plain": agreement(out("plain"), out("exact")),
            "fast_vs_exact": agreement(out("exact"), out("fast")),
            "thumbnail_vs_plain": agreement(out("plain"), out("thumbnail")),
            "jpeg_draft_vs_plain": agreement(jpeg_plain, jpeg_draft),
        }
        rows.append(row)
        e, f, t, d = (row["exact_vs_plain"], row["fast_vs_exact"], row["thumbnail_vs_plain"],
                      row["jpeg_draft_vs_plain"])
        fs, ds = f["where_sure"]["margin_0.5"], d["where_sure"]["margin_0.5"]
        print(f"iPhone-like HEIC, {count} photos of 12 MP (512x512 tiles, 320-px thumbnail), {n} worker(s): "
              + ", ".join(f"{k} {v:.2f}/s" for k, v in ips.items()))
        print("   ratios: " + ", ".join(f"{k} {v:.2f}x" for k, v in row["ratios"].items())
              + f"; our peak RSS exact {row['our_peak_rss_mb']['exact']:.0f} MB, "
              + f"fast {row['our_peak_rss_mb']['fast']:.0f} MB")
        print(f"   top-1 exact = plain on {e['top1_equal']}/{e['photos']}; fast (thumbnail) = exact on "
              f"{f['top1_equal']}/{f['photos']} ({fs['top1_equal']}/{fs['photos']} where exact is sure), mean "
              f"|score diff| {f['mean_abs_top1_score_difference']:.4f}; pillow-heif's thumbnail = plain on "
              f"{t['top1_equal']}/{t['photos']}; on JPEG copies, draft() = plain on {d['top1_equal']}/"
              f"{d['photos']} ({ds['top1_equal']}/{ds['photos']} where plain is sure)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netrunner", default=os.path.join(ROOT, ".build", "release", "netrunner"))
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--count", type=int, default=96, help="photos per timed set (default 96)")
    ap.add_argument("--fidelity-count", type=int, default=1000,
                    help="varied photos for the fast path's fidelity (0 leaves it out)")
    ap.add_argument("--sets", default="0,1,2,3",
                    help="which timed sets: 0 small, 1 large, 2 phone-like, 3 progressive "
                         "(default 0,1,2,3; 'none')")
    ap.add_argument("--ways-count", type=int, default=24,
                    help="photos of 3-12 MP saved five ways (baseline, EXIF-rotated, progressive, 4:4:4, "
                         "4:2:2), timed against the Pool and libjpeg-turbo's tools (0 leaves them out)")
    ap.add_argument("--formats", default="webp,heic,avif,gif,tiff",
                    help="photo formats timed besides JPEG, each a set re-encoded from the 0.2-2 MP "
                         "photos (default webp,heic,avif,gif,tiff; 'none' leaves them out)")
    ap.add_argument("--format-count", type=int, default=24, help="photos per format set (default 24)")
    ap.add_argument("--iphone-count", type=int, default=24,
                    help="iPhone-like HEICs (12 MP, 512x512 tiles, a 320-pixel thumbnail) timed against "
                         "pillow-heif's full decode and thumbnail in a Pool (default 24; 0 leaves them out)")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON to FILE")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    if args.rounds < 1 or args.count < 1 or min(workers) < 1:
        ap.error("--rounds, --count and --workers must be >= 1")
    netrunner = os.path.abspath(args.netrunner)
    os.makedirs(os.path.join(OUT, "decode"), exist_ok=True)
    results: dict = {"netrunner": netrunner, "cpus": os.cpu_count(), "sets": []}

    for index in ([] if args.sets == "none" else (int(s) for s in args.sets.split(","))):
        name, lo, hi, seed, options = SETS[index]
        folder = os.path.join(OUT, f"decode-photos-{index}")
        make_set(folder, args.count, lo, hi, seed, options)
        entry = {"set": name, "photos": args.count, "by_workers": []}
        for n in workers:
            def out(side: str) -> str:
                return os.path.join(OUT, "decode", f"{index}-{side}-w{n}.jsonl")

            sides = {
                "exact": [netrunner, "bulk", folder, "--threads", str(n), "--output", out("exact"),
                          "--restart"],
                "fast": [netrunner, "bulk", folder, "--threads", str(n), "--output", out("fast"),
                         "--restart", "--fast-decoding"],
                "plain": [sys.executable, POOL, folder, "--workers", str(n), "--mode", "plain",
                          "--output", out("plain")],
                "draft": [sys.executable, POOL, folder, "--workers", str(n), "--mode", "draft",
                          "--output", out("draft")],
                "limit": [sys.executable, POOL, folder, "--workers", str(n), "--mode", "invoke",
                          "--output", out("limit")],
            }
            best = best_runs(sides, args.rounds)
            ips = {k: args.count / v["wall_s"] for k, v in best.items()}
            row = {
                "workers": n,
                "images_per_s": {k: round(v, 2) for k, v in ips.items()},
                "our_peak_rss_mb": {k: round(best[k]["rss_mb"], 1) for k in ("exact", "fast")},
                "ratios": {
                    "exact/plain": round(ips["exact"] / ips["plain"], 3),
                    "fast/plain": round(ips["fast"] / ips["plain"], 3),
                    "fast/draft": round(ips["fast"] / ips["draft"], 3),
                    "exact/limit": round(ips["exact"] / ips["limit"], 3),
                    "fast/limit": round(ips["fast"] / ips["limit"], 3),
                },
                "exact_vs_plain": agreement(out("plain"), out("exact")),
                "fast_vs_exact": agreement(out("exact"), out("fast")),
                # The fast path's fidelity anchor: how often Pillow's draft() keeps plain Pillow's top-1.
                "draft_vs_plain": agreement(out("plain"), out("draft")),
            }
            entry["by_workers"].append(row)
            print(f"{name}, {n} worker(s): " + ", ".join(f"{k} {v:.1f}/s" for k, v in ips.items()))
            print("   ratios: " + ", ".join(f"{k} {v:.2f}x" for k, v in row["ratios"].items())
                  + f"; our peak RSS exact {row['our_peak_rss_mb']['exact']:.0f} MB, "
                  + f"fast {row['our_peak_rss_mb']['fast']:.0f} MB")
            e, f, d = row["exact_vs_plain"], row["fast_vs_exact"], row["draft_vs_plain"]
            fs, ds = f["where_sure"]["margin_0.5"], d["where_sure"]["margin_0.5"]
            print(f"   top-1 exact = plain on {e['top1_equal']}/{e['photos']}; "
                  f"fast = exact on {f['top1_equal']}/{f['photos']} ({fs['top1_equal']}/{fs['photos']} where exact "
                  f"is sure), mean |score diff| {f['mean_abs_top1_score_difference']:.4f}; draft = plain on "
                  f"{d['top1_equal']}/{d['photos']} ({ds['top1_equal']}/{ds['photos']} where plain is sure)",
                  flush=True)
        # The model's noise floor on the same photos: +-1 level of noise on the exact input.
        floor = json.loads(timed([sys.executable, NOISE, folder, "--count", str(args.count)])["stdout"])
        entry["noise_floor"] = floor
        print(f"   noise floor ({name}): +-1 level of random noise on the exact input keeps top-1 on "
              f"{floor['top1_equal']}/{floor['photos']}, mean |score diff| "
              f"{floor['mean_abs_top1_score_difference']:.4f}", flush=True)
        results["sets"].append(entry)

    if args.ways_count > 0:
        results["ways"] = ways(netrunner, args.ways_count, workers, args.rounds)

    formats = [] if args.formats == "none" else args.formats.split(",")
    if formats:
        results["formats"] = format_sets(netrunner, formats, args.format_count, workers, args.rounds)

    if args.iphone_count > 0:
        results["iphone"] = iphone_set(netrunner, args.iphone_count, workers, args.rounds)

    if args.fidelity_count > 0:
        folder = os.path.join(OUT, f"decode-fidelity-{args.fidelity_count}")
        make_set(folder, args.fidelity_count, 0.1, 24.0, 13, ["--varied"])
        n = max(workers)
        exact = os.path.join(OUT, "decode", "fidelity-exact.jsonl")
        fast = os.path.join(OUT, "decode", "fidelity-fast.jsonl")
        t_exact = timed([netrunner, "bulk", folder, "--threads", str(n), "--output", exact, "--restart"])
        t_fast = timed([netrunner, "bulk", folder, "--threads", str(n), "--output", fast, "--restart",
                        "--fast-decoding"])
        fid = agreement(exact, fast)
        fid["noise_floor"] = json.loads(
            timed([sys.executable, NOISE, folder, "--count", str(args.fidelity_count)])["stdout"])
        fid.update(exact_images_per_s=round(args.fidelity_count / t_exact["wall_s"], 2),
                   fast_images_per_s=round(args.fidelity_count / t_fast["wall_s"], 2))
        results["fidelity"] = fid
        print(f"fidelity, {fid['photos']} varied JPEGs of 0.1-24 MP: fast top-1 = exact on "
              f"{fid['top1_equal']} ({100 * fid['top1_equal_fraction']:.2f}%), mean |top-1 score diff| "
              f"{fid['mean_abs_top1_score_difference']:.4f} (max {fid['max_abs_top1_score_difference']:.4f}); "
              f"exact {fid['exact_images_per_s']}/s, fast {fid['fast_images_per_s']}/s at {n} workers; "
              f"noise floor: top-1 kept on {fid['noise_floor']['top1_equal']}/{fid['noise_floor']['photos']}, "
              f"mean |score diff| {fid['noise_floor']['mean_abs_top1_score_difference']:.4f}; where the exact path "
              f"is sure (top-1 ahead by 0.3 / 0.5): "
              f"{fid['where_sure']['margin_0.3']['top1_equal']}/{fid['where_sure']['margin_0.3']['photos']}, "
              f"{fid['where_sure']['margin_0.5']['top1_equal']}/{fid['where_sure']['margin_0.5']['photos']}")

    print_table(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)


def print_table(results: dict) -> None:
    """Every timed figure again as one Markdown table: images/s of our exact path and of the Pool,
    the ratio, and the exact path's share of the invoke-only limit."""
    rows = []
    for entry in results.get("sets", []):
        for row in entry["by_workers"]:
            ips = row["images_per_s"]
            rows.append((f"{entry['set']} JPEG", row["workers"], ips["exact"], ips["plain"],
                         row["ratios"]["exact/plain"], row["ratios"]["exact/limit"],
                         f"fast {ips['fast']}/s, {row['ratios']['fast/draft']:.2f}x draft"))
    for row in results.get("ways", []):
        rows.append((f"3-12 MP saved {row['style']}", row["workers"], None, None, row["ratio"], None,
                     f"{row['ms']['exact']:.0f} vs {row['ms']['plain']:.0f} ms"))
    for row in results.get("formats", []):
        ips = row["images_per_s"]
        rows.append((f"0.2-2 MP {row['format']}", row["workers"], ips["exact"], ips["plain"], row["ratio"],
                     row["exact/limit"], f"fast {ips['fast']}/s" if "fast" in ips else ""))
    if not rows:
        return
    print("\n| photos | workers | exact /s | Pool /s | exact / Pool | exact / limit | |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, n, exact, plain, ratio, limit, note in rows:
        cell = lambda v, f: "" if v is None else format(v, f)  # noqa: E731
        print(f"| {name} | {n} | {cell(exact, '.1f')} | {cell(plain, '.1f')} | {ratio:.2f}x | {cell(limit, '.2f')} | "
              f"{note} |")


if __name__ == "__main__":
    main()
