#!/usr/bin/env bash
# build.sh - regenerate the face-detector assets (all outputs are committed; a fresh clone never
# needs to run this). Steps, in order (no argument = all):
#   fetch      tools/detectors/fetch_blazeface.sh          -> Models/face_detection_short_range.tflite
#   photos     make_face_photos.py (.venv-ref)             -> Tests/Fixtures/Photos/faces/*
#   ssd        make_blazeface_ssd.py (.venv-models)        -> Models/face_detection_short_range_ssd.tflite, Models/face_labels.txt
#   mediapipe  mediapipe_check.sh (throwaway venv in /tmp) -> tools/detectors/mediapipe_face_detection_graphs.pbtxt,
#                                                             Tests/Fixtures/DetectionReference/mediapipe_*
#   reference  record_detection_reference.py (.venv-ref)   -> Tests/Fixtures/DetectionReference/*
#   sources    update_models_sources.py                    -> detector section of Models/SOURCES.md
# The venvs are the ones of tools/models (tools/models/build.sh venvs makes them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
D="$ROOT/tools/detectors"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(fetch photos ssd mediapipe reference sources)
for s in "${steps[@]}"; do
    echo "[detectors] $s" >&2
    case "$s" in
        fetch) "$D/fetch_blazeface.sh" ;;
        photos) "$ROOT/.venv-ref/bin/python" "$D/make_face_photos.py" ;;
        ssd) "$ROOT/.venv-models/bin/python" "$D/make_blazeface_ssd.py" ;;
        mediapipe) "$D/mediapipe_check.sh" ;;
        reference) "$ROOT/.venv-ref/bin/python" "$D/record_detection_reference.py" ;;
        sources) python3 "$D/update_models_sources.py" ;;
        *) echo "unknown step $s" >&2; exit 2 ;;
    esac
done
