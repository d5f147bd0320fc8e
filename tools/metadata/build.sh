#!/usr/bin/env bash
# build.sh - write TFLite metadata into the uint8 MobileNetV2 and record the metadata dumps.
#
# A fresh clone never needs this: the outputs are committed. Run it only to change or audit them.
#
# Steps (idempotent: a re-run rewrites byte-identical files):
#   1. venv   .venv-metadata from tools/metadata/requirements.txt (--require-hashes; tflite-support
#             0.4.4 + deps). Re-created only when requirements.txt changed (stamp file).
#   2. write  tools/metadata/write_metadata.py -> Models/mobilenet_v2_1.0_224_uint8_metadata.tflite
#   3. check  tools/metadata/check_model.py (in .venv-ref: ai-edge-litert 2.3.0) -> model structure
#             unchanged apart from the metadata, outputs bit-identical on Tests/Fixtures/Reference
#   4. dump   tools/metadata/dump_metadata.py --cross-check -> Tests/Fixtures/Metadata/*.json
#   5. sources tools/metadata/update_models_sources.py -> the last section of Models/SOURCES.md
#             (everything from its marker to the end; run it after tools/models and
#             tools/detectors have rewritten SOURCES.md, which drop this section)
#
# Usage: tools/metadata/build.sh [step ...]   (default: all steps, in order)
# Needs: CPython 3.11 (python3.11 on PATH, or PYTHON311), PyPI access for step 1, and .venv-ref
#        (made by tools/models/build.sh venvs) for step 3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/tools/metadata"
VENV="$ROOT/.venv-metadata"
cd "$ROOT"

PYTHON311="${PYTHON311:-$(command -v python3.11 || true)}"
if [[ -z "$PYTHON311" ]]; then
    for p in /root/.pyenv/versions/3.11*/bin/python3.11; do [[ -x "$p" ]] && PYTHON311="$p"; done
fi

log() { printf '[metadata] %s\n' "$*" >&2; }

step_venv() {
    local req="$TOOLS/requirements.txt" want
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    if [[ -f "$VENV/.requirements.sha256" && "$(cat "$VENV/.requirements.sha256")" == "$want" ]]; then
        log "venv up to date: $VENV"
        return
    fi
    [[ -n "$PYTHON311" ]] || { echo "python3.11 not found (set PYTHON311)" >&2; exit 1; }
    log "creating $VENV"
    rm -rf "$VENV"
    "$PYTHON311" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
        --only-binary=:all: -r "$req"
    echo "$want" > "$VENV/.requirements.sha256"
}

step_write() {
    log "writing metadata"
    "$VENV/bin/python" "$TOOLS/write_metadata.py" | tail -n 1
}

step_check() {
    local py="$ROOT/.venv-ref/bin/python"
    [[ -x "$py" ]] || { echo ".venv-ref missing: run tools/models/build.sh venvs" >&2; exit 1; }
    log "checking structure and outputs with ai-edge-litert (.venv-ref)"
    "$py" "$TOOLS/check_model.py" > /tmp/netrunner_metadata_check.json 2>/dev/null || {
        cat /tmp/netrunner_metadata_check.json; echo "check FAILED" >&2; exit 1; }
    log "check OK"
}

step_dump() {
    log "dumping metadata"
    "$VENV/bin/python" "$TOOLS/dump_metadata.py" --cross-check \
        Models/mobilenet_v2_1.0_224_uint8_metadata.tflite \
        Tests/Fixtures/Metadata/mobilenet_v2_1.0_224_uint8_metadata.json \
        Models/face_detection_short_range.tflite \
        Tests/Fixtures/Metadata/face_detection_short_range.json
}

step_sources() {
    python3 "$TOOLS/update_models_sources.py"
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(venv write check dump sources)
for s in "${steps[@]}"; do
    case "$s" in
        venv|write|check|dump|sources) "step_$s" ;;
        *) echo "unknown step: $s (venv write check dump sources)" >&2; exit 2 ;;
    esac
done
