#!/usr/bin/env bash
# A private PostgreSQL server for the hub's tests: Debian's postgresql (installed if missing), a
# cluster of its own in /tmp, listening on 127.0.0.1 only (port 55432 unless
# NETRUNNER_TEST_POSTGRES_PORT says otherwise), trust authentication for that loopback address.
# Started once, reused while it runs. Prints the URL the tests take (NETRUNNER_TEST_POSTGRES).
set -euo pipefail
port=${NETRUNNER_TEST_POSTGRES_PORT:-55432}
dir=/tmp/netrunner-test-postgres-$port
url="postgres://postgres@127.0.0.1:$port/postgres?tlsmode=disable"
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
bin=$(find_bin)
if [ -z "$bin" ]; then
  # shellcheck source=lib/apt.sh
  source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
  apt_install postgresql >&2
  bin=$(find_bin)
fi
# The databases earlier runs' tests made (hub_<uuid>) are dropped, so that the cluster stays
# small: after an unclean stop, recovery fsyncs every file of it before it answers.
drop_old() {
  "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qtAc \
    "select datname from pg_database where datname like 'hub\\_%'" postgres |
    while read -r name; do
      [ -n "$name" ] && "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "DROP DATABASE IF EXISTS \"$name\"" postgres
    done >&2
}
if "$bin/pg_isready" -h 127.0.0.1 -p "$port" -q; then
  drop_old
  echo "$url"
  exit 0
fi
# The server outlives this script: it must not keep what it inherited open. A CI run's lock
# (.ci/run's flock on fd 9) held by a server left running made every later CI run build from
# nothing ("another CI run holds ..."); so every descriptor past stderr is closed first.
for fd in $(ls /proc/$$/fd); do
  if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
done
# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
run() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
mkdir -p "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres "$dir"
if [ ! -f "$dir/data/PG_VERSION" ]; then
  run "'$bin/initdb' -D '$dir/data' -A trust -U postgres --no-sync" >&2
fi
# Up to 5 minutes: a cluster stopped uncleanly (a reboot) first recovers, and on a loaded
# machine that took 76 s once, past pg_ctl's default 60.
if ! run "'$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -t 300 -o \"-p $port -k $dir -c listen_addresses=127.0.0.1\" start" >&2; then
  echo "start-test-postgres: PostgreSQL did not start within 300 s; see $dir/log" >&2
  exit 1
fi
drop_old
echo "$url"
