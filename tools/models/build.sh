#!/usr/bin/env bash
# build.sh - regenerate every test model, photo and reference output of NetRunner.
#
# A fresh clone never needs this: all outputs are committed. Run it only to change or audit them.
#
# Steps (each is idempotent; re-running gives the same files):
#   1. venvs     .venv-models (tools/models/requirements-convert.txt: TensorFlow, torch, LiteRT)
#                .venv-ref    (tools/models/requirements-reference.txt, --require-hashes:
#                              ai-edge-litert, numpy, pillow only)
#                A venv is (re)created only when its requirements file changed (stamp file).
#   2. photos    tools/models/fetch_photos.sh      -> Tests/Fixtures/Photos/, Models/imagenet_labels.txt
#   3. mobilenet tools/models/make_mobilenet_v2.py -> Models/*.tflite, Models/SOURCES.md
#   4. synthetic tools/models/make_synthetic.py    -> Tests/Fixtures/Models/*.tflite
#   5. reference tools/models/record_reference.py  -> Tests/Fixtures/Reference/
#
# Usage: tools/models/build.sh [step ...]     (default: all steps, in order)
#        e.g. `tools/models/build.sh venvs reference` re-records the reference from the
#        committed models without touching them.
# Needs: CPython 3.11 (python3.11 on PATH, or set PYTHON311), network access to PyPI and to
#        Debian's archive (apt-get download), /opt/wheels/torch-2.13.0+cpu-*.whl, ~2 GB disk.
# Downloads are cached in tools/models/.cache (override with NETRUNNER_ASSET_CACHE).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/tools/models"
cd "$ROOT"

PYTHON311="${PYTHON311:-$(command -v python3.11 || true)}"
if [[ -z "$PYTHON311" ]]; then
    for p in /root/.pyenv/versions/3.11*/bin/python3.11; do [[ -x "$p" ]] && PYTHON311="$p"; done
fi

log() { printf '[build] %s\n' "$*" >&2; }

# make_venv <dir> <requirements> [pip flags...]
make_venv() {
    local dir="$1" req="$2"
    shift 2
    local want
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    if [[ -x "$dir/bin/python" && "$(cat "$dir/.requirements.sha256" 2>/dev/null)" == "$want" ]]; then
        log "$dir is up to date"
        return
    fi
    [[ -n "$PYTHON311" ]] || { log "CPython 3.11 not found (set PYTHON311)"; exit 1; }
    log "creating $dir from $req"
    "$PYTHON311" -m venv --clear "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@" -r "$req"
    echo "$want" > "$dir/.requirements.sha256"
}

step_venvs() {
    make_venv "$ROOT/.venv-ref" "$TOOLS/requirements-reference.txt" --require-hashes
    make_venv "$ROOT/.venv-models" "$TOOLS/requirements-convert.txt"
}
step_photos()    { PYTHON="$ROOT/.venv-ref/bin/python" "$TOOLS/fetch_photos.sh"; }
step_mobilenet() { "$ROOT/.venv-models/bin/python" "$TOOLS/make_mobilenet_v2.py"; }
step_synthetic() { "$ROOT/.venv-models/bin/python" "$TOOLS/make_synthetic.py"; }
step_reference() { "$ROOT/.venv-ref/bin/python" "$TOOLS/record_reference.py"; }

STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(venvs photos mobilenet synthetic reference)
for s in "${STEPS[@]}"; do
    declare -F "step_$s" >/dev/null || { log "unknown step '$s'"; exit 2; }
done

TOTAL_START=$SECONDS
for s in "${STEPS[@]}"; do
    start=$SECONDS
    log "step $s"
    "step_$s"
    log "step $s took $((SECONDS - start)) s"
done
log "all done in $((SECONDS - TOTAL_START)) s"
