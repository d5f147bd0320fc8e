#!/usr/bin/env bash
# mediapipe_check.sh - run MediaPipe itself (PyPI mediapipe==0.10.21) as an independent check of
# the BlazeFace reference, from a throwaway venv outside the repository.
#
#   1. makes $MP_VENV (default /tmp/netrunner-mediapipe-venv) with python3.11 if it is missing and
#      installs the pinned, sha256-checked mediapipe wheel (fetched by fetch_blazeface.sh into the
#      cache) plus its dependencies from PyPI;
#   2. dump_mediapipe_graphs.py -> tools/detectors/mediapipe_face_detection_graphs.pbtxt
#      (the graph/calculator options the reference re-implements);
#   3. mediapipe_check.py -> Tests/Fixtures/DetectionReference/mediapipe_detections.json.
# Then run record_detection_reference.py (in .venv-ref) to fold the result into reference.json.
# Nothing here is needed to build or test NetRunner; the outputs are committed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${NETRUNNER_ASSET_CACHE:-$ROOT/tools/models/.cache}"
MP_VENV="${MP_VENV:-/tmp/netrunner-mediapipe-venv}"
MP_WHL="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl"
MP_WHL_SHA256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3"

"$ROOT/tools/detectors/fetch_blazeface.sh"   # makes sure the wheel is cached and checked
echo "$MP_WHL_SHA256  $CACHE/$MP_WHL" | sha256sum -c --quiet
if [[ ! -x "$MP_VENV/bin/python" ]] || ! "$MP_VENV/bin/python" -c "import mediapipe" 2>/dev/null; then
    python3.11 -m venv "$MP_VENV"
    "$MP_VENV/bin/pip" install --quiet "$CACHE/$MP_WHL"
fi
"$MP_VENV/bin/python" "$ROOT/tools/detectors/dump_mediapipe_graphs.py" \
    > "$ROOT/tools/detectors/mediapipe_face_detection_graphs.pbtxt"
"$MP_VENV/bin/python" "$ROOT/tools/detectors/mediapipe_check.py" 2>&1 | grep -v '^[WI]0000' >&2 || true
test -s "$ROOT/Tests/Fixtures/DetectionReference/mediapipe_detections.json"
