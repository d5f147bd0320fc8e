#!/usr/bin/env bash
# The Debian package on a clean Debian: builds netrunner_<version>_amd64.deb from the debug build
# (as `make package CONFIG=debug` does: a static relink of make test's objects, gzip -1), then, in
# a clean Debian bookworm root (mmdebstrap --variant=minbase from deb.debian.org: no Swift, no
# Python), in a chroot with /proc and /dev:
#
#   apt-get install -t bookworm-backports ./netrunner_*.deb
#                                       (its Depends resolved by apt from the mirror, libheif 1.19
#                                        from bookworm-backports; without
#                                        Recommends, so that ffmpeg's hundred packages are not
#                                        downloaded on every run)
#   ldd: no library of the toolchain, none missing; no /opt/swift in the root
#   netrunner --version; netrunner classify coffee.jpg -> espresso (the embedded model, the
#   LiteRT runtime found in /usr/lib/netrunner without LD_LIBRARY_PATH)
#   from /tmp: pose and segment with the installed models by id (/usr/share/netrunner/models),
#   a models folder set in ~/.config/netrunner/config.json, NETRUNNER_MODELS over it
#   the `make install` layout (build-package.sh --install /opt/netrunner): its netrunner finds
#   its own runtime and models under /opt/netrunner, nothing of the clone or the toolchain
#   the units, as installed: MemoryMax=, MemoryHigh= (below it), TasksMax=,
#   SWIFT_BACKTRACE=enable=no, ProtectSystem=strict, each its own User= and ReadWritePaths=;
#   systemd-analyze verify (the root's, else this machine's on copies, else a SKIP line)
#   the users apart: serve's netrunner (/var/lib/netrunner), the hub's netrunner-hub
#   (/var/lib/netrunner-hub), neither in the other's group; the hub's admin key 0640
#   root:netrunner-hub, serve's keys 0640 root:netrunner
#   netrunner-net serve, as the system user netrunner with serve.conf's flags (--port 0): a
#   classify over HTTP from the host answers espresso
#   the upgrade from the shared user: a hub run as netrunner in /var/lib/netrunner/hub (as the
#   previous package's unit did) makes a key, postinst configure moves its state to
#   /var/lib/netrunner-hub/data for netrunner-hub and hands it the admin key
#   netrunner-net hub serve, as netrunner-hub with hub.conf's flags (its admin key read from the
#   0640 file the package made), on the moved state: /v1/health answers, the admin key is
#   accepted, the key made before the upgrade is there
#   the separation: netrunner cannot write (nor list) the hub's state or read its key,
#   netrunner-hub cannot write serve's state or read serve's keys; each can write its own
#   apt-get remove keeps /var/lib/netrunner, /var/lib/netrunner-hub and the keys; purge deletes
#   them (both users stay)
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
  # shellcheck source=lib/apt.sh
  source "$root/scripts/lib/apt.sh"
  apt_install mmdebstrap || fail "apt-get could not install mmdebstrap"
fi
mirror=http://deb.debian.org/debian
options=(--quiet --variant=minbase --mode=root --format=tar --skip=cleanup/apt/lists)
# bookworm-backports as a user adds it (docs/install.md): the package's libheif (1.19) comes from there.
mirrors=("deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $mirror bookworm-backports main")
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
  # Everything below runs whatever fails (set -e would end the trap at a kill of a process gone).
  set +e
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
# As a unit runs its command: its system user and group, its state folder as HOME, its cache,
# no Swift backtracer (the units' Environment= lines), UMask=0027. unit_like USER STATE sets
# the array runner, run in a subshell that execs it (so that a server's $! is the server itself,
# which kill stops, not a shell above it).
unit_like() {
  runner=(env -i PATH=/usr/bin:/bin HOME="$2" NETRUNNER_CACHE_DIR="$2/cache" SWIFT_BACKTRACE=enable=no LANG=C.UTF-8
    "$chroot_tool" "$chroot_dir" setpriv --reuid="$1" --regid="$1" --init-groups)
}
as_user() {
  local -a runner
  unit_like "$1" "$2"
  shift 2
  (umask 0027 && exec "${runner[@]}" "$@")
}
serve_state=/var/lib/netrunner
hub_state=/var/lib/netrunner-hub
as_serve() { as_user netrunner "$serve_state" "$@"; }
as_hub() { as_user netrunner-hub "$hub_state" "$@"; }

# 4. apt installs it, resolving its Depends from the mirror.
cp "$deb" "$chroot_dir/tmp/"
installing=$(date +%s.%N)
inside apt-get update -q >"$chroot_dir/tmp/apt-update.log" 2>&1 || { cat "$chroot_dir/tmp/apt-update.log" >&2; fail "apt-get update failed in the clean root"; }
updated=$(since "$installing")
installing=$(date +%s.%N)
inside apt-get install -y -q --no-install-recommends -t bookworm-backports "/tmp/$(basename "$deb")" >"$chroot_dir/tmp/apt-install.log" 2>&1 \
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
# Version 0.2.0+g62e46ba is what --version prints as 0.2.0 (62e46ba); 0.2.0 alone, 0.2.0 (unknown).
expected="${version%%+g*} ($([[ $version == *+g* ]] && echo "${version##*+g}" || echo unknown))"
got=$(inside netrunner --version)
[[ "$got" == "$expected" ]] || fail "netrunner --version printed '$got', expected $expected (the package's Version $version)"
for file in /usr/share/man/man1/netrunner.1.gz /usr/share/man/man1/netrunner-net.1.gz \
  /usr/share/bash-completion/completions/netrunner /usr/share/zsh/vendor-completions/_netrunner \
  /usr/share/fish/vendor_completions.d/netrunner.fish \
  /usr/share/doc/netrunner/copyright /usr/share/doc/netrunner/LICENSE.LiteRT \
  /lib/systemd/system/netrunner-serve.service /lib/systemd/system/netrunner-hub.service \
  /etc/netrunner/serve.conf /etc/netrunner/hub.conf; do
  [[ -s "$chroot_dir$file" ]] || fail "$file is missing or empty"
done

# The units, as installed: bounds, no backtracer, hardening, and each its own user and state.
unit_value() { sed -nE "s/^$2=(.*)$/\1/p" "$chroot_dir/lib/systemd/system/$1" | tail -1; }
for spec in netrunner-serve.service:netrunner:/var/lib/netrunner netrunner-hub.service:netrunner-hub:/var/lib/netrunner-hub; do
  IFS=: read -r unit user state <<<"$spec"
  for setting in "User=$user" "Group=$user" "StateDirectory=${state#/var/lib/}" "ReadWritePaths=$state" \
    "WorkingDirectory=$state" "Environment=HOME=$state NETRUNNER_CACHE_DIR=$state/cache" \
    "Environment=SWIFT_BACKTRACE=enable=no" ProtectSystem=strict NoNewPrivileges=yes PrivateTmp=yes \
    PrivateDevices=yes ProtectHome=yes CapabilityBoundingSet=; do
    grep -qxF "$setting" "$chroot_dir/lib/systemd/system/$unit" || fail "$unit has no line $setting"
  done
  for setting in MemoryHigh MemoryMax TasksMax; do
    [[ "$(unit_value "$unit" "$setting")" =~ ^[0-9]+[KMG]?$ ]] || fail "$unit has no $setting= bound (a number)"
  done
  [[ $(numfmt --from=iec "$(unit_value "$unit" MemoryHigh)") -lt $(numfmt --from=iec "$(unit_value "$unit" MemoryMax)") ]] \
    || fail "$unit: MemoryHigh= is not below MemoryMax="
  [[ $(grep -c '^ReadWritePaths=' "$chroot_dir/lib/systemd/system/$unit") -eq 1 ]] || fail "$unit may write more than $state"
done
grep -q '^InaccessiblePaths=.*/var/lib/netrunner-hub' "$chroot_dir/lib/systemd/system/netrunner-serve.service" \
  || fail "netrunner-serve.service does not hide /var/lib/netrunner-hub"
grep -qE '^InaccessiblePaths=.*/var/lib/netrunner( |$)' "$chroot_dir/lib/systemd/system/netrunner-hub.service" \
  || fail "netrunner-hub.service does not hide /var/lib/netrunner"
bounds=$(for unit in netrunner-serve.service netrunner-hub.service; do
  printf '%s MemoryHigh=%s MemoryMax=%s TasksMax=%s; ' "${unit%.service}" "$(unit_value "$unit" MemoryHigh)" \
    "$(unit_value "$unit" MemoryMax)" "$(unit_value "$unit" TasksMax)"
done)
# systemd-analyze verify exits 0 on unknown or invalid settings (it only warns): any line it
# prints about the units fails the check.
units=(/lib/systemd/system/netrunner-serve.service /lib/systemd/system/netrunner-hub.service)
if inside sh -c 'command -v systemd-analyze' >/dev/null 2>&1; then
  verified=$(inside systemd-analyze verify --man=no "${units[@]}" 2>&1) || { echo "$verified" >&2; fail "systemd-analyze verify (in the root) failed"; }
  verifier="the root's systemd-analyze verify"
elif command -v systemd-analyze >/dev/null; then
  # The root (minbase) has no systemd: this machine's, on copies whose ExecStart names the
  # root's binary (verify checks that it is executable).
  mkdir -p "$chroot_dir/tmp/units"
  for unit in "${units[@]}"; do
    sed "s|^ExecStart=/usr/bin/|ExecStart=$chroot_dir/usr/bin/|" "$chroot_dir$unit" >"$chroot_dir/tmp/units/$(basename "$unit")"
  done
  verified=$(systemd-analyze verify --man=no "$chroot_dir"/tmp/units/*.service 2>&1) || { echo "$verified" >&2; fail "systemd-analyze verify failed"; }
  verifier="this machine's systemd-analyze verify (the root has no systemd)"
else
  verified=""
  verifier=""
  say "SKIP systemd-analyze verify: neither the root nor this machine has systemd-analyze"
fi
if grep -E 'netrunner-(serve|hub)\.service' <<<"$verified" >&2; then
  fail "systemd-analyze verify warned about the units (above)"
fi
say "units: ${bounds%; }${verifier:+ (checked by $verifier)}"

# Two users, two state folders, neither in the other's group.
inside getent passwd netrunner >/dev/null || fail "no system user netrunner"
inside getent passwd netrunner-hub >/dev/null || fail "no system user netrunner-hub"
[[ "$(inside id -nG netrunner)" == netrunner ]] || fail "netrunner is in the groups $(inside id -nG netrunner), expected netrunner only"
[[ "$(inside id -nG netrunner-hub)" == netrunner-hub ]] || fail "netrunner-hub is in the groups $(inside id -nG netrunner-hub), expected netrunner-hub only"
expect_mode() {
  local got
  got=$(inside stat -c '%a %U:%G' "$1") || fail "$1 is missing"
  [[ "$got" == "$2" ]] || fail "$1 is $got, expected $2"
}
expect_mode /etc/netrunner/hub-admin.key "640 root:netrunner-hub"
for folder in /var/lib/netrunner /var/lib/netrunner/models /var/lib/netrunner/cache; do
  expect_mode "$folder" "750 netrunner:netrunner"
done
for folder in /var/lib/netrunner-hub /var/lib/netrunner-hub/data /var/lib/netrunner-hub/cache; do
  expect_mode "$folder" "750 netrunner-hub:netrunner-hub"
done
[[ ! -e "$chroot_dir/var/lib/netrunner/hub" ]] || fail "a new install made /var/lib/netrunner/hub"
# serve's keys as serve.conf says to make them.
inside install -m 0640 -o root -g netrunner /dev/null /etc/netrunner/serve.keys
echo "not-a-real-serve-key" >"$chroot_dir/etc/netrunner/serve.keys"

# 6. classify with the embedded model.
cp Tests/Fixtures/Photos/test/coffee.jpg "$chroot_dir/tmp/coffee.jpg"
classified=$(inside netrunner classify /tmp/coffee.jpg 2>&1) || { echo "$classified" >&2; fail "netrunner classify failed in the clean root"; }
grep -q espresso <<<"$classified" || { echo "$classified" >&2; fail "netrunner classify did not answer espresso"; }
say "netrunner classify coffee.jpg: $(grep -m1 espresso <<<"$classified" | tr -s ' ')"

# 6b. The installed models by id, from a folder that has no Models/ (as a new user runs them).
cp Tests/Fixtures/Pose/squat.png "$chroot_dir/tmp/squat.png"
cp Tests/Fixtures/Segmentation/bird_segmentation.png "$chroot_dir/tmp/bird.png"
posed=$(inside sh -c 'cd /tmp && netrunner pose --model movenet-single-pose-lightning-ptq --json squat.png' 2>&1) \
  || { echo "$posed" >&2; fail "netrunner pose --model movenet-single-pose-lightning-ptq failed from /tmp"; }
[[ $(grep -o '"name"' <<<"$posed" | wc -l) -ge 17 ]] || { echo "$posed" >&2; fail "pose by id answered no 17 keypoints"; }
segmented=$(inside sh -c 'cd /tmp && netrunner segment --model deeplabv3-mnv2-dm05-pascal-quant bird.png' 2>&1) \
  || { echo "$segmented" >&2; fail "netrunner segment --model deeplabv3-mnv2-dm05-pascal-quant failed from /tmp"; }
grep -q bird <<<"$segmented" || { echo "$segmented" >&2; fail "segment by id found no bird"; }
listed=$(inside sh -c 'cd /tmp && netrunner models') || fail "netrunner models failed from /tmp"
grep -q '/usr/share/netrunner/models/movenet_single_pose_lightning_ptq.tiobundle' <<<"$listed" \
  || { echo "$listed" >&2; fail "netrunner models does not list the installed MoveNet"; }
# A models folder of the user's, from the settings file, then from the environment over it (a
# model no installed bundle has the bytes of: a copy of one would be listed once, as the bundle).
inside mkdir -p /root/.config/netrunner /root/file-models /root/env-models
cp Models/mobilenet_v2_1.0_224_uint8_metadata.tflite "$chroot_dir/root/file-models/from-file.tflite"
cp Models/mobilenet_v2_1.0_224_uint8_metadata.tflite "$chroot_dir/root/env-models/from-env.tflite"
echo '{"models": "~/file-models"}' >"$chroot_dir/root/.config/netrunner/config.json"
listed=$(inside sh -c 'cd /tmp && netrunner models') || fail "netrunner models failed with a settings file"
grep -q '^from-file ' <<<"$listed" || { echo "$listed" >&2; fail "the settings file's models folder is not read"; }
listed=$(inside env NETRUNNER_MODELS=/root/env-models sh -c 'cd /tmp && netrunner models') || fail "netrunner models failed with NETRUNNER_MODELS"
grep -q '^from-env ' <<<"$listed" && ! grep -q '^from-file ' <<<"$listed" \
  || { echo "$listed" >&2; fail "NETRUNNER_MODELS does not win over the settings file"; }
echo '{"modles": "~/file-models"}' >"$chroot_dir/root/.config/netrunner/config.json"
if wrong=$(inside sh -c 'cd /tmp && netrunner models' 2>&1); then fail "a settings file with an unknown setting was accepted"; fi
grep -q 'did you mean models' <<<"$wrong" || { echo "$wrong" >&2; fail "the settings file's mistake is not named"; }
rm -rf "$chroot_dir/root/.config/netrunner" "$chroot_dir/root/file-models" "$chroot_dir/root/env-models"
say "from /tmp: pose and segment by the installed models' ids; the settings file and NETRUNNER_MODELS over it"

# 6c. make install's layout (the same files under a prefix): its own runtime and models.
if [[ -z "$given_deb" ]]; then
  scripts/build-package.sh --config debug --install "$chroot_dir/opt/netrunner" >/dev/null
  rm -rf "$chroot_dir/usr/share/netrunner/models.hidden"
  mv "$chroot_dir/usr/share/netrunner/models" "$chroot_dir/usr/share/netrunner/models.hidden"
  local_pose=$(inside sh -c 'cd /tmp && /opt/netrunner/bin/netrunner pose --model movenet-single-pose-lightning-ptq --json squat.png' 2>&1) \
    || { echo "$local_pose" >&2; fail "/opt/netrunner/bin/netrunner pose by id failed"; }
  answers() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read())["inference_results"], sort_keys=True))'; }
  [[ "$(answers <<<"$local_pose")" == "$(answers <<<"$posed")" ]] \
    || { echo "$posed" "$local_pose" >&2; fail "the make install copy answers otherwise than the package"; }
  inside ldd /opt/netrunner/bin/netrunner-net | grep -E 'not found|swift|/opt/swift' && fail "/opt/netrunner/bin/netrunner-net needs the toolchain"
  inside /opt/netrunner/bin/netrunner models | grep -q '/opt/netrunner/share/netrunner/models/movenet' \
    || fail "/opt/netrunner/bin/netrunner does not read /opt/netrunner/share/netrunner/models"
  mv "$chroot_dir/usr/share/netrunner/models.hidden" "$chroot_dir/usr/share/netrunner/models"
  say "make install's layout in /opt/netrunner: pose by id as the package answers, its own models and runtime"
fi

# Starts a server as the service would (as USER with STATE, its flags from the conffile,
# --port 0), in the background, and sets port to the port it listens on:
#   start_server LOG PATTERN USER STATE COMMAND...
# Called in this shell, never in $( ): its pid must reach pids (the cleanup and stop_servers
# stop them), and the server must be this shell's child (wait).
start_server() {
  local log=$1 pattern=$2 pid _
  local -a runner
  unit_like "$3" "$4"
  shift 4
  (umask 0027 && exec "${runner[@]}" "$@") >"$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  port=""
  for _ in $(seq 1 600); do
    port=$(grep -oE "$pattern" "$log" | grep -oE '[0-9]+$' | head -1 || true)
    [[ -n "$port" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$* exited before listening"; }
    sleep 0.1
  done
  [[ -n "$port" ]] || { cat "$log" >&2; fail "$* printed no port within 60 s"; }
}
conf_args() { sed -nE "s/^$1=\"(.*)\"$/\1/p" "$chroot_dir/etc/netrunner/$2" | sed -E 's/--port [0-9]+/--port 0/'; }

# 7. serve, with serve.conf's flags: a classify over HTTP from this machine.
read -ra serve_args <<<"$(conf_args SERVE_ARGS serve.conf)"
[[ ${#serve_args[@]} -gt 0 ]] || fail "serve.conf has no SERVE_ARGS"
start_server "$chroot_dir/tmp/serve.log" 'listening on http://127\.0\.0\.1:[0-9]+' netrunner "$serve_state" /usr/bin/netrunner-net serve "${serve_args[@]}"
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
# A JPEG, then a HEIC: decoded in serve's decoder processes (the package's libheif 1.19 from
# bookworm-backports, the installed netrunner-net as the child, under the unit's user).
for name in ("Tests/Fixtures/Photos/test/coffee.jpg", "Tests/Fixtures/Formats/heic_plain.heic"):
    with open(name, "rb") as photo:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/models/mobilenet-v2-1.0-224-uint8/classify", data=photo.read(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        print(response.read().decode())
PY
) || { cat "$chroot_dir/tmp/serve.log" >&2; fail "serve did not answer the classify"; }
grep -q espresso <<<"$answer" || { echo "$answer" >&2; fail "serve's classify did not answer espresso"; }
grep -q "academic gown" <<<"$answer" || { echo "$answer" >&2; fail "serve's classify of a HEIC did not answer academic gown"; }
grep -q "HEIC and AVIF decoded in child processes" "$chroot_dir/tmp/serve.log" \
  || { cat "$chroot_dir/tmp/serve.log" >&2; fail "serve did not say it decodes HEIC in child processes"; }
say "netrunner-net serve (user netrunner, serve.conf, port $port): classify over HTTP answers espresso, and academic gown for a HEIC decoded in a child process"

# Stops the servers (SIGTERM: they drain, then exit) and checks that none is left.
stop_servers() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    ! kill -0 "$pid" 2>/dev/null || fail "server $pid still runs after SIGTERM"
  done
  pids=()
}
stop_servers

# The hub's API from this machine: /v1/health, then `create NAME` makes a read key with the admin
# key; `check NAME` lists the keys with it (NAME among them) and sees a wrong key refused.
hub_client='
import json, sys, urllib.error, urllib.request
port, key, action, name = sys.argv[1:]
base = f"http://127.0.0.1:{port}"
with urllib.request.urlopen(f"{base}/v1/health", timeout=10) as response:
    assert response.status == 200, response.status
def keys(token, body=None):
    request = urllib.request.Request(f"{base}/v1/keys", data=body, method="POST" if body else "GET",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None
if action == "create":
    status, _ = keys(key, json.dumps({"name": name, "scope": "read"}).encode())
    assert status == 201, status
else:
    status, listed = keys(key)
    assert status == 200, status
    names = [entry["name"] for entry in listed["keys"]]
    assert name in names, names
    status, _ = keys("not-the-key")
    assert status in (401, 403), status
'
admin_key=$(head -1 "$chroot_dir/etc/netrunner/hub-admin.key")

# 8. The upgrade from the previous package, where the hub ran as netrunner (serve's user) with
# its state in /var/lib/netrunner/hub and the admin key was root:netrunner: that hub makes a
# key, then postinst configure (as an upgrade runs it) moves the state to the hub's own folder.
inside rm -rf /var/lib/netrunner-hub/data
inside chgrp netrunner /etc/netrunner/hub-admin.key
old_hub_args=(--data /var/lib/netrunner/hub --host 127.0.0.1 --port 0 --admin-key-file /etc/netrunner/hub-admin.key)
start_server "$chroot_dir/tmp/hub-old.log" 'listening on http://127\.0\.0\.1:[0-9]+' netrunner "$serve_state" /usr/bin/netrunner-net hub serve "${old_hub_args[@]}"
python3 -c "$hub_client" "$port" "$admin_key" create made-before-the-upgrade \
  || { cat "$chroot_dir/tmp/hub-old.log" >&2; fail "the hub run as the previous package ran it made no key"; }
stop_servers
[[ -f "$chroot_dir/var/lib/netrunner/hub/hub.sqlite" ]] || fail "the previous package's hub wrote no /var/lib/netrunner/hub/hub.sqlite"
moved=$(inside /var/lib/dpkg/info/netrunner.postinst configure "$version" 2>&1) || { echo "$moved" >&2; fail "postinst configure failed on the previous package's state"; }
grep -q "moved the hub's state" <<<"$moved" || { echo "$moved" >&2; fail "postinst did not say it moved the hub's state"; }
[[ ! -e "$chroot_dir/var/lib/netrunner/hub" ]] || fail "postinst left /var/lib/netrunner/hub"
[[ -f "$chroot_dir/var/lib/netrunner-hub/data/hub.sqlite" ]] || fail "postinst did not move hub.sqlite to /var/lib/netrunner-hub/data"
expect_mode /var/lib/netrunner-hub/data "750 netrunner-hub:netrunner-hub"
[[ "$(inside stat -c '%U:%G' /var/lib/netrunner-hub/data/hub.sqlite)" == netrunner-hub:netrunner-hub ]] \
  || fail "the moved hub.sqlite is not netrunner-hub's"
expect_mode /etc/netrunner/hub-admin.key "640 root:netrunner-hub"
left=$(inside find /var/lib/netrunner-hub ! -user netrunner-hub)
[[ -z "$left" ]] || fail "the moved state still holds files of another user: $left"
# A hub.conf edited under the previous package keeps its --data: postinst says what to change.
cp "$chroot_dir/etc/netrunner/hub.conf" "$chroot_dir/tmp/hub.conf.new"
printf 'HUB_ARGS="%s"\n' "${old_hub_args[*]}" >"$chroot_dir/etc/netrunner/hub.conf"
warned=$(inside /var/lib/dpkg/info/netrunner.postinst configure "$version" 2>&1) || { echo "$warned" >&2; fail "postinst configure failed with an old hub.conf"; }
grep -q 'still names --data /var/lib/netrunner/hub' <<<"$warned" || { echo "$warned" >&2; fail "postinst did not warn of hub.conf's old --data"; }
cp "$chroot_dir/tmp/hub.conf.new" "$chroot_dir/etc/netrunner/hub.conf"
say "upgrade: postinst moved the hub's state (user netrunner) to /var/lib/netrunner-hub/data (user netrunner-hub), gave it the admin key, warned of an old hub.conf"

# 9. The hub, as netrunner-hub with hub.conf's flags, on the moved state: health, the admin key
# from its 0640 file accepted, the key made before the upgrade still there.
read -ra hub_args <<<"$(conf_args HUB_ARGS hub.conf)"
[[ " ${hub_args[*]} " == *" --data /var/lib/netrunner-hub/data "* ]] || fail "hub.conf's --data is not /var/lib/netrunner-hub/data: ${hub_args[*]}"
start_server "$chroot_dir/tmp/hub.log" 'listening on http://127\.0\.0\.1:[0-9]+' netrunner-hub "$hub_state" /usr/bin/netrunner-net hub serve "${hub_args[@]}"
python3 -c "$hub_client" "$port" "$admin_key" check made-before-the-upgrade \
  || { cat "$chroot_dir/tmp/hub.log" >&2; fail "the hub did not answer /v1/health, refused its admin key, or lost the key made before the upgrade"; }
say "netrunner-net hub serve (user netrunner-hub, hub.conf, port $port): /v1/health answers, the admin key file's key is accepted, the moved state is its own"
stop_servers

# 10. The separation: each user writes its own state only, and reads only its own keys. A write
# the other user must not make fails with "Permission denied" (not for another reason).
expect_access() { # ok|denied, as_serve|as_hub, write|list|read, path
  local expect=$1 runner=$2 access=$3 path=$4 out status=0
  # shellcheck disable=SC2016 # the probes' $1 and $$ are the inner shell's
  case "$access" in
  write) out=$("$runner" sh -c 'f="$1/.write-probe-$$"; : >"$f" && rm -f "$f"' probe "$path" 2>&1) || status=$? ;;
  append) out=$("$runner" sh -c ': >>"$1"' probe "$path" 2>&1) || status=$? ;;
  list) out=$("$runner" ls "$path" 2>&1) || status=$? ;;
  read) out=$("$runner" head -c 1 "$path" 2>&1 >/dev/null) || status=$? ;;
  esac
  if [[ $expect == ok ]]; then
    [[ $status -eq 0 ]] || { echo "$out" >&2; fail "${runner#as_} cannot $access $path"; }
  else
    [[ $status -ne 0 ]] || fail "${runner#as_} can $access $path (the services' separation is broken)"
    [[ $out == *"Permission denied"* ]] || { echo "$out" >&2; fail "${runner#as_}: $access $path failed, but not for want of permission"; }
  fi
}
for folder in /var/lib/netrunner /var/lib/netrunner/models /var/lib/netrunner/cache; do
  expect_access ok as_serve write "$folder"
  expect_access denied as_hub write "$folder"
done
for folder in /var/lib/netrunner-hub /var/lib/netrunner-hub/data /var/lib/netrunner-hub/cache; do
  expect_access ok as_hub write "$folder"
  expect_access denied as_serve write "$folder"
done
expect_access ok as_hub append /var/lib/netrunner-hub/data/hub.sqlite
expect_access denied as_serve append /var/lib/netrunner-hub/data/hub.sqlite
expect_access denied as_serve list /var/lib/netrunner-hub
expect_access denied as_hub list /var/lib/netrunner
expect_access ok as_hub read /etc/netrunner/hub-admin.key
expect_access denied as_serve read /etc/netrunner/hub-admin.key
expect_access ok as_serve read /etc/netrunner/serve.keys
expect_access denied as_hub read /etc/netrunner/serve.keys
say "separation: netrunner writes /var/lib/netrunner only and reads serve.keys, netrunner-hub writes /var/lib/netrunner-hub only and reads hub-admin.key"

# 11. remove keeps the state and the keys; purge deletes them.
inside apt-get remove -y -q netrunner >"$chroot_dir/tmp/apt-remove.log" 2>&1 || { cat "$chroot_dir/tmp/apt-remove.log" >&2; fail "apt-get remove failed"; }
[[ -d "$chroot_dir/var/lib/netrunner/models" && -f "$chroot_dir/var/lib/netrunner-hub/data/hub.sqlite" && -f "$chroot_dir/etc/netrunner/hub-admin.key" \
  && -f "$chroot_dir/etc/netrunner/serve.keys" && -f "$chroot_dir/etc/netrunner/serve.conf" ]] \
  || fail "apt-get remove deleted the state, the keys or the configuration"
[[ ! -e "$chroot_dir/usr/bin/netrunner" ]] || fail "apt-get remove left /usr/bin/netrunner"
inside apt-get purge -y -q netrunner >"$chroot_dir/tmp/apt-purge.log" 2>&1 || { cat "$chroot_dir/tmp/apt-purge.log" >&2; fail "apt-get purge failed"; }
[[ ! -e "$chroot_dir/var/lib/netrunner" && ! -e "$chroot_dir/var/lib/netrunner-hub" && ! -e "$chroot_dir/etc/netrunner" ]] \
  || fail "apt-get purge left /var/lib/netrunner, /var/lib/netrunner-hub or /etc/netrunner"
for user in netrunner netrunner-hub; do
  inside getent passwd "$user" >/dev/null || fail "purge removed the system user $user (Debian keeps it)"
done
say "remove kept the state and keys, purge deleted them"

echo "PASS test-package: $(basename "$deb") $(du -h "$deb" | cut -f1), installed in ${install_time}s on a clean bookworm root of ${root_size}, $(since "$started")s in all"
