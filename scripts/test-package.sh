#!/usr/bin/env bash
# The Debian package on a clean Debian: builds netrunner_<version>_amd64.deb from the debug build
# (as `make package CONFIG=debug` does: a static relink of make test's objects, gzip -1), then, in
# a clean Debian bookworm root (mmdebstrap --variant=minbase from deb.debian.org: no Swift, no
# Python), in a chroot with /proc and /dev:
#
#   apt-get install ./netrunner_*.deb   (its Depends resolved by apt from the mirror; without
#                                        Recommends, so that ffmpeg's hundred packages are not
#                                        downloaded on every run)
#   ldd: no library of the toolchain, none missing; no /opt/swift in the root
#   netrunner --version; netrunner classify coffee.jpg -> espresso (the embedded model, the
#   LiteRT runtime found in /usr/lib/netrunner without LD_LIBRARY_PATH)
#   netrunner-net serve, as the system user netrunner with serve.conf's flags (--port 0): a
#   classify over HTTP from the host answers espresso
#   netrunner-net hub serve, as netrunner with hub.conf's flags (its admin key read from the
#   0640 file the package made): /v1/health answers, and the admin key is accepted
#   apt-get remove keeps /var/lib/netrunner and the keys; purge deletes them
#
# The clean root is cached as a tarball in ${XDG_CACHE_HOME:-$HOME/.cache}/netrunner/ (about
# 1-2 minutes to make; remade when older than 7 days or when its recipe below changes), so CI
# pays for it once a week. Prints the package's size, the install time and the root's size.
#
#   scripts/test-package.sh              build the debug build's package, test it
#   scripts/test-package.sh --deb FILE   test a package already built (make package's release one)
#
# Needs root (chroot, mounts, mmdebstrap; apt-get installs mmdebstrap when missing); prints SKIP
# and exits 0 without it. Fails loudly on any error. Everything it mounts and starts is undone
# at the end, also when a check fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
started=$(date +%s.%N)
since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - from }'; }
say() { echo "[test-package $(since "$started")s] $*"; }
fail() {
  echo "FAIL test-package: $*" >&2
  exit 1
}

given_deb=""
if [[ "${1:-}" == "--deb" ]]; then
  [[ -f "${2:-}" ]] || { echo "usage: scripts/test-package.sh [--deb FILE]" >&2; exit 2; }
  given_deb=$(realpath "$2")
elif [[ $# -gt 0 ]]; then
  echo "usage: scripts/test-package.sh [--deb FILE]" >&2
  exit 2
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP test-package: needs root, to make a clean Debian root with mmdebstrap, chroot into it and install the package (run make test as root)."
  exit 0
fi
[[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] || fail "the package is built for Linux x86_64 only"
for tool in swift dpkg-deb python3 chroot mount umount; do
  command -v "$tool" >/dev/null || fail "$tool is missing"
done

# 1. The package, from the debug build make test has just made (or the one given).
if [[ -n "$given_deb" ]]; then
  deb=$given_deb
else
  swift build --product generate-manual >/dev/null || fail "building ArgumentParser's generate-manual failed"
  output="$root/.build/package-test"
  rm -rf "$output"
  scripts/build-package.sh --config debug --output "$output" --compression fast
  debs=("$output"/netrunner_*_amd64.deb)
  [[ ${#debs[@]} -eq 1 && -f "${debs[0]}" ]] || fail "build-package made no single package in $output"
  deb=${debs[0]}
fi
version=$(dpkg-deb --field "$deb" Version)
say "package $(basename "$deb"): $(du -h "$deb" | cut -f1)"

# 2. The clean root, cached.
if ! command -v mmdebstrap >/dev/null; then
  say "installing Debian's mmdebstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q mmdebstrap >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q mmdebstrap >/dev/null; }
fi
mirror=http://deb.debian.org/debian
options=(--quiet --variant=minbase --mode=root --format=tar --skip=cleanup/apt/lists)
mirrors=("deb $mirror bookworm main" "deb $mirror bookworm-updates main")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/netrunner"
case "$cache" in /*) ;; *) cache="$HOME/.cache/netrunner" ;; esac
recipe_hash=$(printf '%s\n' "${options[@]}" bookworm "${mirrors[@]}" "$(mmdebstrap --version)" | sha256sum | cut -c1-12)
tarball="$cache/debian-bookworm-minbase-$recipe_hash.tar"
mkdir -p "$cache"
if [[ -f "$tarball" && -z "$(find "$tarball" -mtime +6)" ]]; then
  say "clean root: cached $tarball ($(du -h "$tarball" | cut -f1), made $(date -r "$tarball" -u '+%Y-%m-%d %H:%M UTC'))"
else
  rm -f "$cache"/debian-bookworm-minbase-*.tar "$cache"/debian-bookworm-minbase-*.tar.partial
  made=$(date +%s.%N)
  mmdebstrap "${options[@]}" bookworm "$tarball.partial" "${mirrors[@]}" || fail "mmdebstrap could not make the clean root (deb.debian.org reachable?)"
  mv "$tarball.partial" "$tarball"
  say "clean root: made $tarball in $(since "$made")s ($(du -h "$tarball" | cut -f1))"
fi

# 3. The root, unpacked; undone on exit (servers stopped, mounts undone before anything is removed).
chroot_dir=$(mktemp -d /var/tmp/netrunner-package-test.XXXXXX)
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for mount in dev/pts dev proc; do
    if mountpoint -q "$chroot_dir/$mount"; then umount "$chroot_dir/$mount" || umount -l "$chroot_dir/$mount" || true; fi
  done
  if mountpoint -q "$chroot_dir/proc" || mountpoint -q "$chroot_dir/dev"; then
    echo "test-package: $chroot_dir still has mounts; left in place" >&2
  else
    rm -rf --one-file-system "$chroot_dir"
  fi
  exit "$status"
}
trap cleanup EXIT
tar -C "$chroot_dir" -xf "$tarball"
root_size=$(du -sh --one-file-system "$chroot_dir" | cut -f1)
[[ ! -e "$chroot_dir/opt/swift" && ! -e "$chroot_dir/usr/bin/swift" && ! -e "$chroot_dir/usr/bin/python3" ]] \
  || fail "the clean root holds Swift or Python"
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
# Nothing of this machine's environment inside (no LD_LIBRARY_PATH, no NETRUNNER_*).
chroot_tool=$(command -v chroot)
inside() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$chroot_tool" "$chroot_dir" "$@"; }
# As the service runs: the system user netrunner, its state folder, its cache.
as_service() {
  env -i PATH=/usr/bin:/bin HOME=/var/lib/netrunner NETRUNNER_CACHE_DIR=/var/lib/netrunner/cache LANG=C.UTF-8 \
    "$chroot_tool" "$chroot_dir" setpriv --reuid=netrunner --regid=netrunner --init-groups "$@"
}

# 4. apt installs it, resolving its Depends from the mirror.
cp "$deb" "$chroot_dir/tmp/"
installing=$(date +%s.%N)
inside apt-get update -q >"$chroot_dir/tmp/apt-update.log" 2>&1 || { cat "$chroot_dir/tmp/apt-update.log" >&2; fail "apt-get update failed in the clean root"; }
updated=$(since "$installing")
installing=$(date +%s.%N)
inside apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >"$chroot_dir/tmp/apt-install.log" 2>&1 \
  || { cat "$chroot_dir/tmp/apt-install.log" >&2; fail "apt-get install ./$(basename "$deb") failed in the clean root"; }
install_time=$(since "$installing")
pulled=$(grep -c '^Setting up ' "$chroot_dir/tmp/apt-install.log" || true)
say "installed in ${install_time}s (${pulled} packages set up; apt-get update ${updated}s before it)"

# 5. The binaries: nothing of the toolchain, nothing missing.
for binary in /usr/bin/netrunner /usr/bin/netrunner-net /usr/lib/netrunner/libLiteRt.so /usr/lib/netrunner/libLiteRtWebGpuAccelerator.so; do
  libraries=$(inside ldd "$binary") || fail "ldd $binary failed"
  if grep -E 'not found|swift|/opt/|libFoundation|libdispatch|libBlocksRuntime' <<<"$libraries"; then
    fail "$binary needs a library the clean root lacks or one of the toolchain (above)"
  fi
done
[[ ! -e "$chroot_dir/opt/swift" ]] || fail "/opt/swift appeared in the clean root"
got=$(inside netrunner --version)
[[ "$got" == "$version" ]] || fail "netrunner --version printed '$got', expected $version"
for file in /usr/share/man/man1/netrunner.1.gz /usr/share/man/man1/netrunner-net.1.gz \
  /usr/share/bash-completion/completions/netrunner /usr/share/zsh/vendor-completions/_netrunner \
  /usr/share/doc/netrunner/copyright /usr/share/doc/netrunner/LICENSE.LiteRT \
  /lib/systemd/system/netrunner-serve.service /lib/systemd/system/netrunner-hub.service \
  /etc/netrunner/serve.conf /etc/netrunner/hub.conf; do
  [[ -s "$chroot_dir$file" ]] || fail "$file is missing or empty"
done
inside getent passwd netrunner >/dev/null || fail "no system user netrunner"
key_mode=$(inside stat -c '%a %U:%G' /etc/netrunner/hub-admin.key)
[[ "$key_mode" == "640 root:netrunner" ]] || fail "/etc/netrunner/hub-admin.key is $key_mode, expected 640 root:netrunner"
state=$(inside stat -c '%a %U' /var/lib/netrunner)
[[ "$state" == "750 netrunner" ]] || fail "/var/lib/netrunner is $state, expected 750 netrunner"

# 6. classify with the embedded model.
cp Tests/Fixtures/Photos/test/coffee.jpg "$chroot_dir/tmp/coffee.jpg"
classified=$(inside netrunner classify /tmp/coffee.jpg 2>&1) || { echo "$classified" >&2; fail "netrunner classify failed in the clean root"; }
grep -q espresso <<<"$classified" || { echo "$classified" >&2; fail "netrunner classify did not answer espresso"; }
say "netrunner classify coffee.jpg: $(grep -m1 espresso <<<"$classified" | tr -s ' ')"

# Starts a server as the service would (its flags from the conffile, --port 0), in the
# background; prints the port it listens on.
start_server() {
  local log=$1 pattern=$2
  shift 2
  as_service "$@" >"$log" 2>&1 &
  pids+=($!)
  local pid=$! port="" _
  for _ in $(seq 1 600); do
    port=$(grep -oE "$pattern" "$log" | grep -oE '[0-9]+$' | head -1 || true)
    [[ -n "$port" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$* exited before listening"; }
    sleep 0.1
  done
  [[ -n "$port" ]] || { cat "$log" >&2; fail "$* printed no port within 60 s"; }
  echo "$port"
}
conf_args() { sed -nE "s/^$1=\"(.*)\"$/\1/p" "$chroot_dir/etc/netrunner/$2" | sed -E 's/--port [0-9]+/--port 0/'; }

# 7. serve, with serve.conf's flags: a classify over HTTP from this machine.
read -ra serve_args <<<"$(conf_args SERVE_ARGS serve.conf)"
[[ ${#serve_args[@]} -gt 0 ]] || fail "serve.conf has no SERVE_ARGS"
port=$(start_server "$chroot_dir/tmp/serve.log" 'listening on http://127\.0\.0\.1:[0-9]+' /usr/bin/netrunner-net serve "${serve_args[@]}")
answer=$(python3 - "$port" <<'PY'
import sys, time, urllib.request
port = sys.argv[1]
for _ in range(300):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=5) as response:
            if response.status == 200:
                break
    except OSError:
        pass
    time.sleep(0.2)
with open("Tests/Fixtures/Photos/test/coffee.jpg", "rb") as photo:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/models/mobilenet-v2-1.0-224-uint8/classify", data=photo.read(), method="POST")
with urllib.request.urlopen(request, timeout=30) as response:
    print(response.read().decode())
PY
) || { cat "$chroot_dir/tmp/serve.log" >&2; fail "serve did not answer the classify"; }
grep -q espresso <<<"$answer" || { echo "$answer" >&2; fail "serve's classify did not answer espresso"; }
say "netrunner-net serve (user netrunner, serve.conf, port $port): classify over HTTP answers espresso"

# 8. The hub, with hub.conf's flags: health, and the admin key from its 0640 file accepted.
read -ra hub_args <<<"$(conf_args HUB_ARGS hub.conf)"
port=$(start_server "$chroot_dir/tmp/hub.log" 'listening on http://127\.0\.0\.1:[0-9]+' /usr/bin/netrunner-net hub serve "${hub_args[@]}")
admin_key=$(head -1 "$chroot_dir/etc/netrunner/hub-admin.key")
python3 - "$port" "$admin_key" <<'PY' || { cat "$chroot_dir/tmp/hub.log" >&2; fail "the hub did not answer /v1/health, or refused its admin key"; }
import sys, urllib.error, urllib.request
port, key = sys.argv[1:]
with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=10) as response:
    assert response.status == 200, response.status
# A key-only route: the admin key is accepted, a wrong one is not.
def keys(token):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/keys", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
assert keys(key) == 200, keys(key)
assert keys("not-the-key") in (401, 403), keys("not-the-key")
PY
[[ -f "$chroot_dir/var/lib/netrunner/hub/hub.sqlite" || -n "$(ls -A "$chroot_dir/var/lib/netrunner/hub")" ]] \
  || fail "the hub wrote nothing in /var/lib/netrunner/hub"
say "netrunner-net hub serve (user netrunner, hub.conf, port $port): /v1/health answers, the admin key file's key is accepted"
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
pids=()

# 9. remove keeps the state and the keys; purge deletes them.
inside apt-get remove -y -q netrunner >"$chroot_dir/tmp/apt-remove.log" 2>&1 || { cat "$chroot_dir/tmp/apt-remove.log" >&2; fail "apt-get remove failed"; }
[[ -d "$chroot_dir/var/lib/netrunner/hub" && -f "$chroot_dir/etc/netrunner/hub-admin.key" && -f "$chroot_dir/etc/netrunner/serve.conf" ]] \
  || fail "apt-get remove deleted the state, the keys or the configuration"
[[ ! -e "$chroot_dir/usr/bin/netrunner" ]] || fail "apt-get remove left /usr/bin/netrunner"
inside apt-get purge -y -q netrunner >"$chroot_dir/tmp/apt-purge.log" 2>&1 || { cat "$chroot_dir/tmp/apt-purge.log" >&2; fail "apt-get purge failed"; }
[[ ! -e "$chroot_dir/var/lib/netrunner" && ! -e "$chroot_dir/etc/netrunner" ]] || fail "apt-get purge left /var/lib/netrunner or /etc/netrunner"
inside getent passwd netrunner >/dev/null || fail "purge removed the system user (Debian keeps it)"
say "remove kept the state and keys, purge deleted them"

echo "PASS test-package: $(basename "$deb") $(du -h "$deb" | cut -f1), installed in ${install_time}s on a clean bookworm root of ${root_size}, $(since "$started")s in all"
