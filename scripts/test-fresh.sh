#!/usr/bin/env bash
# The README's two commands on a machine like a new user's (make test-fresh, run by .ci/run): a
# clean Debian bookworm root holding only what swift.org's instructions for Debian 12 install
# (binutils-gold gcc git libcurl4-openssl-dev libedit-dev libicu-dev libncurses-dev
# libpython3-dev libsqlite3-dev libstdc++-12-dev libxml2-dev pkg-config tzdata uuid-dev, with
# their Recommends, as `apt-get install -y` installs them) plus python3, python3-pip,
# python3-venv and make; this machine's Swift toolchain mounted read-only where it is installed
# here (/opt/swift); a fresh clone of the commit; then, in a chroot, as root (a container's
# user; the scripts use sudo otherwise), with nothing of this machine's environment:
#
#   make run                            whole: system packages, the LiteRT runtime, the release
#                                       build, classify, detect, evaluate; its answers checked
#                                       against the README's transcripts (coffee.jpg's top five,
#                                       the two portraits' faces, the sample bundle's accuracy)
#   make setup test-python gpu-packages the set-up part of make test: the same prerequisites
#                                       (test packages, the test venv, lavapipe)
#
# Nothing comes from this machine's installed packages: apt and pip install everything inside the
# root from Debian's mirror and PyPI. Three stand-ins for the network a user's machine has: the
# root trusts the certificate authority of this workplace's HTTPS proxy, where this machine has
# one; SwiftPM's packages come from this workplace's read-only copy of GitHub
# (/opt/swift-packages, through the same url.insteadOf lines as here: the root cannot reach
# github.com); and the .deb and wheel files apt and pip download are kept between runs in
# ${XDG_CACHE_HOME:-~/.cache}/netrunner/fresh-downloads (what a caching proxy would do; apt still
# checks each against the mirror's signed lists, and the set-up each pinned hash).
#
# The clean root is cached as a tarball beside test-package's (remade when older than 7 days or
# when its recipe changes), so CI pays for it once a week. Prints each step's time.
#
#   scripts/test-fresh.sh              the commit HEAD of this clone
#   scripts/test-fresh.sh --keep       leave the root in place afterwards (its path is printed)
#
# Needs root (mmdebstrap, chroot, mounts); prints SKIP and exits 0 without it. Everything it
# mounts is undone at the end, also when a step fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
started=$(date +%s.%N)
since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.0f", now - from }'; }
say() { echo "[test-fresh $(since "$started")s] $*"; }
fail() {
  echo "FAIL test-fresh: $*" >&2
  exit 1
}
keep=false
case "${1:-}" in
--keep) keep=true ;;
"") ;;
*) echo "usage: scripts/test-fresh.sh [--keep]" >&2; exit 2 ;;
esac

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP test-fresh: needs root, to make a clean Debian root with mmdebstrap and chroot into it (run it as root)."
  exit 0
fi
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
[[ -x "$toolchain/usr/bin/swift" ]] || fail "no Swift toolchain found from $(command -v swift)"

# 1. The clean root, cached.
if ! command -v mmdebstrap >/dev/null; then
  say "installing Debian's mmdebstrap"
  # shellcheck source=lib/apt.sh
  source "$root/scripts/lib/apt.sh"
  apt_install mmdebstrap || fail "apt-get could not install mmdebstrap"
fi
swift_org=(binutils-gold gcc git libcurl4-openssl-dev libedit-dev libicu-dev libncurses-dev libpython3-dev
  libsqlite3-dev libstdc++-12-dev libxml2-dev pkg-config tzdata uuid-dev)
user_tools=(python3 python3-pip python3-venv make)
mirror=http://deb.debian.org/debian
include=$(IFS=,; echo "${swift_org[*]},${user_tools[*]}")
options=(--quiet --variant=minbase --mode=root --format=tar --skip=cleanup/apt/lists
  '--aptopt=APT::Install-Recommends "true"' "--include=$include")
# Debian's bookworm as installed: no backports (the set-up adds them itself).
mirrors=("deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb http://security.debian.org/debian-security bookworm-security main")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/netrunner"
case "$cache" in /*) ;; *) cache="$HOME/.cache/netrunner" ;; esac
recipe_hash=$(printf '%s\n' "${options[@]}" bookworm "${mirrors[@]}" "$(mmdebstrap --version)" | sha256sum | cut -c1-12)
tarball="$cache/debian-bookworm-swift-user-$recipe_hash.tar"
mkdir -p "$cache"
if [[ -f "$tarball" && -z "$(find "$tarball" -mtime +6)" ]]; then
  say "clean root: cached $tarball ($(du -h "$tarball" | cut -f1), made $(date -r "$tarball" -u '+%Y-%m-%d %H:%M UTC'))"
else
  rm -f "$cache"/debian-bookworm-swift-user-*.tar "$cache"/debian-bookworm-swift-user-*.tar.partial
  made=$(date +%s.%N)
  mmdebstrap "${options[@]}" bookworm "$tarball.partial" "${mirrors[@]}" || fail "mmdebstrap could not make the clean root (deb.debian.org reachable?)"
  mv "$tarball.partial" "$tarball"
  say "clean root: made $tarball in $(since "$made")s ($(du -h "$tarball" | cut -f1))"
fi

# 2. The root, unpacked; the toolchain, the package copies and the download caches mounted;
# undone on exit (mounts first, then the folder).
# Roots an earlier run left (a CI run stopped while its cleanup was removing one) go first: those
# with nothing mounted and no process inside.
for stale in /var/tmp/netrunner-fresh.*; do
  [[ -d "$stale" ]] && ! grep -qF " $stale/" /proc/mounts || continue
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [[ "$(readlink "/proc/$pid/root" 2>/dev/null)" == "$stale" ]] && continue 2
  done
  rm -rf --one-file-system "$stale"
done
chroot_dir=$(mktemp -d /var/tmp/netrunner-fresh.XXXXXX)
mounts=()
bind() { # SOURCE TARGET [ro]
  mkdir -p "$chroot_dir$2"
  mount --bind "$1" "$chroot_dir$2"
  [[ "${3:-}" != ro ]] || mount -o remount,bind,ro "$chroot_dir$2"
  mounts=("$2" "${mounts[@]}")
}
cleanup() {
  local status=$?
  # Everything below runs whatever fails (set -e would end the trap at a kill of a process gone).
  set +e mount
  # Whatever the build left running inside (a stuck swift-build, a server) goes first.
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [[ "$(readlink "/proc/$pid/root" 2>/dev/null)" == "$chroot_dir" ]] && kill -9 "$pid" 2>/dev/null
  done
  for mount in "${mounts[@]}"; do
    if mountpoint -q "$chroot_dir$mount"; then umount "$chroot_dir$mount" || umount -l "$chroot_dir$mount" || true; fi
  done
  if $keep; then
    echo "test-fresh: the root is left in $chroot_dir (its mounts undone)"
  elif grep -qF " $chroot_dir/" /proc/mounts; then
    echo "test-fresh: $chroot_dir still has mounts; left in place" >&2
  else
    rm -rf --one-file-system "$chroot_dir"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
tar -C "$chroot_dir" -xf "$tarball"
root_size=$(du -sh --one-file-system "$chroot_dir" | cut -f1)
[[ ! -e "$chroot_dir$toolchain" && ! -e "$chroot_dir/usr/bin/swift" ]] || fail "the clean root holds a Swift toolchain"
for package in libjpeg62-turbo-dev libheif-dev libwebp-dev chromium ffmpeg; do
  [[ ! -e "$chroot_dir/var/lib/dpkg/info/$package.list" && ! -e "$chroot_dir/var/lib/dpkg/info/$package:amd64.list" ]] \
    || fail "the clean root already holds $package"
done
mount -t proc proc "$chroot_dir/proc" && mounts=(/proc "${mounts[@]}")
bind /dev /dev
bind /dev/pts /dev/pts
bind "$toolchain" "$toolchain" ro
# SwiftPM's packages: github.com read from this workplace's copies, as git here reads them.
if [[ -d /opt/swift-packages ]]; then
  bind /opt/swift-packages /opt/swift-packages ro
  { git config --get-regexp '^url\..*\.insteadof$' || true; } | while read -r key value; do
    git config --file "$chroot_dir/etc/gitconfig" --add "$key" "$value"
  done
fi
downloads="$cache/fresh-downloads"
mkdir -p "$downloads/apt" "$downloads/pip"
bind "$downloads/apt" /var/cache/apt/archives
bind "$downloads/pip" /root/.cache/pip
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
# The network as this machine reaches it: where HTTPS goes out through an inspecting proxy whose
# certificate authority this machine added (/usr/local/share/ca-certificates), the root trusts it
# too, for pip (whose own certifi bundle knows nothing of it) and for git and curl.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /etc/ssl/certs/ca-certificates.crt "$chroot_dir/etc/ssl/certs/egress-ca-bundle.crt"
  printf '[global]\ncert = /etc/ssl/certs/egress-ca-bundle.crt\n' >"$chroot_dir/etc/pip.conf"
fi
# Debian's own docker-clean hook would empty the apt cache after each install.
rm -f "$chroot_dir/etc/apt/apt.conf.d/docker-clean"
# dpkg unpacks without an fsync per file, as in Debian's official container images: in CI the
# root's installs run beside make test, and a fsync per file there made the tests' own small
# writes wait behind the journal (a run saw good requests wait 125 s).
echo force-unsafe-io >"$chroot_dir/etc/dpkg/dpkg.cfg.d/netrunner-unsafe-io"

# 3. A fresh clone of the commit.
commit=$(git rev-parse HEAD)
git clone --quiet --no-local --no-hardlinks --no-checkout "$root" "$chroot_dir/root/netrunner"
git -C "$chroot_dir/root/netrunner" checkout --quiet --detach "$commit"
say "root ready ($root_size before the set-up), clone of ${commit:0:7} in /root/netrunner"
# The clone's build folder is kept between runs, as CI keeps make test's: the dependencies'
# release products and checkouts are reused, every module of NetRunner is compiled afresh inside
# the root. The key holds the root's tarball, so once a week (and whenever Package.swift or the
# toolchain change) the root builds everything from nothing, resolving the packages too. Another
# run holding the folder, or NETRUNNER_FRESH_BUILD=cold, builds from nothing.
build_base="$cache/fresh-build"
build_key=$( (git show "$commit:Package.swift"; swift --version 2>&1; basename "$tarball"; date -r "$tarball" +%s) \
  | sha256sum | cut -c1-16)
mkdir -p "$build_base/$build_key"
exec 8>"$build_base/$build_key.lock"
if [[ "${NETRUNNER_FRESH_BUILD:-}" != cold ]] && flock -n 8; then
  find "$build_base" -mindepth 1 -maxdepth 1 ! -name "$build_key" ! -name "$build_key.lock" -exec rm -rf {} +
  # shellcheck source=lib/own-products.sh
  source "$root/scripts/lib/own-products.sh"
  remove_own_products "$chroot_dir/root/netrunner" release "$build_base/$build_key"
  if [[ -d "$build_base/$build_key/checkouts" ]]; then
    say "the dependencies' release build reused from $build_base/$build_key (NetRunner's own built afresh)"
  fi
  bind "$build_base/$build_key" /root/netrunner/.build
else
  say "building everything from nothing (no build folder kept)"
fi

# Inside: a login shell's PATH with the toolchain on it, as swift.org's instructions end.
chroot_tool=$(command -v chroot)
inside() {
  env -i PATH="$toolchain/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root \
    LANG=C.UTF-8 TERM=dumb "$chroot_tool" "$chroot_dir" bash -c "cd /root/netrunner && $1"
}
step() { # NAME COMMAND: run inside, its output in a log (printed whole on failure, its tail otherwise)
  local name=$1 log="$chroot_dir/root/$1.log" from status=0
  from=$(date +%s.%N)
  inside "$2" >"$log" 2>&1 || status=$?
  if ((status != 0)); then
    cat "$log" >&2
    fail "'$2' failed in the clean root ($status, after $(since "$from")s)"
  fi
  say "'$2' passed in $(since "$from")s"
}

# 4. The README's first command, whole; its answers as the README shows them.
step run "make run"
log="$chroot_dir/root/run.log"
# A clean release build prints no warning of this package's files (its output is in make run's).
warnings=$(grep -E '^/root/netrunner/[^:]*:[0-9]+:[0-9]+: warning: ' "$log" || true)
[[ -z "$warnings" ]] || { echo "$warnings" >&2; fail "make run's release build printed $(wc -l <<<"$warnings") warnings (above)"; }
transcript() { # the answer lines of the README's transcript of COMMAND (not its timing header)
  awk -v command="\$ netrunner $1" '
    $0 == command { inside = 1; next }
    inside && (/^\$ / || /^```/) { exit }
    inside && NR > 0 && !/\(decode / { print }' README.md
}
expected=$( (transcript "classify Tests/Fixtures/Photos/test/coffee.jpg"; transcript "detect Tests/Fixtures/Photos/faces/two_portraits.jpg") | sed 's/[[:space:]]*$//')
[[ $(wc -l <<<"$expected") -ge 7 ]] || fail "the README's classify and detect transcripts changed shape: $expected"
while IFS= read -r line; do
  grep -qF -- "$line" "$log" || { cat "$log" >&2; fail "make run did not print the README's '$line'"; }
done <<<"$expected"
accuracy=$(grep -oE 'mobilenet-v2-1\.0-224-uint8: 8/8 images, classification_accuracy [0-9.]+' README.md | head -1)
[[ -n "$accuracy" ]] || fail "the README's evaluate transcript changed shape"
grep -qF "$accuracy" "$log" || { cat "$log" >&2; fail "make run's evaluation did not print the README's '$accuracy'"; }
[[ -s "$chroot_dir/root/netrunner/out/evaluation/report.html" ]] || fail "make run wrote no out/evaluation/report.html"
annotated=$(find "$chroot_dir/root/netrunner/out/annotated" -type f | wc -l)
((annotated == 2)) || fail "make run annotated $annotated photos in out/annotated (the two it was given)"
say "make run answered as the README shows: coffee.jpg's top five, the two portraits' faces, '$accuracy'; $annotated annotated photos, the evaluation report"

# 5. The set-up part of the README's second command: make test's prerequisites.
step test-setup "make --no-print-directory setup test-python gpu-packages"
for tool in chromium chromedriver ffmpeg node .venv-test/bin/python; do
  inside "command -v $tool >/dev/null || [[ -x /usr/sbin/$tool || -x $tool ]]" || fail "make test's set-up left no $tool"
done
echo "PASS test-fresh: make run and make test's set-up on a clean Debian bookworm root (commit ${commit:0:7}), $(since "$started")s in all"
