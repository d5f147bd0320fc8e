#!/usr/bin/env bash
# fetch_photos.sh - obtain the real photos and the ImageNet label list used by the test models.
#
# Sources (no internet needed beyond Debian's archive and PyPI):
#   * Debian bookworm package `darknet` (photos from darknet's data/ directory)
#   * Debian bookworm package `opencv-doc` (ONLY the ImageNet class list; see SOURCES.md for why
#     no OpenCV sample photo is used)
#   * PyPI `scikit-image==0.26.0` wheel (skimage/data/*.png|jpg, CC0 / public domain)
#   * PyPI `matplotlib==3.11.2` wheel (mpl-data/sample_data/grace_hopper.jpg, public domain)
# Every downloaded archive and every selected file is checked against a pinned sha256.
#
# Output (committed; a fresh clone never needs to run this):
#   Tests/Fixtures/Photos/test/*         photos used for reference outputs
#   Tests/Fixtures/Photos/calibration/*  photos used ONLY to calibrate the quantized models
#   Tests/Fixtures/Photos/SOURCES.md     provenance and licence of each photo
#   Models/imagenet_labels.txt           ImageNet-1k class names, 1000 lines, standard order
#
# Files over the 300 KB-per-file budget are re-encoded to JPEG (quality 92) with Pillow, large
# calibration photos also shrunk to 480 px on the short side; the rest are byte-for-byte copies.
#
# Usage: tools/models/fetch_photos.sh        (idempotent; downloads are cached in
#        tools/models/.cache, override with NETRUNNER_ASSET_CACHE; Python with Pillow is taken
#        from $PYTHON, default .venv-ref/bin/python)
# Needs: apt-get (Debian bookworm sources configured), dpkg-deb, sha256sum, a pip-capable Python.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${NETRUNNER_ASSET_CACHE:-$ROOT/tools/models/.cache}"
PY="${PYTHON:-$ROOT/.venv-ref/bin/python}"
PHOTOS="$ROOT/Tests/Fixtures/Photos"
MODELS="$ROOT/Models"

# Pinned archives ---------------------------------------------------------------------------
OPENCV_DOC_VERSION="4.6.0+dfsg-12"
OPENCV_DOC_DEB="opencv-doc_${OPENCV_DOC_VERSION}_all.deb"
OPENCV_DOC_SHA256="4b12681df35878207ac7097dc66184b2ae552e4bf4ddd2af04a0f03ed0b8682a"
DARKNET_VERSION="0.0.0+git20180914.61c9d02e-2+b4"
DARKNET_DEB="darknet_${DARKNET_VERSION}_amd64.deb"
DARKNET_SHA256="9ca14d36112d242a782bfed4104fa5adcd2ae8bc599ab610f42eb609ee125a01"
SKIMAGE_WHL="scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
SKIMAGE_SHA256="74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af"
MPL_WHL="matplotlib-3.11.2-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
MPL_SHA256="07d9b9fa60cd4c393692f50d0bb03123242ddf61c99bb0e95e75feb354e7c1a8"

log() { printf '[fetch_photos] %s\n' "$*" >&2; }

check_sha256() { # file expected
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [[ "$got" != "$2" ]]; then
        log "sha256 mismatch for $1: got $got, expected $2"
        exit 1
    fi
}

# apt-get download <pkg>=<version> into the cache, retrying once after `apt-get update`.
fetch_deb() { # package version filename sha256
    local pkg="$1" ver="$2" file="$3" sha="$4"
    if [[ ! -f "$CACHE/$file" ]]; then
        log "apt-get download $pkg=$ver"
        if ! (cd "$CACHE" && apt-get download "$pkg=$ver" >&2); then
            log "apt-get download failed; running apt-get update once and retrying"
            apt-get update >&2
            (cd "$CACHE" && apt-get download "$pkg=$ver" >&2)
        fi
    fi
    check_sha256 "$CACHE/$file" "$sha"
}

# pip download one pinned wheel (cp311 manylinux x86_64 whatever the host Python is).
fetch_wheel() { # requirement filename sha256
    local req="$1" file="$2" sha="$3"
    if [[ ! -f "$CACHE/$file" ]]; then
        log "pip download $req"
        "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
            --dest "$CACHE" "$req" >&2
    fi
    check_sha256 "$CACHE/$file" "$sha"
}

# Extract an archive once into $CACHE/x/<name>.
# extract_deb <deb> <name> [member ...]: whole package, or only the given ./paths.
extract_deb() {
    local deb="$1" d="$CACHE/x/$2"
    shift 2
    [[ -d "$d" ]] && return
    rm -rf "$d.tmp" && mkdir -p "$d.tmp"
    dpkg-deb --fsys-tarfile "$CACHE/$deb" | tar -x -C "$d.tmp" "$@"
    mv "$d.tmp" "$d"
}
extract_whl() { local d="$CACHE/x/$2"; [[ -d "$d" ]] || { mkdir -p "$d.tmp" && "$PY" -m zipfile -e "$CACHE/$1" "$d.tmp" && mv "$d.tmp" "$d"; }; }

mkdir -p "$CACHE/x"
fetch_deb opencv-doc "$OPENCV_DOC_VERSION" "$OPENCV_DOC_DEB" "$OPENCV_DOC_SHA256"
fetch_deb darknet "$DARKNET_VERSION" "$DARKNET_DEB" "$DARKNET_SHA256"
fetch_wheel scikit-image==0.26.0 "$SKIMAGE_WHL" "$SKIMAGE_SHA256"
fetch_wheel matplotlib==3.11.2 "$MPL_WHL" "$MPL_SHA256"
extract_deb "$OPENCV_DOC_DEB" opencv-doc ./usr/share/doc/opencv-doc/examples/data/dnn/classification_classes_ILSVRC2012.txt
extract_deb "$DARKNET_DEB" darknet
extract_whl "$SKIMAGE_WHL" skimage
extract_whl "$MPL_WHL" matplotlib

SK="$CACHE/x/skimage/skimage/data"
MPL="$CACHE/x/matplotlib/matplotlib/mpl-data/sample_data"
DK="$CACHE/x/darknet/usr/share/darknet/data"
OCV="$CACHE/x/opencv-doc/usr/share/doc/opencv-doc/examples/data"

# Selection: set  source-file  sha256-of-source  output-name ------------------------------------
# Test and calibration sets are disjoint by construction.
SELECTION=(
    # set        source                 sha256 of the source file                                        output            how
    "test        $SK/chelsea.png        596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb chelsea.png       copy"
    "test        $SK/coffee.png         cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7 coffee.jpg        jpeg"
    "test        $MPL/grace_hopper.jpg  a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130 grace_hopper.jpg  copy"
    "test        $DK/eagle.jpg          f95f57297fd51a6c5ddceb5ed6916fa759d1d65f402fee34c05b31a9608755c0 eagle.jpg         copy"
    "calibration $SK/astronaut.png      88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5 astronaut.jpg     jpeg"
    "calibration $SK/rocket.jpg         c2dd0de7c538df8d111e479619b129464d0269d0ae5fd18ca91d33a7fdfea95c rocket.jpg        copy"
    "calibration $SK/hubble_deep_field.jpg 3a19c5dd8a927a9334bb1229a6d63711b1c0c767fb27e2286e7c84a3e2c2f5f4 hubble_deep_field.jpg small"
    "calibration $SK/retina.jpg         38a07f36f27f095e818aea7b96d34202c05176d30253c66733f2e00379e9e0e6 retina.jpg        copy"
    "calibration $SK/camera.png         b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a camera.png        copy"
    "calibration $SK/coins.png          f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba coins.png         copy"
    "calibration $DK/dog.jpg            5a9522051c3cec2bbd2f6323fccba32e8fbf3ddcc2b3e2fd46b04c720bc6f866 dog.jpg           copy"
    "calibration $DK/horses.jpg         c8f0a677a1356569e2ce71d2fa88c1030c0ae57ecf5e14170e02d9a86a20dcb4 horses.jpg        copy"
    "calibration $DK/person.jpg         cdcbab947e46110fc2b77784ac54ddbbab2640f1e44cb5e91fc8984a9793a7d1 person.jpg        copy"
    "calibration $DK/giraffe.jpg        00dc48a9b2af8a1fe4c4b79319726591f1033c7e1150f21e7577a79f3b6659f1 giraffe.jpg       small"
    "calibration $DK/kite.jpg           87410f52f79cc256c3949b48a3548632c07c8e9943468ef8caa6250f6643be8e kite.jpg          small"
)

rm -rf "$PHOTOS/test" "$PHOTOS/calibration"
mkdir -p "$PHOTOS/test" "$PHOTOS/calibration" "$MODELS"
for entry in "${SELECTION[@]}"; do
    read -r set src sha out how <<<"$entry"
    check_sha256 "$src" "$sha"
    dst="$PHOTOS/$set/$out"
    case "$how" in
        copy) cp "$src" "$dst" ;;
        # jpeg: re-encode at full resolution (PNG over the size budget);
        # small: shrink so the shorter side is 480 px (Lanczos), then JPEG. Quality 92 both.
        # Deterministic for a given Pillow/libjpeg build.
        jpeg|small) "$PY" - "$src" "$dst" "$how" <<'PYEOF'
import sys
from PIL import Image
src, dst, how = sys.argv[1:4]
img = Image.open(src).convert("RGB")
if how == "small" and min(img.size) > 480:
    f = 480 / min(img.size)
    img = img.resize((round(img.width * f), round(img.height * f)), Image.LANCZOS)
img.save(dst, "JPEG", quality=92, optimize=False)
PYEOF
        ;;
        *) log "unknown mode $how"; exit 1 ;;
    esac
    log "$set/$out $(stat -c %s "$dst") bytes"
done

# ImageNet labels: a byte-for-byte copy.
check_sha256 "$OCV/dnn/classification_classes_ILSVRC2012.txt" \
    4eb3da435cf544e4a6f390f62c84cb9c9bb68cf8b14e97f8a063452382e5efd2
cp "$OCV/dnn/classification_classes_ILSVRC2012.txt" "$MODELS/imagenet_labels.txt"

# Provenance ----------------------------------------------------------------------------------
cat > "$PHOTOS/SOURCES.md" <<MDEOF
# Photos: provenance and licences

Produced by \`tools/models/fetch_photos.sh\` (do not edit by hand). Two disjoint sets:

- \`test/\`: photos whose model outputs are recorded in \`Tests/Fixtures/Reference/\`.
- \`calibration/\`: photos used **only** as the representative dataset that calibrates the
  quantized MobileNetV2 models (\`tools/models/make_mobilenet_v2.py\`). No photo is in both sets,
  so quantized accuracy on the test photos is not flattered by calibration.

| File | Package (version) | Path inside the package | Licence | Notes |
|---|---|---|---|---|
| test/chelsea.png | PyPI scikit-image 0.26.0 | skimage/data/chelsea.png | CC0 (photographer Stefan van der Walt, per skimage.data.chelsea docstring) | byte-for-byte copy |
| test/coffee.jpg | PyPI scikit-image 0.26.0 | skimage/data/coffee.png | CC0 (photographer Rachel Michetti, per skimage.data.coffee docstring) | re-encoded PNG -> JPEG q92 (original 467 KB) |
| test/grace_hopper.jpg | PyPI matplotlib 3.11.2 | matplotlib/mpl-data/sample_data/grace_hopper.jpg | Public domain (US Navy photo; JPEG comment: commons.wikimedia.org/wiki/File:Grace_Hopper.jpg) | byte-for-byte copy |
| test/eagle.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/eagle.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright, "Files: *", Joseph Redmon) | byte-for-byte copy |
| calibration/astronaut.jpg | PyPI scikit-image 0.26.0 | skimage/data/astronaut.png | Public domain (NASA photo of Eileen Collins, per skimage.data.astronaut docstring) | re-encoded PNG -> JPEG q92 (original 792 KB) |
| calibration/rocket.jpg | PyPI scikit-image 0.26.0 | skimage/data/rocket.jpg | Public domain (SpaceX launch photo, per skimage.data.rocket docstring) | byte-for-byte copy |
| calibration/hubble_deep_field.jpg | PyPI scikit-image 0.26.0 | skimage/data/hubble_deep_field.jpg | Public domain (NASA/Hubble, per skimage.data.hubble_deep_field docstring) | shrunk to 480 px short side, JPEG q92 (original 528 KB) |
| calibration/retina.jpg | PyPI scikit-image 0.26.0 | skimage/data/retina.jpg | CC0 1.0 (Mikael Häggström, Wikimedia Commons, per skimage.data.retina docstring) | byte-for-byte copy |
| calibration/camera.png | PyPI scikit-image 0.26.0 | skimage/data/camera.png | CC0 (photographer Lav Varshney, per skimage.data.camera docstring); greyscale | byte-for-byte copy |
| calibration/coins.png | PyPI scikit-image 0.26.0 | skimage/data/coins.png | No known copyright restrictions (Brooklyn Museum collection, per skimage.data.coins docstring); greyscale | byte-for-byte copy |
| calibration/dog.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/dog.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright) | byte-for-byte copy |
| calibration/horses.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/horses.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright) | byte-for-byte copy |
| calibration/person.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/person.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright) | byte-for-byte copy |
| calibration/giraffe.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/giraffe.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright) | shrunk from 500x500 to 480x480, JPEG q92 (original 383 KB) |
| calibration/kite.jpg | Debian darknet 0.0.0+git20180914.61c9d02e-2+b4 | /usr/share/darknet/data/kite.jpg | GPL-3.0+ or MIT or WTFPL (debian/copyright) | shrunk to 480 px short side, JPEG q92 (original 1.4 MB) |

On the darknet photos: Debian's copyright file puts every file of the package, these photos
included, under "GPL-3.0+ or MIT or WTFPL" (copyright 2018 Joseph Redmon); we use them under the
MIT/WTFPL options. The original photographers are not named anywhere in the package.

Why no OpenCV sample photos: \`opencv-doc\` 4.6.0+dfsg-12's debian/copyright covers
\`samples/data/*\` only through its catch-all "Files: *" stanza (Apache-2.0 AND BSD-3-Clause,
Intel/OpenCV contributors); it records no photographer or origin for the photos (Debian even
strips lena.jpg for licence reasons), so their real licence is unclear. Only the ImageNet class
list is taken from that package (see \`Models/SOURCES.md\`).
MDEOF

log "done: $(du -sb "$PHOTOS" | cut -f1) bytes in Tests/Fixtures/Photos"
