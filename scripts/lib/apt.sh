# Debian package helpers shared by every script that installs something (sourced).
#
#   installed_version NAME    the installed version of NAME, or nothing: also for a package dpkg
#                             has never heard of (dpkg-query exits 1 for one, which under
#                             `set -euo pipefail` ended the caller before it installed anything)
#   apt_install [OPTION ...] PACKAGE ...
#                             apt-get install, non-interactive, without Recommends, as root or
#                             through sudo; apt-get update first when apt has no lists yet or
#                             the install fails for want of them; waits up to 5 minutes for
#                             another apt (make test-fresh and make test-package may install
#                             mmdebstrap at once, test-slurm and test-cluster slurm-wlm): the
#                             project's apt-get calls take turns on a lock of their own, since
#                             DPkg::Lock::Timeout does not cover update's lists lock (a second
#                             update failed at once). Prints one line per package set up; apt's
#                             whole output goes to a log, shown only on failure.
#   add_bookworm_backports    Debian's bookworm-backports in apt's sources, when missing

# The command prefix that makes a command root: nothing as root, else sudo.
apt_updated=false
apt_sudo=()
[[ $(id -u) -eq 0 ]] || apt_sudo=(sudo)

installed_version() {
  { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null || true; } | awk '$3 == "installed" {print $4}'
}

add_bookworm_backports() {
  grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  echo "adding Debian's bookworm-backports to apt's sources"
  printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
    'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
    "${apt_sudo[@]}" tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
  apt_updated=false # new sources need new lists
}

# apt-get, its output in a log (shown and kept when the command fails), one line per package set up.
apt_quiet() {
  local log status=0
  log=$(mktemp "${TMPDIR:-/tmp}/netrunner-apt.XXXXXX.log")
  "${apt_sudo[@]}" flock -w 300 /var/cache/apt/netrunner-apt.lock env DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    apt-get -y -o Dpkg::Use-Pty=0 -o APT::Color=0 -o Dpkg::Progress-Fancy=0 -o DPkg::Lock::Timeout=300 "$@" >"$log" 2>&1 || status=$?
  if ((status == 0)); then
    sed -nE 's/^Setting up ([^ ]+) \(([^)]+)\).*/  set up \1 \2/p' "$log"
    rm -f "$log"
  elif [[ ${apt_failure_shown:-true} == false ]]; then
    rm -f "$log"
  else
    echo "apt-get $* failed ($status); its output:" >&2
    cat "$log" >&2
    echo "(kept in $log)" >&2
  fi
  return "$status"
}

apt_update() {
  $apt_updated && return 0
  echo "apt-get update"
  apt_quiet update
  apt_updated=true
}

apt_install() {
  # No lists at all (a fresh root, a slim image): update first.
  if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then apt_update; fi
  echo "apt-get install $*"
  if ! $apt_updated; then
    # Lists too old for the mirror (a 404), or a package only newer lists know: the first try's
    # failure is not shown, and the install runs once more after an update.
    apt_failure_shown=false apt_quiet install --no-install-recommends "$@" && return 0
    apt_update
  fi
  apt_quiet install --no-install-recommends "$@"
}
