"""Round six (issue 54, "hostile inputs, round six") of the hostile trial: the crafted files of
the round's makers, sent to the trial's open `serve` and to the command line.

- The odd-tiled grids (tools/trial/make_odd_tile_grids.py --trial: 63, 511 and 1023 px tiles,
  AVIF and HEIC): 400 at once, naming the tiles; the even controls: 200.
- The scan-filter cases (tools/trial/make_scan_filter_cases.py): the four the full read decodes
  answer 200 with the command line's top answer; the two cut short answer 400 and exit 1.
- Crafted indexes and results lines (tools/trial/make_index_cases.py, from an index `similar
  index` writes here): `similar duplicates` refuses each broken index naming the embedding or
  the cut, `serve --index` refuses it at the start; `similar index` reads hostile lines as
  Foundation's decoder does (the top-level image and embedding; of a repeated key, the first)
  or refuses the line.

Every command runs in a session of its own, and none may leave a process behind.
"""
import json
import os
import signal
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRIAL = os.path.join(ROOT, "tools", "trial")
EMBEDDER = os.path.join(ROOT, "Models", "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite")
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "Photos", "test")


def session_processes(session):
    """The processes of a session, by id."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:
                found.append(int(name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def run(trial, arguments, seconds=120):
    """`netrunner ARGUMENTS` in a session of its own: (exit status, stdout, stderr, processes left)."""
    process = subprocess.Popen([trial.netrunner] + arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=trial.environment(), cwd=trial.folder,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    left, deadline = session_processes(process.pid), time.monotonic() + 5
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = session_processes(process.pid)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return process.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), left


def make(trial, folder):
    """Runs the round's makers into `folder`; returns the index cases' manifest."""
    os.makedirs(folder, exist_ok=True)
    environment = dict(os.environ, HOSTILE_OUT=folder, SCAN_FILTER_OUT=os.path.join(folder, "scan_filter"))
    subprocess.run([trial.python, os.path.join(TRIAL, "make_odd_tile_grids.py"), "--trial"], env=environment,
                   check=True, capture_output=True, timeout=300)
    subprocess.run([sys.executable, os.path.join(TRIAL, "make_scan_filter_cases.py")], env=environment, check=True,
                   capture_output=True, timeout=60)
    photos = os.path.join(folder, "photos")
    os.makedirs(photos, exist_ok=True)
    for name in ("coffee.jpg", "eagle.jpg", "grace_hopper.jpg"):
        with open(os.path.join(PHOTOS, name), "rb") as source, open(os.path.join(photos, name), "wb") as target:
            target.write(source.read())
    base = os.path.join(folder, "base.nrindex")
    status, _, stderr, _ = run(trial, ["similar", "index", photos, "-o", base, "--model", EMBEDDER])
    if status != 0:
        raise RuntimeError(f"similar index: {stderr[-300:]}")
    subprocess.run([sys.executable, os.path.join(TRIAL, "make_index_cases.py"), base, base + ".jsonl",
                    os.path.join(folder, "index")], check=True, capture_output=True, timeout=60)
    with open(os.path.join(folder, "index", "cases.json")) as handle:
        return json.load(handle)


def read_index(path):
    """An index's paths and embeddings (the layout of tools/embedding/nrindex.py)."""
    with open(path, "rb") as handle:
        data = handle.read()
    dimension, count, model_length = struct.unpack_from("<IQI", data, 8)
    at = 24 + model_length
    rows = [struct.unpack_from(f"<{dimension}f", data, at + 4 * dimension * row) for row in range(count)]
    at += 4 * dimension * count
    paths = []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        paths.append(data[at + 4:at + 4 + length].decode())
        at += 4 + length
    return paths, rows


def close_to(row, values):
    """Whether an index row is `values` made a unit vector."""
    length = sum(value * value for value in values) ** 0.5
    return len(row) == len(values) and all(abs(a - b / length) < 1e-5 for a, b in zip(row, values))


def round_six(trial, request, Server, UINT8, DRAIN):
    """Issue 54's crafted files against the open server and the command line (`request` and
    `Server` are hostile_trial.py's)."""

    folder = os.path.join(trial.folder, "round-six")
    try:
        manifest = make(trial, folder)
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        trial.case(54, "the round's makers", "files made", lambda: (f"{type(error).__name__}: {error}", False))
        return
    oport = trial.open.port
    classify = f"/v1/models/{UINT8}/classify"

    def post(path):
        with open(path, "rb") as handle:
            data = handle.read()
        started = time.monotonic()
        reply = request(oport, "POST", classify, data, {"Content-Type": "application/octet-stream"}, timeout=60)
        return reply, time.monotonic() - started

    def top(text):
        try:
            first = json.loads(text)["inference_results"]["classification"][0]
            return first["display_name"], round(first["score"], 3)
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    def grid(name, side):
        def check():
            reply, took = post(os.path.join(folder, name))
            cli, _, stderr, left = run(trial, ["classify", os.path.join(folder, name)])
            if side % 2:
                ok = reply.status == 400 and f"{side}x{side} tiles of 4:2:0" in reply.text() and took < 5
                ok = ok and cli == 1 and "does not own" in stderr and not left
            else:
                ok = reply.status == 200 and top(reply.text()) is not None and cli == 0 and not left
            return f"{reply.status} in {took:.1f} s: {reply.text()[:80]!r}; CLI exit {cli}, left {left}", ok
        return check

    for name, side in (("avif_grid_odd_tiles.avif", 63), ("avif_grid_odd_511.avif", 511),
                       ("avif_grid_odd_1023.avif", 1023), ("avif_grid_even_tiles.avif", 64),
                       ("heic_grid_odd_63.heic", 63), ("heic_grid_odd_511.heic", 511),
                       ("heic_grid_odd_1023.heic", 1023), ("heic_grid_even_64.heic", 64)):
        expected = "400 at once, CLI exit 1" if side % 2 else "200, CLI exit 0"
        trial.case(54, f"POST {name} (open) and classify", expected, grid(name, side))

    def scan_case(name, decodes):
        def check():
            path = os.path.join(folder, "scan_filter", name)
            reply, _ = post(path)
            cli, stdout, stderr, left = run(trial, ["classify", path, "--json"])
            answer = None
            if cli == 0:
                answer = top(stdout.strip().splitlines()[-1]) if stdout.strip() else None
            if decodes:
                ok = reply.status == 200 and cli == 0 and top(reply.text()) == answer and answer is not None
            else:
                ok = reply.status == 400 and '"error":true' in reply.text() and cli == 1 and "1 of 1 images failed" in stderr
            return f"{reply.status} {top(reply.text()) or reply.text()[:60]!r}; CLI exit {cli} {answer}", ok and not left
        return check

    for name, decodes in (("repeated_id.jpg", True), ("chroma_dc_only_eoi.jpg", True),
                          ("chroma_dc_only_end.jpg", True), ("chroma_never_refined.jpg", True),
                          ("dropped_scan_eoi.jpg", False), ("dropped_scan_cut.jpg", False)):
        trial.case(54, f"POST scan_filter/{name} (open) and classify",
                   "200, the CLI's answer" if decodes else "400 and exit 1", scan_case(name, decodes))

    index_folder = os.path.join(folder, "index")
    for case in manifest["cases"]:
        path = os.path.join(index_folder, case["file"])
        if case["kind"] == "index":
            def index_check(case=case, path=path):
                cli, stdout, stderr, left = run(trial, ["similar", "duplicates", path])
                # serve --index: refused at the start, with the reason, never served.
                served = Server(trial, f"serve-index-{case['file']}", [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--threads", "1", "--no-import",
                    "--models", os.path.join(trial.folder, "models-cli"), "--drain-timeout", str(DRAIN),
                    "--index", f"crafted={path}"], "serve")
                try:
                    served.start()
                    started = "started"
                except Exception as error:  # noqa: BLE001 (a refusal to start is the expected outcome)
                    started = str(error)
                finally:
                    served.stop()
                log = served.log_text()
                if case["expect"] == "refused":
                    ok = cli == 1 and all(word in stderr for word in case["words"])
                else:  # read by similar; refused by serve, whose model makes 1024 values
                    ok = cli == 0
                ok = ok and started != "started" and "Error: --index crafted" in log and not left
                return f"similar exit {cli}: {stderr.strip()[-110:]!r}; serve: {log.strip()[-90:]!r}", ok

            trial.case(54, f"similar and serve --index {case['file']}",
                       "refused by both" if case["expect"] == "refused" else "read; serve refuses it", index_check)
        else:
            def lines_check(case=case, path=path):
                out = path + ".nrindex"
                cli, _, stderr, left = run(trial, ["similar", "index", path, "-o", out, "--model", EMBEDDER])
                if case["expect"] == "refused":
                    ok = cli == 1 and all(word in stderr for word in case["words"]) and not os.path.exists(out)
                    return f"exit {cli}: {stderr.strip()[-100:]!r}", ok and not left
                if cli != 0:
                    return f"exit {cli}: {stderr.strip()[-100:]!r}", False
                paths, rows = read_index(out)
                image = case["image"]
                ok = (paths[0] == image or paths[0].endswith("/" + image)) and close_to(rows[0], case["embedding"]) and not left
                return f"exit 0; first photo {os.path.basename(paths[0])}, its embedding as expected: {ok}", ok

            trial.case(54, f"similar index {case['file']}",
                       "refused, naming line 1" if case["expect"] == "refused" else f"indexed: {case['image']}",
                       lines_check)
