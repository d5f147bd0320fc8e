#!/usr/bin/env bash
# fetch_blazeface.sh - obtain MediaPipe's trained BlazeFace short-range face detector.
#
# Source: PyPI `mediapipe==0.10.21` (Apache-2.0), the CPython 3.11 manylinux_2_28 x86_64 wheel.
# Only one member is extracted from it:
#   mediapipe/modules/face_detection/face_detection_short_range.tflite  ->  Models/face_detection_short_range.tflite
# The wheel is fetched with `pip download --no-deps` (mediapipe is never installed by this
# script) and both the wheel and the extracted model are checked against pinned sha256s.
#
# Output (committed; a fresh clone never needs to run this):
#   Models/face_detection_short_range.tflite   229714 bytes
#
# Usage: tools/detectors/fetch_blazeface.sh   (idempotent; the wheel is cached in
#        tools/models/.cache, override with NETRUNNER_ASSET_CACHE; a pip-capable Python is
#        taken from $PYTHON, default .venv-ref/bin/python)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${NETRUNNER_ASSET_CACHE:-$ROOT/tools/models/.cache}"
PY="${PYTHON:-$ROOT/.venv-ref/bin/python}"
MODELS="$ROOT/Models"

MP_REQ="mediapipe==0.10.21"
MP_WHL="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl"
MP_WHL_SHA256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3"
MEMBER="mediapipe/modules/face_detection/face_detection_short_range.tflite"
MODEL_SHA256="bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"
OUT="$MODELS/face_detection_short_range.tflite"

log() { printf '[fetch_blazeface] %s\n' "$*" >&2; }

check_sha256() { # file expected
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [[ "$got" != "$2" ]]; then
        log "sha256 mismatch for $1: got $got, expected $2"
        exit 1
    fi
}

mkdir -p "$CACHE" "$MODELS"
if [[ ! -f "$CACHE/$MP_WHL" ]]; then
    log "pip download $MP_REQ (no deps, cp311 manylinux_2_28 x86_64 wheel)"
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
        --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
        --dest "$CACHE" "$MP_REQ" >&2
fi
check_sha256 "$CACHE/$MP_WHL" "$MP_WHL_SHA256"

# Extract exactly one member (Python's zipfile; no unzip dependency).
"$PY" - "$CACHE/$MP_WHL" "$MEMBER" "$OUT.tmp" <<'PYEOF'
import sys, zipfile
whl, member, dst = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, open(dst, "wb") as f:
    f.write(z.read(member))
PYEOF
check_sha256 "$OUT.tmp" "$MODEL_SHA256"
mv "$OUT.tmp" "$OUT"
log "Models/$(basename "$OUT") $(stat -c %s "$OUT") bytes, sha256 $MODEL_SHA256"
