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
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql ||
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql; }; } >&2
  bin=$(find_bin)
fi
if "$bin/pg_isready" -h 127.0.0.1 -p "$port" -q; then
  echo "$url"
  exit 0
fi
# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
run() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
mkdir -p "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres "$dir"
if [ ! -f "$dir/data/PG_VERSION" ]; then
  run "'$bin/initdb' -D '$dir/data' -A trust -U postgres --no-sync" >&2
fi
run "'$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -o \"-p $port -k $dir -c listen_addresses=127.0.0.1\" start" >&2
echo "$url"
