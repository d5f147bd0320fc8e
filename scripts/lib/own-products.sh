# shellcheck shell=bash
# Sourced by .ci/run and scripts/test-fresh.sh, which keep a build folder between runs so that the
# packages NetRunner depends on (SwiftNIO, two BoringSSLs, SQLite) are not compiled again:
#
#   remove_own_products SOURCE CONFIG SCRATCH...
#
# removes from each SCRATCH folder's CONFIG (debug, release) build every product of this
# package's own modules (those named by SOURCE's Sources/ and Tests/ folders: its modules, tests,
# executables, C targets), so that all of NetRunner is compiled afresh from the commit's sources
# and only the dependencies' products are reused.
remove_own_products() {
  local source=$1 config_name=$2 targets scratch config target
  shift 2
  targets=$(cd "$source" && ls Sources Tests | grep -v ':$' | grep -v '^$' | grep -v '^Fixtures$' | sort -u)
  for scratch in "$@"; do
    for config in "$scratch"/*-unknown-linux-gnu/"$config_name"; do
      [[ -d "$config" ]] || continue
      for target in $targets; do
        rm -rf "$config/$target.build" "$config/Modules/$target".* "$config/$target"
      done
      rm -rf "$config"/*.xctest "$config"/*.product "$config/netrunner" "$config/netrunner-net" \
        "$config"/NetRunnerPackageTests* "$config"/NetRunnerPackageDiscoveredTests* "$config/testables"
    done
  done
}
