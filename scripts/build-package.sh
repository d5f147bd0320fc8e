#!/usr/bin/env bash
# Builds the Debian package netrunner_<release>_amd64.deb (Version <release>+g<commit>) from a build SwiftPM has made
# (`make package` builds first, then runs this):
#
#   scripts/build-package.sh [--config release|debug] [--scratch-path .build] [--output DIR]
#                            [--compression xz|fast]
#   scripts/build-package.sh --install PREFIX [--config ...] [--scratch-path ...]
#
# --install PREFIX (`make install`) lays out the same files under PREFIX instead of packaging
# them: PREFIX/bin, PREFIX/lib/netrunner, PREFIX/share/netrunner/models, man pages and
# completions under PREFIX/share; no units, no /etc. Each file is replaced by a rename, so a
# running copy keeps running; the models folder is replaced whole. An installed copy needs
# nothing from the clone or the toolchain.
#
# - netrunner and netrunner-net linked again from the build's own object files with the Swift
#   runtime static (-static-stdlib, the link command SwiftPM wrote in <scratch>/<config>.yaml,
#   without its -rpath=$ORIGIN): `swift build --static-swift-stdlib` puts -static-stdlib on
#   every compile command too, so it recompiles everything (and the next plain build again),
#   where this link takes seconds to a minute. Then stripped; a release build's debug symbols
#   are kept beside the package (<output>/netrunner_<release>_amd64.debug/, with a
#   .gnu_debuglink in each binary). `ldd` must show no library of the toolchain.
# - The LiteRT runtime (libLiteRt.so, libLiteRtWebGpuAccelerator.so) from the pinned
#   ai-edge-litert wheel, checked by SHA-256 (scripts/install-runtime.sh --dest), in
#   /usr/lib/netrunner/, where Runtime.swift looks beside the executable's folder; its licence
#   in /usr/share/doc/netrunner/LICENSE.LiteRT, with a DEP-5 copyright file.
# - Depends: computed from the binaries and libraries by dpkg-shlibdeps, then checked: every
#   library a binary names (NEEDED, resolved by ldd) must belong to a declared package, or to one
#   that Provides a declared alternative (libblas.so.3 of OpenBLAS for "libblas3 | libblas.so.3",
#   FAISS's BLAS). Recommends: ffmpeg (streams), libopenblas0-pthread (FAISS's exact search 9x
#   faster than with reference BLAS).
#   Suggests: the Vulkan loader and Mesa's drivers (the GPU path).
# - deploy/debian/: the systemd units (checked with systemd-analyze verify when it is there),
#   /etc/netrunner/serve.conf and hub.conf (conffiles), postinst/prerm/postrm.
# - Man pages (ArgumentParser's generate-manual, from each command's --experimental-dump-help),
#   bash, zsh and fish completions (netrunner --generate-completion-script, which netrunner-net
#   writes for it: every command's flags, serve's, hub's and import's included).
# - The bundles of Models/bundles (MobileNetV2, BlazeFace, MoveNet, DeepLab, the MobileNet V1 embedder) in
#   /usr/share/netrunner/models, where `--model ID` finds them from any folder
#   (ModelCatalog.installedFolder), with Models/SOURCES.md as their provenance and licences.
#
# Built with dpkg-deb --root-owner-group (no debian/ source tree, no fakeroot: the tree is
# staged here from a SwiftPM build, which debhelper's dh_auto_build would only wrap).
# --compression fast (gzip -1, what make test's package uses) or xz (the release default).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
config=release
scratch=.build
output=$root
compression=xz
prefix=
while (($#)); do
  case "$1" in
  --install) prefix=$2; shift 2 ;;
  --config) config=$2; shift 2 ;;
  --scratch-path) scratch=$2; shift 2 ;;
  --output) output=$2; shift 2 ;;
  --compression) compression=$2; shift 2 ;;
  *) echo "usage: scripts/build-package.sh [--install PREFIX] [--config release|debug] [--scratch-path DIR] [--output DIR] [--compression xz|fast]" >&2; exit 2 ;;
  esac
done
scratch=$(realpath -m "$scratch")
output=$(realpath -m "$output")
[[ -z "$prefix" ]] || prefix=$(realpath -m "$prefix")
case "$config" in release | debug) ;; *) echo "build-package: --config is release or debug" >&2; exit 2 ;; esac
case "$compression" in xz) deb_compression=(-Zxz -z6) ;; fast) deb_compression=(-Zgzip -z1) ;; *) echo "build-package: --compression is xz or fast" >&2; exit 2 ;; esac
started=$(date +%s.%N)
since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - from }'; }
say() { echo "[build-package $(since "$started")s] $*"; }
fail() {
  echo "FAIL build-package: $*" >&2
  exit 1
}
for tool in dpkg-deb dpkg-shlibdeps objcopy objdump strip ldd python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install dpkg-dev binutils)"
done

triple=x86_64-unknown-linux-gnu
products="$scratch/$triple/$config"
manifest="$scratch/$config.yaml"
[[ -f "$manifest" && -x "$products/netrunner" && -x "$products/netrunner-net" ]] \
  || fail "no $config build of netrunner and netrunner-net in $scratch (make package CONFIG=$config builds them)"

# An install stages in a folder of its own (make test runs the README's `make install` and the
# package test at once), removed when done.
work="$scratch/package-$config"
if [[ -n "$prefix" ]]; then
  work="$scratch/install-$config-$$"
  trap 'rm -rf "$work"' EXIT
fi
rm -rf "$work"
stage="$work/stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib/netrunner" "$stage/usr/share/doc/netrunner" \
  "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/share/fish/vendor_completions.d" \
  "$stage/lib/systemd/system" "$stage/etc/netrunner" "$work/linked" "$work/man"

# 1. The static link: SwiftPM's own link command (its object list, its libraries), another output.
for product in netrunner netrunner-net; do
  python3 - "$manifest" "$product-$triple-$config.exe" "$work/linked/$product" <<'PY' >"$work/link-$product.args"
import json, sys
manifest, key, output = sys.argv[1:]
lines = open(manifest).read().splitlines()
start = lines.index(f'  "C.{key}":')
args = None
for line in lines[start + 1:start + 12]:
    if line.startswith("    args: "):
        args = json.loads(line[len("    args: "):])
        break
if args is None:
    sys.exit(f"no link command for {key} in {manifest}")
out = []
skip = False
for index, arg in enumerate(args):
    if skip:
        skip = False
        continue
    if arg == "-o":
        out += ["-o", output]
        skip = True
        continue
    # -Xlinker -rpath=$ORIGIN: a package's binaries look for nothing beside themselves.
    if arg == "-Xlinker" and index + 1 < len(args) and args[index + 1].startswith("-rpath"):
        skip = True
        continue
    out.append(arg)
if "-static-stdlib" not in out:
    out.insert(1, "-static-stdlib")
# Objects compiled without -static-stdlib name the shared FoundationEssentials in their autolink
# entries, not the static one's own dependencies: name them (a release link drops the parts that
# need them with --gc-sections, a debug link does not).
out += ["-lCoreFoundation", "-l_FoundationCollections", "-l_FoundationCShims", "-l_FoundationICU"]
print("\n".join(out))
PY
  mapfile -t link <"$work/link-$product.args"
  "${link[@]}" || fail "linking $product with -static-stdlib failed"
done
say "linked netrunner and netrunner-net with the Swift runtime static"

# No library of the toolchain, nothing unresolved.
for product in netrunner netrunner-net; do
  libraries=$(ldd "$work/linked/$product")
  if grep -E '/opt/swift|swift|libFoundation|libdispatch|libBlocksRuntime|not found' <<<"$libraries"; then
    fail "$product still needs the toolchain's libraries (above)"
  fi
done

# `--version` says the release and the commit (`0.2.0 (62e46ba)`; `unknown` for a build not made
# from a clone). The package's Version carries both, the commit as Debian's `+g<commit>` after
# the release (`0.2.0+g62e46ba`: dpkg -l then tells two builds of one release apart); the file is
# named by the release alone (netrunner_0.2.0_amd64.deb), as the guides name it.
printed=$("$work/linked/netrunner" --version)
[[ "$printed" =~ ^([0-9]+\.[0-9]+\.[0-9]+)\ \(([0-9a-f]{7,40}|unknown)\)$ ]] \
  || fail "netrunner --version printed '$printed', not RELEASE (COMMIT)"
release=${BASH_REMATCH[1]}
commit=${BASH_REMATCH[2]}
version=$release
[[ $commit == unknown ]] || version="$release+g$commit"
package="netrunner_${release}_amd64"

# 2. Stripped binaries (a release build's debug symbols beside the package).
for product in netrunner netrunner-net; do
  if [[ $config == release && -z "$prefix" ]]; then
    mkdir -p "$output/$package.debug"
    objcopy --only-keep-debug --compress-debug-sections=zlib "$work/linked/$product" "$output/$package.debug/$product.debug"
    strip --strip-unneeded -o "$stage/usr/bin/$product" "$work/linked/$product"
    objcopy --add-gnu-debuglink="$output/$package.debug/$product.debug" "$stage/usr/bin/$product"
  else
    strip --strip-unneeded -o "$stage/usr/bin/$product" "$work/linked/$product"
  fi
  chmod 0755 "$stage/usr/bin/$product"
done
say "stripped: netrunner $(du -h "$stage/usr/bin/netrunner" | cut -f1), netrunner-net $(du -h "$stage/usr/bin/netrunner-net" | cut -f1)"

# 3. The LiteRT runtime, pinned and checked, and its licence.
scripts/install-runtime.sh --dest "$stage/usr/lib/netrunner" >/dev/null
mv "$stage/usr/lib/netrunner/LICENSE" "$stage/usr/share/doc/netrunner/LICENSE.LiteRT"
chmod 0644 "$stage/usr/lib/netrunner/"*.so

# 4. Documentation, man pages, completions.
install -m 0644 deploy/debian/copyright deploy/debian/README.Debian "$stage/usr/share/doc/netrunner/"
manual_tool="$products/generate-manual"
[[ -x "$manual_tool" ]] || fail "no $manual_tool (make package builds ArgumentParser's generate-manual)"
# netrunner-net's commands are named `netrunner` (it runs as `netrunner serve`, git-style): its
# page is generated apart and installed as netrunner-net.1. The completions are netrunner's:
# `netrunner --generate-completion-script` runs netrunner-net's, which completes every command,
# serve, hub and import with their own flags (its NetRunnerCompletionCommand).
"$manual_tool" "$stage/usr/bin/netrunner" --date 2026-01-01 --output-directory "$work/man" >/dev/null
mkdir -p "$work/man-net"
"$manual_tool" "$stage/usr/bin/netrunner-net" --date 2026-01-01 --output-directory "$work/man-net" >/dev/null
mv "$work/man-net/netrunner.1" "$work/man/netrunner-net.1"
"$stage/usr/bin/netrunner" --generate-completion-script bash >"$stage/usr/share/bash-completion/completions/netrunner"
"$stage/usr/bin/netrunner" --generate-completion-script zsh >"$stage/usr/share/zsh/vendor-completions/_netrunner"
"$stage/usr/bin/netrunner" --generate-completion-script fish >"$stage/usr/share/fish/vendor_completions.d/netrunner.fish"
for page in "$work/man"/*.1; do
  gzip -9n <"$page" >"$stage/usr/share/man/man1/$(basename "$page").gz"
done
chmod 0644 "$stage/usr/share/man/man1/"* "$stage/usr/share/bash-completion/completions/"* "$stage/usr/share/zsh/vendor-completions/"* \
  "$stage/usr/share/fish/vendor_completions.d/"*

# 4b. The bundled models, found by id from any folder, and where they come from.
mkdir -p "$stage/usr/share/netrunner/models"
for bundle in Models/bundles/*.tiobundle; do
  cp -R "$bundle" "$stage/usr/share/netrunner/models/"
done
install -m 0644 Models/SOURCES.md "$stage/usr/share/doc/netrunner/MODELS.md"
find "$stage/usr/share/netrunner" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
say "models: $(ls "$stage/usr/share/netrunner/models" | wc -l) bundles, $(du -sh "$stage/usr/share/netrunner/models" | cut -f1)"

# make install: the tree under PREFIX, each file by a rename (a running netrunner keeps its
# inode), the models folder swapped whole; then done.
if [[ -n "$prefix" ]]; then
  mkdir -p "$prefix"
  (cd "$stage/usr" && find . -path ./share/netrunner/models -prune -o -type f -printf '%P\n') | while read -r file; do
    mkdir -p "$prefix/$(dirname "$file")"
    cp -p "$stage/usr/$file" "$prefix/$file.new.$$"
    mv -f "$prefix/$file.new.$$" "$prefix/$file"
  done
  mkdir -p "$prefix/share/netrunner"
  rm -rf "$prefix/share/netrunner/models.new.$$"
  cp -Rp "$stage/usr/share/netrunner/models" "$prefix/share/netrunner/models.new.$$"
  rm -rf "$prefix/share/netrunner/models.old.$$"
  [[ ! -e "$prefix/share/netrunner/models" ]] || mv "$prefix/share/netrunner/models" "$prefix/share/netrunner/models.old.$$"
  mv "$prefix/share/netrunner/models.new.$$" "$prefix/share/netrunner/models"
  rm -rf "$prefix/share/netrunner/models.old.$$"
  # No toolchain library, nothing unresolved, in what was installed.
  for product in netrunner netrunner-net; do
    if ldd "$prefix/bin/$product" | grep -E '/opt/swift|swift|libFoundation|libdispatch|not found'; then
      fail "$prefix/bin/$product needs libraries from the toolchain (above)"
    fi
  done
  say "installed under $prefix: bin/netrunner, bin/netrunner-net, lib/netrunner/, share/netrunner/models/, man pages, completions"
  exit 0
fi

# 5. The services, their configuration, the maintainer scripts.
install -m 0644 deploy/debian/netrunner-serve.service deploy/debian/netrunner-hub.service "$stage/lib/systemd/system/"
install -m 0644 deploy/debian/serve.conf deploy/debian/hub.conf "$stage/etc/netrunner/"
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$stage/DEBIAN/"
printf '%s\n' /etc/netrunner/serve.conf /etc/netrunner/hub.conf >"$stage/DEBIAN/conffiles"
if command -v systemd-analyze >/dev/null; then
  # Copies whose ExecStart names the staged binary (verify checks that it is executable); no
  # man page lookup (the pages are not installed on this machine).
  mkdir -p "$work/units"
  for unit in netrunner-serve.service netrunner-hub.service; do
    sed "s|^ExecStart=/usr/bin/|ExecStart=$stage/usr/bin/|" "deploy/debian/$unit" >"$work/units/$unit"
  done
  # verify exits 0 on unknown or invalid settings (it only warns): a line about the units fails.
  verified=$(systemd-analyze verify --man=no "$work/units/netrunner-serve.service" "$work/units/netrunner-hub.service" 2>&1) \
    || { echo "$verified" >&2; fail "systemd-analyze verify found problems in the units (above)"; }
  if grep -E 'netrunner-(serve|hub)\.service' <<<"$verified" >&2; then
    fail "systemd-analyze verify warned about the units (above)"
  fi
  say "units verified with systemd-analyze verify"
else
  say "systemd-analyze not found: the units were not verified (apt-get install systemd)"
fi

# 6. Depends, from the binaries, then checked: the package of every library a binary names
# (NEEDED, as ldd resolves it) must be declared.
mkdir -p "$work/shlibs/debian"
printf 'Source: netrunner\n\nPackage: netrunner\nArchitecture: amd64\n' >"$work/shlibs/debian/control"
elves=("$stage/usr/bin/netrunner" "$stage/usr/bin/netrunner-net" "$stage/usr/lib/netrunner/libLiteRt.so" "$stage/usr/lib/netrunner/libLiteRtWebGpuAccelerator.so")
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "${elves[@]}" 2>"$work/shlibdeps.log") \
  || { cat "$work/shlibdeps.log" >&2; fail "dpkg-shlibdeps failed"; }
shlibs=${shlibs#shlibs:Depends=}
depends="adduser, $shlibs"
# Every alternative of every entry ("libblas3 | libblas.so.3": both), without versions.
declared=$(tr ',|' '\n\n' <<<"$depends" | sed -E 's/^ *//; s/ .*//; /^$/d')
for elf in "${elves[@]}"; do
  # The libraries each file names itself (NEEDED): what they link in turn is their packages' own
  # Depends.
  resolved=$(ldd "$elf")
  for soname in $(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}'); do
    path=$(awk -v name="$soname" '$1 == name && $2 == "=>" {print $3} $1 ~ "/" name "$" {print $1}' <<<"$resolved" | head -1)
    [[ -n "$path" && -e "$path" ]] || fail "$(basename "$elf") needs $soname, which this machine does not resolve"
    owner=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1) || true
    [[ -n "$owner" ]] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
    [[ -n "$owner" ]] || fail "$(basename "$elf") links $path, which no Debian package owns"
    provides=$(dpkg-query -W -f='${Provides}' "$owner" 2>/dev/null | tr ',' '\n' | sed -E 's/^ *//; s/ .*//')
    grep -qx "$owner" <<<"$declared" || grep -qxF -f <(printf '%s\n' "$declared") <<<"$provides" || fail "$(basename "$elf") links $path of $owner, not in Depends: $depends"
  done
done
say "Depends: $depends"

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: netrunner
Version: $version
Architecture: amd64
Maintainer: NetRunner authors <netrunner@localhost>
Section: science
Priority: optional
Installed-Size: $installed_size
Depends: $depends
Recommends: ffmpeg, libopenblas0-pthread
Suggests: mesa-vulkan-drivers, libvulkan1
Description: LiteRT vision models on Linux: classify, detect, serve, hub
 netrunner runs TensorFlow Lite (LiteRT) vision models on photos, folders,
 videos and cameras: classification, detection, pose and segmentation, with
 models embedded in the binary. netrunner-net serves them over HTTP
 (netrunner-serve.service) and hosts a model hub (netrunner-hub.service).
 The LiteRT runtime comes from Google's ai-edge-litert 2.3.0 wheel.
EOF
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"

mkdir -p "$output"
deb="$output/$package.deb"
dpkg-deb --root-owner-group "${deb_compression[@]}" --build "$stage" "$deb" >/dev/null
say "built $deb: $(du -h "$deb" | cut -f1) ($compression), $((installed_size / 1024)) MiB installed"
