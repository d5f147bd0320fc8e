#!/usr/bin/env bash
# What LiteRT's GPU accelerator (--accelerator gpu) needs besides libLiteRtWebGpuAccelerator.so
# (which scripts/install-runtime.sh installs): the Vulkan loader and a Vulkan driver.
#
# On a machine without a GPU (CI, this project's machines) the driver is lavapipe, Mesa's
# software Vulkan, from Debian's bookworm-backports: bookworm's own Mesa 22.3 lacks features
# Dawn needs ("No adapters found"); 25.0 has them. It runs the real GPU code path on the CPU,
# slowly (about 0.2 s per MobileNetV2 on two cores), which is what the GPU tests need.
#
# On a machine with a GPU, install the vendor's driver instead (docs/gpu.md): NVIDIA's driver
# brings its Vulkan ICD (add Debian's libvulkan1 and libglvnd0), AMD and Intel use Mesa's
# (mesa-vulkan-drivers).
#
#   scripts/install-gpu-packages.sh     install if missing (idempotent); check the driver is there
set -euo pipefail

MIN_MESA=24.0   # the oldest lavapipe seen to satisfy Dawn
ICD=/usr/share/vulkan/icd.d/lvp_icd.json

# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

mesa=$(installed_version mesa-vulkan-drivers)
if [[ -z "$mesa" ]] || ! dpkg --compare-versions "$mesa" ge "$MIN_MESA" || [[ -z "$(installed_version libvulkan1)" ]]; then
    add_bookworm_backports # lavapipe >= $MIN_MESA
    apt_install -t bookworm-backports mesa-vulkan-drivers libvulkan1
    mesa=$(installed_version mesa-vulkan-drivers)
fi
if ! dpkg --compare-versions "$mesa" ge "$MIN_MESA"; then
    echo "install-gpu-packages: mesa-vulkan-drivers $mesa is older than $MIN_MESA; Dawn refuses its lavapipe." >&2
    exit 1
fi
[[ -f "$ICD" ]] || { echo "install-gpu-packages: $ICD is missing after the install." >&2; exit 1; }
echo "Vulkan: libvulkan1 $(installed_version libvulkan1), lavapipe (mesa-vulkan-drivers $mesa) at $ICD"
