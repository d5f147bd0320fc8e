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
#
# Pinned by upstream version: the Debian revision may move with security updates (Debian
# serves only the current one), the upstream version may not. Idempotent.
set -euo pipefail

packages=("libjpeg62-turbo-dev:2.1." "libpng-dev:1.6." "zlib1g-dev:1.2." "libssl-dev:3.0." "libwebp-dev:1.2."
  "libgif-dev:5.2." "libtiff-dev:4.5." "libheif-dev:1.19.")
# From bookworm-backports, with the decoder plugins libheif 1.19 loads (HEVC, AV1).
backports=(libheif-dev libheif1 libheif-plugin-libde265 libheif-plugin-dav1d)

installed_version() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | awk '$3 == "installed" {print $4}'; }

missing=()
for entry in "${packages[@]}"; do
  name=${entry%%:*}
  want=${entry#*:}
  version=$(installed_version "$name")
  [[ -n "$version" && "${version#*:}" == "$want"* ]] || missing+=("$name")
done

if ((${#missing[@]})); then
  echo "Installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-system-packages: adding Debian's bookworm-backports (for libheif 1.19)"
    printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
      'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
      "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  plain=()
  for name in "${missing[@]}"; do [[ " ${backports[*]} " == *" $name "* ]] || plain+=("$name"); done
  ((${#plain[@]} == 0)) || "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${plain[@]}"
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends -t bookworm-backports "${backports[@]}"
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
present=()
for entry in "${packages[@]}"; do present+=("${entry%%:*} $(installed_version "${entry%%:*}")"); done
(IFS=,; echo "Debian packages present: ${present[*]}" | sed 's/,/, /g')
