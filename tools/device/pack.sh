#!/usr/bin/env bash
# Packs what a GPU machine without a Swift toolchain needs to run the benchmarks into .dev/
# (git-ignored): the release `netrunner` and `netrunner-net`, stripped, with the shared libraries
# they link (the Swift runtime, libjpeg, libpng, libcrypto, zlib) in lib/; the pinned
# ai-edge-litert wheel's Python package without its vendor plugins (libLiteRt.so and the GPU
# accelerator come from it); Debian's Vulkan loader and GL dispatch (the NVIDIA ICD needs
# libglvnd) and wrk. tools/device/run-benchmarks.sh unpacks and runs them there.
# What travels is at most 64 MiB: leave the tracked models, bundles and fixtures other than the
# photos out of the tree sent (about 62 MB then travel in all).
# Needs: swift build -c release --product netrunner --product netrunner-net done before.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dev="$root/.dev"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$dev/debs" "$stage/nr/bin" "$stage/nr/lib" "$stage/nr/models" "$stage/site"
for binary in netrunner netrunner-net; do
  cp "$root/.build/release/$binary" "$stage/nr/bin/"
  strip "$stage/nr/bin/$binary"
  ldd "$root/.build/release/$binary" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt)\.so' |
    while read -r library; do cp -n "$library" "$stage/nr/lib/"; done
done
strip --strip-unneeded "$stage"/nr/lib/*.so* 2>/dev/null || true
# The benchmarks' two models travel in the same archive: with xz -9's 64 MiB window (one thread)
# the copies of the embedded model inside both binaries and the file compress to one.
cp "$root"/Models/mobilenet_v2_1.0_224_{uint8,float32}.tflite "$stage/nr/models/"
tar -C "$stage/nr" -cf - models bin lib | xz -9 -T1 > "$dev/nr.tar.xz"
# ai-edge-litert 2.3.0 (hash-pinned in tools/models/requirements-reference.txt) and its
# backports.strenum, for cp312: the vendors' NPU plugins and the plugin tool are left out.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_27_x86_64 -d "$stage/whl" ai-edge-litert==2.3.0 backports.strenum==1.2.8
for wheel in "$stage"/whl/*.whl; do (cd "$stage/site" && unzip -q -o "$wheel"); done
rm -rf "$stage/site/ai_edge_litert/vendors" "$stage/site/ai_edge_litert/tools/apply_plugin_main"
tar -C "$stage/site" -cf - . | xz -T2 -6 > "$dev/litert.tar.xz"
apt_options=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64)
(cd "$dev/debs" && apt-get "${apt_options[@]}" download -q libvulkan1 libglvnd0 libgl1 libglx0 libegl1 \
  libgles2 libopengl0 libx11-6 libx11-xcb1 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libxext6 \
  wrk libluajit-5.1-2 libluajit-5.1-common >/dev/null)
for deb in "$dev"/debs/*%3a*; do mv "$deb" "${deb//%3a/_}"; done  # epochs: names in plain letters
du -sh "$dev"/nr.tar.xz "$dev"/litert.tar.xz "$dev/debs"
