#!/usr/bin/env bash
# Creates .venv-bench and .venv-mediapipe (git-ignored) with the reference side of the benchmarks: Python
# ai-edge-litert 2.3.0 + numpy + pillow (+ pillow-heif), hash-pinned in tools/images/requirements-formats.txt,
# and FastAPI + uvicorn for the serve benchmark (Benchmarks/python/requirements-serve.txt).
set -euo pipefail
# wrk (Debian) drives the serve and hub benchmarks; nginx (Debian) is the hub's yardstick;
# tjbench and djpeg (Debian's libjpeg-turbo-progs) are libjpeg-turbo's own decode speed.
# shellcheck source=../scripts/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/apt.sh"
for tool in wrk:wrk nginx:nginx tjbench:libjpeg-turbo-progs; do
  command_name=${tool%%:*}
  package=${tool##*:}
  if ! command -v "$command_name" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$command_name" ]; then
    apt_install "$package"
  fi
done
# libheif's x265 encoder plugin: Benchmarks/python/heif_iphone.py writes the decode benchmark's
# iPhone-like HEICs (a grid of tiles and a thumbnail, which pillow-heif does not write) through
# the system's libheif. From bookworm-backports, as the libheif NetRunner uses.
if [[ -z "$(installed_version libheif-plugin-x265)" ]]; then
  add_bookworm_backports
  apt_install -t bookworm-backports libheif-plugin-x265
fi
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-bench"
# tools/images/requirements-formats.txt is the reference's pins plus pillow-heif (HEIC as
# Python users read it, for the decode benchmark's format sets).
req="$root/tools/images/requirements-formats.txt"
serve="$root/Benchmarks/python/requirements-serve.txt"
stamp="$venv/.requirements.sha256"
want=$(cat "$req" "$root/tools/models/requirements-reference.txt" "$serve" | sha256sum | cut -d' ' -f1)
if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$req"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$serve"
  echo "$want" > "$stamp"
  echo "Reference benchmark environment ready: $venv"
fi

# MediaPipe (the stream benchmark's reference side) in its own venv: its pins (protobuf 4,
# numpy 1.26) differ from the reference's. CPython 3.11 (Debian 12's python3).
mp_venv="$root/.venv-mediapipe"
mp_req="$root/Benchmarks/python/requirements-mediapipe.txt"
mp_stamp="$mp_venv/.requirements.sha256"
mp_want=$(sha256sum "$mp_req" | cut -d' ' -f1)
if [[ ! -x "$mp_venv/bin/python" || ! -f "$mp_stamp" || "$(cat "$mp_stamp")" != "$mp_want" ]]; then
  python3 -m venv "$mp_venv"
  "$mp_venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$mp_req"
  echo "$mp_want" > "$mp_stamp"
  echo "MediaPipe benchmark environment ready: $mp_venv"
fi
