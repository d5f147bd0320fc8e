#!/usr/bin/env bash
# The shipped deploy/slurm/ scripts on a real Slurm: a one-node cluster (Debian's slurm-wlm,
# munged, slurmctld, slurmd) started in a private temporary folder, on loopback only, with its
# own munge key and socket and its own ports (so it disturbs no other Slurm or munged here).
#
#   scripts/test-slurm.sh .build/debug/netrunner
#
# 1. bulk over real photos (Tests/Fixtures/Photos: 16 images) as a 4-task array and the merge
#    after it (deploy/slurm/submit-bulk.sh), and evaluate over the sample test bundles the same
#    way (submit-evaluate.sh): the merged bulk file equals a single `netrunner bulk` line for line
#    (latencies aside), the merged evaluation's results and metrics a single `netrunner evaluate`'s.
# 2. One task of each made to fail (bulk: a photo of its shard cut short; evaluate: its output
#    folder's name taken by a file): the merge does not run (afterok), the cause is removed, the
#    bulk task is requeued (scontrol requeue: it resumes its file, running only the failed photo
#    again) and the evaluate task submitted again as a one-task array (sbatch --array=K), the
#    merges submitted again: still the single run's answers.
#
# The scripts are submitted unchanged: the paths go in through their environment variables.
# Needs root (it starts the daemons and installs slurm-wlm when missing); prints SKIP and exits 0
# without it. The daemons are stopped by their PIDs at the end, also when a check fails.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/test-slurm.sh PATH/TO/netrunner" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
netrunner=$(realpath "$1")
[[ -x "$netrunner" ]] || { echo "test-slurm: $1 is not an executable" >&2; exit 2; }
started=$(date +%s.%N)

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP test-slurm: needs root, to install slurm-wlm and start munged, slurmctld and slurmd (run make test as root)."
  exit 0
fi

# This test's own environment only: nothing from a Slurm job or shard around it.
unset NETRUNNER_SHARD_COUNT JOB_COMPLETION_INDEX JOB_COMPLETION_COUNT SBATCH_EXPORT SLURM_CONF
for name in $(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SCONTROL)_' || true); do unset "$name"; done

# since, start_munged, states, wait_jobs, expect_completed, answers, expect_same_results,
# metrics, expect_same_evaluation.
SLURM_CLIENT=
source "$root/scripts/lib/slurm.sh"
say() { echo "[test-slurm $(since "$started")s] $*"; }
fail() {
  echo "FAIL test-slurm: $*" >&2
  exit 1
}

install_slurm
for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel ss setpriv python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing"
done

# The scripts as shipped: each array's default size is its default shard count (as a Kubernetes
# Indexed Job's completions is its JOB_COMPLETION_COUNT), and the submit scripts' default too.
for kind in bulk evaluate; do
  script=$root/deploy/slurm/$kind.sbatch
  array=$(sed -nE 's/^#SBATCH --array=0-([0-9]+)$/\1/p' "$script")
  count=$(sed -nE 's/^export NETRUNNER_SHARD_COUNT=\$\{NETRUNNER_SHARD_COUNT:-([0-9]+)\}$/\1/p' "$script")
  submit=$(sed -nE 's/^export NETRUNNER_SHARD_COUNT=\$\{NETRUNNER_SHARD_COUNT:-([0-9]+)\}$/\1/p' \
    "$root/deploy/slurm/submit.sh")
  [[ -n "$array" && "$count" == $((array + 1)) && "$submit" == "$count" ]] \
    || fail "$kind.sbatch: --array=0-$array, NETRUNNER_SHARD_COUNT ${count:-?} (submit.sh ${submit:-?})"
  for file in "$script" "$root/deploy/slurm/$kind-merge.sbatch" "$root/deploy/slurm/submit-$kind.sh" \
    "$root/deploy/slurm/submit.sh"; do
    bash -n "$file" || fail "$file is not valid bash"
  done
done

# The LiteRT runtime, where scripts/install-runtime.sh put it (as the other tests find it),
# given to the jobs through the variable the batch scripts document.
export_litert_library

base=$(mktemp -d /tmp/netrunner-slurm.XXXXXX)
chmod 755 "$base"
pids=()
cleanup() {
  local status=$?
  set +e
  if [[ -n "${SLURM_CONF:-}" && -f "$base/slurmctld.started" ]]; then
    # Jobs first (none should be left), then the daemons, newest first.
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    [[ -n "${jobs// /}" ]] && scancel $jobs 2>/dev/null
    for ((i = 0; i < 50; i++)); do [[ -z "$(squeue -h 2>/dev/null)" ]] && break; sleep 0.1; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [[ $status -ne 0 ]]; then
    for log in "$base"/log/*.log "$base"/shared/results/*/logs/*.log; do
      [[ -f "$log" ]] && { echo "--- $log (last lines)"; tail -n 15 "$log"; }
    done >&2
  fi
  if [[ -n "${NETRUNNER_SLURM_KEEP:-}" ]]; then echo "test-slurm: left $base" >&2; else rm -rf "$base"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free loopback ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')

mkdir -p "$base/state" "$base/spool" "$base/log"
chown slurm:slurm "$base/state" "$base/log"
start_munged "$base/munge" pids
socket=$MUNGE_SOCKET

# The configuration of ../shared/docs/slurm.md, plus: bound to 127.0.0.1 only (NoInAddrAny,
# NoCtldInAddrAny), free ports, the private munge socket.
export SLURM_CONF=$base/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=ci
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool
SlurmctldPidFile=$base/slurmctld.pid
SlurmdPidFile=$base/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=ci-node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
/usr/sbin/slurmctld -D >"$base/log/slurmctld.out" 2>&1 &
pids+=($!)
touch "$base/slurmctld.started"
/usr/sbin/slurmd -D -N ci-node >"$base/log/slurmd.out" 2>&1 &
pids+=($!)
deadline=$((SECONDS + 30))
until [[ "$(sinfo -h -o %T 2>/dev/null)" == idle ]]; do
  ((SECONDS < deadline)) || fail "the node is not idle after 30 s: $(sinfo 2>&1)"
  sleep 0.2
done
say "cluster up: slurmctld on 127.0.0.1:$ctld_port, slurmd on 127.0.0.1:$slurmd_port, munged on $socket"

# Nothing of ours listens outside loopback.
listening=$(ss -H -ltnup | grep -E "pid=($(IFS='|'; echo "${pids[*]}"))," || true)
[[ -n "$listening" ]] || fail "the daemons listen nowhere?"
if awk '{print $5}' <<<"$listening" | grep -vqE '^127\.0\.0\.1:'; then
  fail "a daemon listens outside 127.0.0.1: $listening"
fi

# The shared folder: real photos, the test bundles, the models.
shared=$base/shared
for sub in test calibration faces; do
  mkdir -p "$shared/photos/$sub"
  find "$root/Tests/Fixtures/Photos/$sub" -maxdepth 1 -type f \( -name '*.jpg' -o -name '*.png' \) \
    -exec cp -t "$shared/photos/$sub/" {} +
done
images=$(find "$shared/photos" -type f | wc -l)
((images >= 12)) || fail "only $images photos"
export NETRUNNER=$netrunner
export NETRUNNER_SHARED=$shared
export NETRUNNER_PHOTOS=$shared/photos
export NETRUNNER_MODEL=$root/Models/mobilenet_v2_1.0_224_uint8.tflite
export NETRUNNER_MODELS=$root/Models
export NETRUNNER_TESTBUNDLES=$root/TestBundles/imagenet-sample.testbundle:$root/TestBundles/faces.testbundle
export NETRUNNER_SHARD_COUNT=4
# Two CPUs here: one per task, two tasks at a time.
sbatch_options=(--cpus-per-task=1)

# --- The single-machine answers.
single=$base/single
mkdir -p "$single"
t0=$(date +%s.%N)
(unset NETRUNNER_SHARD_COUNT; "$netrunner" bulk "$NETRUNNER_PHOTOS" --model "$NETRUNNER_MODEL" \
  --output "$single/bulk.jsonl" --threads 2 --no-progress 2>"$single/bulk.err") || fail "single bulk: $(cat "$single/bulk.err")"
single_bulk_s=$(since "$t0")
t0=$(date +%s.%N)
(unset NETRUNNER_SHARD_COUNT; IFS=: read -r -a bundles <<<"$NETRUNNER_TESTBUNDLES"
  "$netrunner" evaluate "${bundles[@]}" --models "$NETRUNNER_MODELS" --output "$single/evaluate" --no-progress \
    >"$single/evaluate.out" 2>&1) || fail "single evaluate: $(cat "$single/evaluate.out")"
single_evaluate_s=$(since "$t0")
say "single runs: bulk of $images photos ${single_bulk_s}s, evaluate ${single_evaluate_s}s"

# --- 1. The job arrays and their merges, as shipped.
export NETRUNNER_RESULTS=$shared/results/bulk
t0=$(date +%s.%N)
read -r bulk_array bulk_merge < <("$root/deploy/slurm/submit-bulk.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-bulk.sh: $(cat "$base/submit.err")"
wait_jobs 60 "$bulk_array" "$bulk_merge"
bulk_s=$(since "$t0")
expect_completed "$bulk_array" "bulk array"
expect_completed "$bulk_merge" "bulk merge"
expect_same_results "$NETRUNNER_RESULTS/merged.jsonl" "$single/bulk.jsonl" "bulk merged"
counts=()
for ((k = 0; k < 4; k++)); do
  grep -q "shard $k of 4" "$NETRUNNER_RESULTS/logs/bulk-${bulk_array}_$k.log" || fail "task $k ran no shard $k"
  counts+=("$(wc -l <"$NETRUNNER_RESULTS/shard-$k.jsonl")")
done
say "bulk: array $bulk_array (shards of ${counts[*]} images) and merge $bulk_merge in ${bulk_s}s: the single run's $images lines"

export NETRUNNER_RESULTS=$shared/results/evaluate
t0=$(date +%s.%N)
read -r evaluate_array evaluate_merge < <("$root/deploy/slurm/submit-evaluate.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-evaluate.sh: $(cat "$base/submit.err")"
wait_jobs 90 "$evaluate_array" "$evaluate_merge"
evaluate_s=$(since "$t0")
expect_completed "$evaluate_array" "evaluate array"
expect_completed "$evaluate_merge" "evaluate merge"
expect_same_evaluation "$NETRUNNER_RESULTS/merged" "evaluate merged"
say "evaluate: array $evaluate_array and merge $evaluate_merge in ${evaluate_s}s: the single run's results and metrics"

# --- 2. A task fails; its merge waits; the task is rerun; the merge again.
# bulk: a photo of shard 2 cut short (as a copy to shared storage interrupted), so task 2 writes
# an error line for it and exits 1.
export NETRUNNER_RESULTS=$shared/results/bulk-failed
broken=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["image"])' \
  "$shared/results/bulk/shard-2.jsonl")
cp "$broken" "$base/broken-photo.orig"
head -c 300 "$base/broken-photo.orig" >"$broken"
read -r bulk_array bulk_merge < <("$root/deploy/slurm/submit-bulk.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-bulk.sh: $(cat "$base/submit.err")"
# evaluate: shard 1's results folder is a file, so task 1 exits non-zero.
export NETRUNNER_RESULTS=$shared/results/evaluate-failed
mkdir -p "$NETRUNNER_RESULTS"
echo "in the way" >"$NETRUNNER_RESULTS/shard-1"
read -r evaluate_array evaluate_merge < <("$root/deploy/slurm/submit-evaluate.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-evaluate.sh: $(cat "$base/submit.err")"
wait_jobs 90 "$bulk_array" "$bulk_merge" "$evaluate_array" "$evaluate_merge"
for job in "$bulk_array"_2 "$evaluate_array"_1; do
  [[ "$(states "$job")" == FAILED:* ]] || fail "task $job did not fail: $(states "$job")"
done
for job in "$bulk_array"_0 "$bulk_array"_1 "$bulk_array"_3 "$evaluate_array"_0 "$evaluate_array"_2 "$evaluate_array"_3; do
  [[ "$(states "$job")" == COMPLETED:* ]] || fail "task $job: $(states "$job")"
done
for job in "$bulk_merge" "$evaluate_merge"; do
  [[ "$(states "$job")" == PENDING:DependencyNeverSatisfied ]] || fail "merge $job ran after a failed task: $(states "$job")"
done
[[ ! -e "$shared/results/bulk-failed/merged.jsonl" && ! -e "$shared/results/evaluate-failed/merged" ]] \
  || fail "a merge was written after a failed task"
say "bulk task ${bulk_array}_2 and evaluate task ${evaluate_array}_1 failed; their merges wait (DependencyNeverSatisfied)"
scancel "$bulk_merge" "$evaluate_merge"

# The causes removed. bulk: the same task requeued (released at once: a requeued job otherwise
# waits out the credential lifetime, 120 s by default), the merge after that task (afterok on the
# whole array stays unsatisfiable once a task failed, even after the task is requeued).
t0=$(date +%s.%N)
export NETRUNNER_RESULTS=$shared/results/bulk-failed
grep -q '"error":true' "$NETRUNNER_RESULTS/shard-2.jsonl" || fail "no error line for the broken photo in shard 2"
cp "$base/broken-photo.orig" "$broken"
scontrol requeue "${bulk_array}_2"
scontrol update JobId="${bulk_array}_2" StartTime=now
bulk_merge=$("$root/deploy/slurm/submit-bulk.sh" --merge-after "${bulk_array}_2" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-bulk.sh --merge-after: $(cat "$base/submit.err")"
# evaluate: task 1 submitted again as a one-task array, as a user would (NETRUNNER_SHARD_COUNT
# from this environment, as at the first submission); the merge after it.
export NETRUNNER_RESULTS=$shared/results/evaluate-failed
rm "$NETRUNNER_RESULTS/shard-1"
rerun=$(sbatch --parsable --export=ALL --array=1 "${sbatch_options[@]}" \
  --output="$NETRUNNER_RESULTS/logs/evaluate-%A_%a.log" "$root/deploy/slurm/evaluate.sbatch")
evaluate_merge=$("$root/deploy/slurm/submit-evaluate.sh" --merge-after "$rerun" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-evaluate.sh --merge-after: $(cat "$base/submit.err")"
wait_jobs 60 "$bulk_array" "$bulk_merge" "$rerun" "$evaluate_merge"
rerun_s=$(since "$t0")
expect_completed "$bulk_array" "bulk array after the requeue"
expect_completed "$bulk_merge" "bulk merge after the requeue"
expect_completed "$rerun" "evaluate's task 1 submitted again"
expect_completed "$evaluate_merge" "evaluate merge after the rerun"
log=$(cat "$shared/results/bulk-failed/logs/bulk-${bulk_array}_2.log")
grep -q "(restart 1): shard 2 of 4" <<<"$log" || fail "the requeued task did not run shard 2 again: $log"
grep -q "Retrying 1 failed image(s)" <<<"$log" && grep -q "1 of ${counts[2]} images to go" <<<"$log" \
  || fail "the requeued task did not resume its file, running only the failed photo again: $log"
grep -q "task 1 on .*: shard 1 of 4" "$NETRUNNER_RESULTS/logs/evaluate-${rerun}_1.log" \
  || fail "the one-task array did not run shard 1"
expect_same_results "$shared/results/bulk-failed/merged.jsonl" "$single/bulk.jsonl" "bulk merged after the requeue"
expect_same_evaluation "$NETRUNNER_RESULTS/merged" "evaluate merged after sbatch --array=1"
say "requeued ${bulk_array}_2 and resubmitted evaluate task 1 as array $rerun; merges in ${rerun_s}s: the single runs' answers"

total=$(since "$started")
echo "PASS test-slurm: bulk (${images} photos, 4 shards) ${bulk_s}s vs single ${single_bulk_s}s; evaluate (2 bundles, 4 shards) ${evaluate_s}s vs single ${single_evaluate_s}s; failed tasks rerun and merged in ${rerun_s}s; ${total}s in all"
