#!/usr/bin/env bash
# Installs the LiteRT runtime NetRunner runs on: libLiteRt.so from the PyPI wheel
# ai-edge-litert==2.3.0, checked against pinned SHA-256 digests.
#
#   scripts/install-runtime.sh            install for the current user (idempotent)
#   scripts/install-runtime.sh --print    print where it is (or would be) installed
#
# Destination: ${XDG_DATA_HOME:-$HOME/.local/share}/netrunner/litert-2.3.0/libLiteRt.so,
# the third place NetRunner looks (see Sources/TensorFlowLite/Runtime.swift). Only the one
# shared library is kept; Python is used to download and unzip, not at run time.
set -euo pipefail

VERSION=2.3.0
WHEEL=ai_edge_litert-2.3.0-cp311-cp311-manylinux_2_27_x86_64.whl
WHEEL_SHA256=1f15078a6725d2357d9de9221664c29afa0545d807559c5f7199ce5e40b96b23
LIB_SHA256=eec47eb35e2924b3166015887e652a58edc9af823ae38e02bf83bef2548300bb
MEMBER=ai_edge_litert/libLiteRt.so

data_home=${XDG_DATA_HOME:-$HOME/.local/share}
case "$data_home" in /*) ;; *) data_home=$HOME/.local/share ;; esac
dest_dir="$data_home/netrunner/litert-$VERSION"
dest="$dest_dir/libLiteRt.so"

if [[ "${1:-}" == "--print" ]]; then
  echo "$dest"
  exit 0
fi

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "install-runtime: only Linux x86_64 is pinned here; set NETRUNNER_LITERT_LIBRARY to a libLiteRt for $(uname -s)-$(uname -m)." >&2
  exit 1
fi

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$dest" && "$(sha "$dest")" == "$LIB_SHA256" ]]; then
  echo "LiteRT $VERSION runtime present: $dest"
  exit 0
fi

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "install-runtime: python3 with pip is needed to download the wheel (apt-get install python3-pip)." >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "Downloading ai-edge-litert==$VERSION from PyPI ..."
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux_2_27_x86_64 --python-version 311 --implementation cp \
  --dest "$work" "ai-edge-litert==$VERSION"
[[ -f "$work/$WHEEL" ]] || { echo "install-runtime: pip did not produce $WHEEL" >&2; exit 1; }
got=$(sha "$work/$WHEEL")
if [[ "$got" != "$WHEEL_SHA256" ]]; then
  echo "install-runtime: $WHEEL has SHA-256 $got, expected $WHEEL_SHA256; refusing it." >&2
  exit 1
fi

mkdir -p "$dest_dir"
"$python" - "$work/$WHEEL" "$MEMBER" "$dest_dir/.libLiteRt.so.partial" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(out, "wb") as target:
    shutil.copyfileobj(source, target)
PY
got=$(sha "$dest_dir/.libLiteRt.so.partial")
if [[ "$got" != "$LIB_SHA256" ]]; then
  rm -f "$dest_dir/.libLiteRt.so.partial"
  echo "install-runtime: libLiteRt.so has SHA-256 $got, expected $LIB_SHA256; refusing it." >&2
  exit 1
fi
chmod 0755 "$dest_dir/.libLiteRt.so.partial"
mv -f "$dest_dir/.libLiteRt.so.partial" "$dest"   # atomic: never a half-written library
echo "Installed LiteRT $VERSION runtime: $dest"
