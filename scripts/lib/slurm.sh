# Helpers shared by scripts/test-slurm.sh and scripts/test-cluster.sh (sourced; each script
# defines say and fail). Every Slurm client call goes through $SLURM_CLIENT (empty, or a command prefix
# such as `ip netns exec HOST` when the controller lives on another host).

# shellcheck source=apt.sh
source "$root/scripts/lib/apt.sh"

# Debian's slurm-wlm, installed when its daemons are missing (the caller defines say and fail).
install_slurm() {
  if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    say "installing Debian's slurm-wlm"
    apt_install slurm-wlm || fail "apt-get could not install slurm-wlm"
  fi
}

# The LiteRT runtime the jobs load, in NETRUNNER_LITERT_LIBRARY (the variable the batch scripts
# document): where scripts/install-runtime.sh put it, unless already set. $root is the clone.
export_litert_library() {
  if [[ -z "${NETRUNNER_LITERT_LIBRARY:-}" ]]; then
    NETRUNNER_LITERT_LIBRARY=$("$root/scripts/install-runtime.sh" --print)
  fi
  [[ -f "$NETRUNNER_LITERT_LIBRARY" ]] || fail "no LiteRT runtime at $NETRUNNER_LITERT_LIBRARY (run scripts/install-runtime.sh)"
  export NETRUNNER_LITERT_LIBRARY
}

# Seconds since $1 (a `date +%s.%N`), to a tenth.
since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - from }'; }

# munged with a private key, socket and files (it refuses to run as root), in $1; its PID is
# appended to the array named by $2, its socket's path set in MUNGE_SOCKET (not a command
# substitution: the PID would be appended in a subshell).
start_munged() {
  local dir=$1
  local -n into=$2
  mkdir -p "$dir"
  chmod 755 "$dir"
  head -c 1024 /dev/urandom >"$dir/munge.key"
  chmod 400 "$dir/munge.key"
  chown -R munge:munge "$dir"
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground --key-file="$dir/munge.key" \
    --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
    --seed-file="$dir/munged.seed" --num-threads=2 >"$dir/munged.out" 2>&1 &
  into+=($!)
  local i
  for ((i = 0; i < 100; i++)); do [[ -S "$dir/munge.socket" ]] && break; sleep 0.05; done
  [[ -S "$dir/munge.socket" ]] || fail "munged did not start: $(cat "$dir/munged.log" 2>/dev/null)"
  MUNGE_SOCKET=$dir/munge.socket
}

# The state of every task of a job, one per line ("COMPLETED", "PENDING:DependencyNeverSatisfied").
states() {
  $SLURM_CLIENT scontrol show job -o "$1" 2>/dev/null | sed -nE 's/.*JobState=([A-Z_]+) Reason=([^ ]+).*/\1:\2/p'
}

# Waits, within a deadline of $1 seconds, until no task of the jobs given is pending, running or
# ending, but for a job waiting on a dependency that can never be met.
wait_jobs() {
  local deadline=$((SECONDS + $1)) job all
  shift
  while true; do
    all=""
    for job in "$@"; do all+=$(states "$job")$'\n'; done
    grep -v '^PENDING:DependencyNeverSatisfied$' <<<"$all" \
      | grep -qE '^(PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|REQUEUE_HOLD|RESIZING|SUSPENDED)' || return 0
    ((SECONDS < deadline)) || fail "jobs $* not done in $1 s: $(tr '\n' ' ' <<<"$all")"
    sleep 0.25
  done
}

# Every task of a job completed ($2 says which job, for the message).
expect_completed() {
  local got
  got=$(states "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
  [[ "$(states "$1" | grep -cv '^COMPLETED:')" == 0 && -n "$(states "$1")" ]] || fail "job $1 ($2): $got"
}

# A results file without its latencies, keys sorted (as Tests/NetRunnerTestSupport/ResultsLines.swift).
answers() {
  python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    record = json.loads(line)
    for key in ("decode_latency", "preprocessor_latency", "inference_latency", "total_latency"):
        record.pop(key, None)
    print(json.dumps(record, sort_keys=True))' "$1"
}

# Results file $1 answers as $2 does, line for line ($3 says what, for the message).
expect_same_results() {
  [[ -f "$1" ]] || fail "$3: no $1"
  cmp -s <(answers "$1") <(answers "$2") || fail "$3: $1 differs from the single run's $2:
$(diff <(answers "$1") <(answers "$2") | head -n 10)"
}

# The metrics of an evaluation's reports (the sample test bundles'), per test and model.
metrics() {
  python3 -c '
import json, sys
for test in ("imagenet-sample-photos", "faces-sample-photos"):
    report = json.load(open(f"{sys.argv[1]}/{test}/report.json"))
    for model in report["models"]:
        print(test, model["id"], model["evaluated"], model["runs"], json.dumps(model["metric"], sort_keys=True))' "$1"
}

# A merged evaluation folder $1 answers as the single run's ($single/evaluate) does: results line
# for line, the same metrics ($2 says what, for the message).
expect_same_evaluation() {
  local test
  for test in imagenet-sample-photos faces-sample-photos; do
    expect_same_results "$1/$test/results.jsonl" "$single/evaluate/$test/results.jsonl" "$2 $test"
  done
  [[ "$(metrics "$1")" == "$(metrics "$single/evaluate")" && -n "$(metrics "$1")" ]] \
    || fail "$2: metrics differ: $(metrics "$1") vs $(metrics "$single/evaluate")"
}
