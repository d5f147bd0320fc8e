#!/usr/bin/env bash
# Installs the Debian packages NetRunner builds against, and checks their versions.
#
#   libjpeg62-turbo-dev  2.1.x   JPEG decode/encode (libjpeg-turbo, DCT-domain downscaling)
#   libpng-dev           1.6.x   PNG decode/encode
#   zlib1g-dev           1.2.x   DEFLATE for zipped model bundles
#   libssl-dev           3.0.x   SHA-256 (libcrypto's EVP digest) for model verdicts and digests
#   libwebp-dev          1.2.x   WebP decode (libwebp, libwebpdemux for animations)
#   libgif-dev           5.2.x   GIF decode (giflib)
#   libtiff-dev          4.5.x   TIFF decode (libtiff)
#   libheif-dev          1.19.x  HEIC and AVIF decode (libheif with its libde265 and dav1d plugins),
#                                from Debian's bookworm-backports (added to apt's sources when
#                                missing, as scripts/install-gpu-packages.sh does for Mesa):
#                                bookworm's 1.15 has no security limits (tiles, grid sizes, items)
#                                and no way to read a grid's own size before decoding it
#   libfaiss-dev         1.7.x   FAISS similarity indexes (`similar index --index-type`): a static
#                                C++ library (Sources/CFaiss is our C API over it), with OpenMP
#                                (libgomp, the toolchain's libgcc-12-dev) and BLAS/LAPACK below
#   libblas-dev          3.11.x  BLAS and LAPACK to link FAISS against (libblas.so, liblapack.so)
#   liblapack-dev        3.11.x
#   libopenblas0-pthread 0.3.x   OpenBLAS, which Debian's alternatives then make libblas.so.3 and
#                                liblapack.so.3 at run time: FAISS's exact search of 1,000 queries
#                                over 100,000 x 512 took 3.5 s with it, 31.6 s with reference BLAS
#
# Pinned by upstream version: the Debian revision may move with security updates (Debian
# serves only the current one), the upstream version may not. Idempotent.
set -euo pipefail

packages=("libjpeg62-turbo-dev:2.1." "libpng-dev:1.6." "zlib1g-dev:1.2." "libssl-dev:3.0." "libwebp-dev:1.2."
  "libgif-dev:5.2." "libtiff-dev:4.5." "libheif-dev:1.19." "libfaiss-dev:1.7." "libblas-dev:3.11."
  "liblapack-dev:3.11." "libopenblas0-pthread:0.3.")
# From bookworm-backports, with the decoder plugins libheif 1.19 loads (HEVC, AV1).
backports=(libheif-dev libheif1 libheif-plugin-libde265 libheif-plugin-dav1d)

# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

missing=()
for entry in "${packages[@]}"; do
  name=${entry%%:*}
  want=${entry#*:}
  version=$(installed_version "$name")
  [[ -n "$version" && "${version#*:}" == "$want"* ]] || missing+=("$name")
done

if ((${#missing[@]})); then
  echo "Installing Debian packages: ${missing[*]}"
  add_bookworm_backports
  plain=()
  for name in "${missing[@]}"; do [[ " ${backports[*]} " == *" $name "* ]] || plain+=("$name"); done
  ((${#plain[@]} == 0)) || apt_install "${plain[@]}"
  apt_install -t bookworm-backports "${backports[@]}"
fi

for entry in "${packages[@]}"; do
  name=${entry%%:*}
  want=${entry#*:}
  version=$(installed_version "$name")
  upstream=${version#*:}  # drop the epoch (libjpeg62-turbo uses 1:)
  if [[ "$upstream" != "$want"* ]]; then
    echo "install-system-packages: $name is $version; NetRunner is pinned to upstream ${want}x." >&2
    exit 1
  fi
done
# FAISS's speed is the BLAS libblas.so.3 resolves to: OpenBLAS unless an administrator chose another.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)
[[ "$blas" == */openblas* ]] ||
  echo "install-system-packages: libblas.so.3 is $blas, not OpenBLAS: FAISS's exact search runs about 9x slower" \
    "(update-alternatives --auto libblas.so.3-x86_64-linux-gnu)" >&2
present=()
for entry in "${packages[@]}"; do present+=("${entry%%:*} $(installed_version "${entry%%:*}")"); done
(IFS=,; echo "Debian packages present: ${present[*]}" | sed 's/,/, /g')
