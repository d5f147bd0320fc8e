#!/usr/bin/env bash
# deploy/slurm/ across hosts: a controller and three compute hosts on this machine, each a network
# namespace with its own address, routes, ports and host name (a UTS namespace), joined by veth
# pairs to a bridge in a namespace of its own; the filesystem stays shared, as a cluster's shared
# storage is. Debian's slurm-wlm: slurmctld on ctl (10.213.0.1), one slurmd per compute host
# n1-n3 (10.213.0.11-13), one munge key. See ../shared/docs/hosts.md for the technique.
#
#   scripts/test-cluster.sh .build/debug/netrunner
#
# 1. bulk over real photos as a 6-task array (deploy/slurm/submit-bulk.sh, unchanged) spread over
#    the three nodes: each task's log names the node it ran on, the merge equals one machine's
#    `netrunner bulk` line for line; its wall time against the same array on one node. evaluate
#    the same way (submit-evaluate.sh): the merged results and metrics are one run's. The
#    results folder unwritable when an array starts (chattr +i): each task fails saying why,
#    the merge waits; writable again, the tasks requeued: the single run's lines.
# 2. A node dies mid-array: once a task on n2 has written answers, every process of host n2 is
#    killed (-9: its slurmd, the task's slurmstepd and netrunner) and its link taken down.
#    slurmctld marks n2 down (SlurmdTimeout), requeues its tasks (--requeue) on n1 and n3, each
#    resumes its shard file; the merge runs once every task succeeded: every photo answered
#    exactly once, the single run's answers. Then n2 comes back (its link up, slurmd again) and
#    takes tasks again (ReturnToService=2). A task over its --mem is killed by Slurm (whole
#    lines kept) and, run again with the script's limit, resumes.
# 3. A replica dies under load: `serve` on n1-n3, nginx on lb (10.213.0.30) with
#    deploy/nginx/netrunner-serve.conf as shipped but for its addresses, 32 connections from ctl
#    (tools/cluster/load.py): n2's replica killed with -9, then started again; every request
#    answered (the conf's proxy_next_upstream retries what met the dead or loading replica), n2
#    takes requests again once ready; p50 and p99 before, during and after. Then n3's replica
#    stopped with SIGTERM under load: it drains, exits 0, and nothing fails.
# 4. The hub across hosts: PostgreSQL on db (10.213.0.20), hub nodes on n1 and n2 sharing it and
#    the shared folder's files. 3 pushes on each node at once (versions 1-6, none lost or
#    repeated), alias moves on both at once; PostgreSQL restarted (pg_ctl -m fast) during a
#    14 MB push: both nodes agree, every version's file whole, every alias target a version; a
#    push after it succeeds. A client on n3 runs hub:mobilenet@production, still answers from its
#    verified local copy with both hubs down, and takes the new version once production moves.
#
# Needs root and network namespaces; prints SKIP and exits 0 without them. Everything it made is
# named nrcXXXX-* and removed at the end, also when a check fails; processes stop by their PIDs,
# and whatever is left in its namespaces is killed before they are deleted.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/test-cluster.sh PATH/TO/netrunner" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
netrunner=$(realpath "$1")
[[ -x "$netrunner" ]] || { echo "test-cluster: $1 is not an executable" >&2; exit 2; }
started=$(date +%s.%N)

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP test-cluster: needs root, to make network namespaces and start munged, slurmctld and slurmd (run make test as root)."
  exit 0
fi
prefix=nrc$(printf '%04x' $((RANDOM)))
if ! ip netns add "$prefix-probe" 2>/dev/null; then
  echo "SKIP test-cluster: network namespaces cannot be made here (ip netns add failed)."
  exit 0
fi
ip netns del "$prefix-probe"

unset NETRUNNER_SHARD_COUNT JOB_COMPLETION_INDEX JOB_COMPLETION_COUNT SBATCH_EXPORT SLURM_CONF
for name in $(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SCONTROL)_' || true); do unset "$name"; done

say() { echo "[test-cluster $(since "$started")s] $*"; }
fail() {
  echo "FAIL test-cluster: $*" >&2
  exit 1
}
# Every Slurm client runs on the controller's host (only it reaches 10.213.0.1).
SLURM_CLIENT=client
client() { on ctl "$@"; }
source "$root/scripts/lib/slurm.sh"

install_slurm
# nginx, the load balancer of case 3 (make test installs it with the browser's packages; alone,
# this check installs it).
if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
  say "installing Debian's nginx"
  apt_install nginx || fail "apt-get could not install nginx"
fi
for tool in ip nsenter unshare mount chattr munged slurmctld slurmd sbatch squeue scontrol sinfo scancel setpriv python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing"
done
export_litert_library

base=$(mktemp -d /tmp/netrunner-cluster.XXXXXX)
chmod 755 "$base"
hosts=(ctl n1 n2 n3 lb db)
declare -A address=([ctl]=10.213.0.1 [n1]=10.213.0.11 [n2]=10.213.0.12 [n3]=10.213.0.13 [lb]=10.213.0.30
  [db]=10.213.0.20)
pids=()
declare -A slurmd_pid=() serve_pid=() hub_pid=()
pg_started=""
immutable=""
cleanup() {
  local status=$?
  set +e
  [[ -n "$immutable" ]] && chattr -i "$immutable"
  if [[ -f "$base/slurmctld.started" ]]; then
    local jobs
    jobs=$($SLURM_CLIENT squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    [[ -n "${jobs// /}" ]] && $SLURM_CLIENT scancel $jobs 2>/dev/null
  fi
  for pid in "${slurmd_pid[@]}" "${serve_pid[@]}" "${hub_pid[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null; done
  [[ -n "$pg_started" ]] && pg_ctl "-m immediate stop"
  for pid in "${slurmd_pid[@]}" "${serve_pid[@]}" "${hub_pid[@]}" "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # Whatever still runs on a host (a task's slurmstepd, a netrunner), then the hosts themselves.
  local ns
  for ns in "${hosts[@]/#/$prefix-}" "$prefix-sw"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  if [[ $status -ne 0 ]]; then
    for log in "$base"/log/*.log "$base"/log/*.out "$base"/log/*.err "$base"/shared/results/*/logs/*.log \
      "$base"/nginx/error.log "$base"/pg/postgres.log; do
      [[ -f "$log" ]] && { echo "--- $log (last lines)"; tail -n 15 "$log"; }
    done >&2
  fi
  if [[ -n "${NETRUNNER_CLUSTER_KEEP:-}" ]]; then echo "test-cluster: left $base" >&2; else rm -rf "$base"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- The hosts: a bridge in a namespace of its own (the switch), a veth pair from each host to it.
ip netns add "$prefix-sw"
ip -n "$prefix-sw" link add br0 type bridge
ip -n "$prefix-sw" link set br0 up
for host in "${hosts[@]}"; do
  ip netns add "$prefix-$host"
  ip link add "$prefix-$host" netns "$prefix-$host" type veth peer name "$host" netns "$prefix-sw"
  ip -n "$prefix-sw" link set "$host" master br0 up
  ip -n "$prefix-$host" link set "$prefix-$host" name eth0
  ip -n "$prefix-$host" addr add "${address[$host]}/24" dev eth0
  ip -n "$prefix-$host" link set eth0 up
  ip -n "$prefix-$host" link set lo up
done
# Every host's name and address, as each host's /etc/hosts.
for host in "${hosts[@]}"; do echo "${address[$host]} $host"; done >"$base/hosts"
# Waits, within $2 seconds, until URL $3 answers 2xx from ctl, failing early if PID $4 (the
# daemon on host $1, logging to log/$5-$1.out, named $6 in messages) has exited.
wait_up() {
  local deadline=$((SECONDS + $2))
  until ip netns exec "$prefix-ctl" curl -sf -o /dev/null "$3"; do
    ((SECONDS < deadline)) || fail "$6 on $1 is not up after $2 s: $(tail -n 5 "$base/log/$5-$1.out")"
    kill -0 "$4" 2>/dev/null || fail "$6 on $1 exited: $(tail -n 5 "$base/log/$5-$1.out")"
    sleep 0.1
  done
}
# On a host: its network namespace, a UTS namespace named after it (hostname is the host's), and
# a mount namespace where /etc/hosts is the cluster's. nsenter, not `ip netns exec`: that one
# mounts a fresh /sys, without the cgroup file system slurmd needs.
on() {
  local host=$1
  shift
  nsenter --net="/run/netns/$prefix-$host" unshare --uts --mount \
    sh -c 'mount --bind "$1" /etc/hosts && hostname "$0" && shift && exec "$@"' "$host" "$base/hosts" "$@"
}
# A daemon on a host, in the background: `$!` is the daemon's own PID (nsenter, unshare and sh
# each exec the next), so that it can be killed and waited for.
start_on() {
  local host=$1 log=$2
  shift 2
  (exec nsenter --net="/run/netns/$prefix-$host" unshare --uts --mount \
    sh -c 'mount --bind "$1" /etc/hosts && hostname "$0" && shift && exec "$@"' "$host" "$base/hosts" "$@" \
    >>"$log" 2>&1) &
}
say "hosts up: ${hosts[*]} on 10.213.0.0/24 (namespaces $prefix-*; the nodes reach the controller: see below)"

# --- Slurm: one munge key (munged's socket is a file, and the files are shared), slurmctld on ctl,
# a slurmd per compute host. One CPU per node, so a 6-task array runs 3 at a time, one per node.
mkdir -p "$base/state" "$base/spool"/n{1,2,3} "$base/log"
chown slurm:slurm "$base/state" "$base/log"
start_munged "$base/munge" pids
export SLURM_CONF=$base/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=nrc
SlurmctldHost=ctl(${address[ctl]})
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET,cred_expire=5
CredType=cred/munge
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool/%n
SlurmctldPidFile=$base/slurmctld.pid
SlurmdPidFile=$base/slurmd-%n.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
JobRequeue=1
SlurmdTimeout=6
MessageTimeout=3
MinJobAge=600
NodeName=n1 NodeAddr=${address[n1]} CPUs=1 RealMemory=1000 State=UNKNOWN
NodeName=n2 NodeAddr=${address[n2]} CPUs=1 RealMemory=1000 State=UNKNOWN
NodeName=n3 NodeAddr=${address[n3]} CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
start_on ctl "$base/log/slurmctld.out" /usr/sbin/slurmctld -D
pids+=($!)
touch "$base/slurmctld.started"
start_slurmd() {
  start_on "$1" "$base/log/slurmd-$1.out" /usr/sbin/slurmd -D -N "$1"
  slurmd_pid[$1]=$!
}
for host in n1 n2 n3; do start_slurmd "$host"; done
# Node states, "n1:idle n2:idle n3:idle".
nodes() { $SLURM_CLIENT sinfo -h -N -o '%N:%T' 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }
wait_nodes() {  # expected deadline
  local deadline=$((SECONDS + $2))
  until [[ "$(nodes)" =~ $1 ]]; do
    ((SECONDS < deadline)) || fail "nodes are not $1 after $2 s: $(nodes)"
    sleep 0.25
  done
}
wait_nodes '^n1:idle n2:idle n3:idle$' 30
say "slurm up: slurmctld on ctl ${address[ctl]}, slurmd on n1 n2 n3: $(nodes)"

# --- The shared folder: the fixtures' photos, 12 copies of each under names of their own (hard
# links), so that each task runs long enough for a node to die under it.
shared=$base/shared
mkdir -p "$shared/photos"
for copy in $(seq 1 12); do
  for photo in "$root"/Tests/Fixtures/Photos/{test,calibration,faces}/*.{jpg,png}; do
    [[ -f "$photo" ]] || continue
    ln "$photo" "$shared/photos/$copy-$(basename "$(dirname "$photo")")-$(basename "$photo")" 2>/dev/null \
      || cp "$photo" "$shared/photos/$copy-$(basename "$(dirname "$photo")")-$(basename "$photo")"
  done
done
images=$(find "$shared/photos" -type f | wc -l)
((images >= 60)) || fail "only $images photos"
# Eight copies of those, for the tasks that must run for seconds in either build under any load.
mkdir -p "$shared/photos-x8"
for copy in $(seq 1 8); do
  for photo in "$shared"/photos/*; do ln "$photo" "$shared/photos-x8/x$copy-$(basename "$photo")"; done
done
chmod -R a+rX "$base"
export NETRUNNER=$netrunner
export NETRUNNER_SHARED=$shared
export NETRUNNER_PHOTOS=$shared/photos
export NETRUNNER_MODEL=$root/Models/mobilenet_v2_1.0_224_uint8.tflite
export NETRUNNER_SHARD_COUNT=6
sbatch_options=(--cpus-per-task=1)

single=$base/single
mkdir -p "$single"
t0=$(date +%s.%N)
(unset NETRUNNER_SHARD_COUNT; "$netrunner" bulk "$NETRUNNER_PHOTOS" --model "$NETRUNNER_MODEL" \
  --output "$single/bulk.jsonl" --threads 1 --no-progress 2>"$single/bulk.err") || fail "single bulk: $(cat "$single/bulk.err")"
single_s=$(since "$t0")
say "single run: bulk of $images photos on one thread in ${single_s}s"

# Which node each task of an array ran on, from its log ("task 3 on n2 (restart 0)"), one per line.
placements() {
  local k
  for ((k = 0; k < NETRUNNER_SHARD_COUNT; k++)); do
    sed -nE "s/^netrunner-bulk: array job [0-9]+ task ($k) on ([a-z0-9]+) \(restart ([0-9]+)\).*/task \1 on \2 (restart \3)/p" \
      "$NETRUNNER_RESULTS/logs/bulk-${1}_$k.log"
  done
}
# Every image of the folder exactly once in a results file.
expect_each_once() {
  python3 - "$1" "$NETRUNNER_PHOTOS" <<'PY' || fail "$2"
import json, os, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
seen = [line["image"] for line in lines]
photos = sorted(os.path.join(sys.argv[2], name) for name in os.listdir(sys.argv[2]))
twice = sorted({image for image in seen if seen.count(image) > 1})
missing = sorted(set(photos) - set(seen))
errors = [line["image"] for line in lines if line.get("error")]
if twice or missing or errors or len(seen) != len(photos):
    sys.exit(f"{len(seen)} lines for {len(photos)} photos; twice {twice[:3]}, missing {missing[:3]}, errors {errors[:3]}")
PY
}

# Each copy in results file $1 (of photos-x8) answers as the single run's photo it is a copy of,
# and every copy once.
expect_copies_answers() {
  python3 - "$1" "$single/bulk.jsonl" "$NETRUNNER_PHOTOS" <<'PY' || fail "$2: its answers are not the single run's"
import json, os, re, sys
latencies = ("decode_latency", "preprocessor_latency", "inference_latency", "total_latency")
def answers(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        record = json.loads(line)
        for key in latencies:
            record.pop(key, None)
        name = os.path.basename(record.pop("image"))
        assert name not in out, f"{name} twice in {path}"
        out[name] = record
    return out
copies, single = answers(sys.argv[1]), answers(sys.argv[2])
assert sorted(copies) == sorted(os.listdir(sys.argv[3])), f"{len(copies)} lines for {len(os.listdir(sys.argv[3]))} photos"
for name, record in copies.items():
    original = re.sub(r"^x[0-9]+-", "", name)
    assert record == single[original], f"{name}: {record} != {single[original]}"
PY
}

# --- 1. A 6-task array over the three nodes.
export NETRUNNER_RESULTS=$shared/results/spread
t0=$(date +%s.%N)
read -r array merge < <($SLURM_CLIENT "$root/deploy/slurm/submit-bulk.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-bulk.sh: $(cat "$base/submit.err")"
wait_jobs 180 "$array" "$merge"
spread_s=$(since "$t0")
expect_completed "$array" "array over three nodes"
expect_completed "$merge" "its merge"
expect_same_results "$NETRUNNER_RESULTS/merged.jsonl" "$single/bulk.jsonl" "merged over three nodes"
expect_each_once "$NETRUNNER_RESULTS/merged.jsonl" "merged over three nodes"
spread=$(placements "$array")
echo "$spread" | sed 's/^/    /'
used=$(grep -oE 'on n[0-9]' <<<"$spread" | sort -u | wc -l)
((used == 3)) || fail "the array ran on $used node(s), not 3"
say "array $array over n1 n2 n3 and merge $merge in ${spread_s}s: the single run's $images lines"

# evaluate as a 6-task array over the three nodes: the merged results and metrics are one run's.
export NETRUNNER_RESULTS=$shared/results/evaluate
export NETRUNNER_MODELS=$root/Models
export NETRUNNER_TESTBUNDLES=$root/TestBundles/imagenet-sample.testbundle:$root/TestBundles/faces.testbundle
(unset NETRUNNER_SHARD_COUNT; IFS=: read -r -a bundles <<<"$NETRUNNER_TESTBUNDLES"
  "$netrunner" evaluate "${bundles[@]}" --models "$NETRUNNER_MODELS" --output "$single/evaluate" --no-progress \
    >"$single/evaluate.out" 2>&1) || fail "single evaluate: $(cat "$single/evaluate.out")"
t0=$(date +%s.%N)
read -r array merge < <($SLURM_CLIENT "$root/deploy/slurm/submit-evaluate.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
  || fail "submit-evaluate.sh: $(cat "$base/submit.err")"
wait_jobs 180 "$array" "$merge"
evaluate_s=$(since "$t0")
expect_completed "$array" "evaluate over three nodes"
expect_completed "$merge" "its merge"
expect_same_evaluation "$NETRUNNER_RESULTS/merged" "evaluate merged over three nodes"
hosts_used=$(cat "$NETRUNNER_RESULTS"/logs/evaluate-"${array}"_*.log | grep -oE '^netrunner-evaluate: .* on n[0-9]' | grep -oE 'n[0-9]$' | sort -u | tr '\n' ' ')
[[ "$hosts_used" == "n1 n2 n3 " ]] || fail "evaluate ran on $hosts_used, not n1 n2 n3"
say "evaluate: array $array over ${hosts_used}and merge $merge in ${evaluate_s}s: the single run's results and metrics"

# The shared folder unwritable (immutable: even root cannot make files there) when an array
# starts: every task fails saying why, the merge waits; writable again, the tasks requeued and
# the merge submitted again: the single run's lines.
export NETRUNNER_RESULTS=$shared/results/unwritable
mkdir -p "$NETRUNNER_RESULTS/logs"
chattr +i "$NETRUNNER_RESULTS" || fail "chattr +i: this file system has no immutable flag"
immutable=$NETRUNNER_RESULTS
array=$(NETRUNNER_SHARD_COUNT=3 $SLURM_CLIENT sbatch --parsable --export=ALL --array=0-2 "${sbatch_options[@]}" \
  --output="$base/log/unwritable-%A_%a.log" "$root/deploy/slurm/bulk.sbatch" 2>&1) || fail "sbatch: $array"
wait_jobs 60 "$array"
[[ "$(states "$array" | grep -c '^FAILED:')" == 3 ]] || fail "tasks writing to an unwritable folder: $(states "$array")"
why=$(grep -h -m1 -i "permitted\|permission\|cannot\|could not" "$base"/log/unwritable-"$array"_*.log | head -n 1)
[[ -n "$why" ]] || fail "the failed tasks do not say why: $(cat "$base"/log/unwritable-"$array"_*.log)"
chattr -i "$NETRUNNER_RESULTS"
immutable=""
for k in 0 1 2; do
  $SLURM_CLIENT scontrol requeue "${array}_$k"
  $SLURM_CLIENT scontrol update JobId="${array}_$k" StartTime=now
done
# (afterok on the whole array stays unmet once a task failed: the merge waits on each task.)
merge=$($SLURM_CLIENT "$root/deploy/slurm/submit-bulk.sh" --merge-after "${array}_0:${array}_1:${array}_2" \
  "${sbatch_options[@]}" 2>"$base/submit.err") || fail "submit-bulk.sh --merge-after: $(cat "$base/submit.err")"
wait_jobs 120 "$array" "$merge"
expect_completed "$array" "the tasks requeued once the folder was writable"
expect_completed "$merge" "the merge after them"
expect_same_results "$NETRUNNER_RESULTS/merged.jsonl" "$single/bulk.jsonl" "merged after the folder was unwritable"
say "results folder immutable: the 3 tasks failed (\"$why\"); writable again, requeued and merged: the single run's lines"

# The same array held to one node, for the wall time.
export NETRUNNER_RESULTS=$shared/results/one-node
t0=$(date +%s.%N)
read -r array merge < <($SLURM_CLIENT "$root/deploy/slurm/submit-bulk.sh" "${sbatch_options[@]}" --nodelist=n1 \
  2>"$base/submit.err") || fail "submit-bulk.sh --nodelist=n1: $(cat "$base/submit.err")"
wait_jobs 300 "$array" "$merge"
one_s=$(since "$t0")
expect_completed "$array" "array on one node"
expect_same_results "$NETRUNNER_RESULTS/merged.jsonl" "$single/bulk.jsonl" "merged on one node"
[[ "$(placements "$array" | grep -c 'on n1')" == "$NETRUNNER_SHARD_COUNT" ]] || fail "--nodelist=n1 ran elsewhere"
say "the same array on n1 alone in ${one_s}s (three nodes: ${spread_s}s; this machine has $(nproc) cores for all hosts)"

# --- 2. A node dies mid-array.
# A task of an array running on n2 with answers written. Host n2 is frozen (SIGSTOP, every
# process) while one is chosen, so that the task seen running cannot end before the kill: a
# release build's shard takes well under a second, and a task chosen unfrozen had sometimes
# finished, leaving nothing to requeue. The array runs over the eight copies of the photos: with
# the 192 alone, a loaded machine ran whole arrays between two looks (two busy loops beside it: 3
# arrays of 3). Should it happen all the same, a fresh array, at most three.
# Whether process $1 is stopped: a SIGSTOP takes effect when the process is next scheduled, so
# it is looked at for up to a second.
stopped() {
  local state tries
  for ((tries = 0; tries < 20; tries++)); do
    state=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ "$state" == [Tt] ]] && return 0
    sleep 0.05
  done
  return 1
}
victim=""
for attempt in 1 2 3; do
  export NETRUNNER_RESULTS=$shared/results/node-died-$attempt NETRUNNER_PHOTOS=$shared/photos-x8
  t0=$(date +%s.%N)
  read -r array merge < <($SLURM_CLIENT "$root/deploy/slurm/submit-bulk.sh" "${sbatch_options[@]}" 2>"$base/submit.err") \
    || fail "submit-bulk.sh: $(cat "$base/submit.err")"
  deadline=$((SECONDS + 120))
  while true; do
    ((SECONDS < deadline)) || fail "no task ran on n2 within 120 s: $($SLURM_CLIENT squeue 2>&1)"
    # A process listed may end before the signal (a shard finishing): kill then fails for it alone
    # (the others are signalled), and under set -e that ended the whole check (xargs: 123). Twice:
    # a process started between the listing and the signal (slurmstepd starting a task) is not
    # frozen by the first.
    ip netns pids "$prefix-n2" | xargs -r kill -STOP 2>/dev/null || true
    ip netns pids "$prefix-n2" | xargs -r kill -STOP 2>/dev/null || true
    for pid in $(ip netns pids "$prefix-n2"); do
      command_line=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
      [[ $command_line =~ " bulk ".*/shard-([0-9]+)\.jsonl ]] || continue
      shard=${BASH_REMATCH[1]}
      # Only a task seen stopped (state T) cannot finish before the kill; one that started after
      # both signals and ran on had finished its shard and ended with restart 0 (CI, 9bbd19a).
      stopped "$pid" || continue
      [[ -s "$NETRUNNER_RESULTS/shard-$shard.jsonl" ]] && victim=$shard
    done
    [[ -z "$victim" ]] || break
    ip netns pids "$prefix-n2" | xargs -r kill -CONT 2>/dev/null || true
    [[ -n "$($SLURM_CLIENT squeue -h -j "$array" 2>/dev/null)" ]] || break
    sleep 0.1
  done
  [[ -z "$victim" ]] || break
  wait_jobs 120 "$array" "$merge"
  say "array $array ended before one of its tasks was seen on n2 with answers (try $attempt of 3)"
done
[[ -n "$victim" ]] || fail "in 3 arrays, no task was seen running on n2 with answers written"
before=$(wc -l <"$NETRUNNER_RESULTS/shard-$victim.jsonl")
killed_at=$(date +%s.%N)
# Every process of host n2 (slurmd, slurmstepd, the task's netrunner), and its cable. (Disowned
# first: bash would report the killed job as if something had gone wrong.)
disown "${slurmd_pid[n2]}"
ip netns pids "$prefix-n2" | xargs -r kill -KILL 2>/dev/null || true
ip -n "$prefix-sw" link set n2 down
unset 'slurmd_pid[n2]'
say "killed host n2 (every process, link down) while task ${array}_$victim had $before of its photos answered"
wait_nodes 'n2:down' 60
down_s=$(since "$killed_at")
reason=$($SLURM_CLIENT sinfo -h -R -n n2 -o '%E' 2>/dev/null)
say "slurmctld marked n2 down after ${down_s}s (reason: ${reason:-?})"
wait_jobs 240 "$array" "$merge"
recovered_s=$(since "$killed_at")
died_s=$(since "$t0")
expect_completed "$array" "array with a node killed"
expect_completed "$merge" "its merge"
expect_copies_answers "$NETRUNNER_RESULTS/merged.jsonl" "merged with a node killed"
expect_each_once "$NETRUNNER_RESULTS/merged.jsonl" "merged with a node killed"
died=$(placements "$array")
echo "$died" | sed 's/^/    /'
grep -qE "^task $victim on n[13] \(restart [1-9]" <<<"$died" \
  || fail "task $victim did not run again on n1 or n3: $died"
log=$(cat "$NETRUNNER_RESULTS/logs/bulk-${array}_$victim.log")
grep -qE "[0-9]+ of [0-9]+ images to go" <<<"$log" || fail "the requeued task did not resume its file: $log"
say "task ${array}_$victim requeued and resumed on $(grep -oE "^task $victim on n[13] \(restart [1-9]" <<<"$died" | tail -1 | cut -d' ' -f4); merge in ${recovered_s}s after the kill (${died_s}s in all): every photo once, the single run's answers"
export NETRUNNER_PHOTOS=$shared/photos

# n2 comes back and takes work again.
ip -n "$prefix-sw" link set n2 up
start_slurmd n2
wait_nodes 'n2:idle' 60
back=$($SLURM_CLIENT sbatch --parsable -w n2 --output="$base/log/back-%j.log" --wrap 'hostname' 2>&1) || fail "sbatch -w n2: $back"
wait_jobs 60 "$back"
expect_completed "$back" "a job on n2 after it came back"
[[ "$(cat "$base/log/back-$back.log")" == n2 ]] || fail "the job on n2 printed $(cat "$base/log/back-$back.log")"
say "n2 back: $(nodes); a job ran on it"

# A task over its memory limit: slurmstepd measures it (jobacct_gather/linux every second) and
# kills it (OverMemoryKill; memory is a consumable resource, CR_Core_Memory); the task fails
# saying so, its file holds whole lines only, and run again with the script's own limit it
# resumes and finishes. One shard of eight copies of the photos, so that it runs for seconds in
# either build (with the 192 photos alone a release build's task could end before the first
# measurement, and was not killed).
export NETRUNNER_RESULTS=$shared/results/memory
export NETRUNNER_PHOTOS=$shared/photos-x8
mkdir -p "$NETRUNNER_RESULTS/logs"
submit_whole() {  # sbatch options
  NETRUNNER_SHARD_COUNT=1 $SLURM_CLIENT sbatch --parsable --export=ALL --array=0 --cpus-per-task=1 "$@" \
    --output="$NETRUNNER_RESULTS/logs/bulk-%A_%a.log" "$root/deploy/slurm/bulk.sbatch"
}
small=$(submit_whole --mem=20M 2>&1) || fail "sbatch --mem=20M: $small"
wait_jobs 120 "$small"
# (Slurm 22.05 without cgroups records it as FAILED:JobLaunchFailure; its log says why.)
oom_state=$(states "$small")
[[ "$oom_state" != COMPLETED:* ]] && grep -q "exceeded memory limit" "$NETRUNNER_RESULTS/logs/bulk-${small}_0.log" \
  || fail "a task over 20 MB was not killed for it: $oom_state $(cat "$NETRUNNER_RESULTS"/logs/*.log)"
kept=0
if [[ -f "$NETRUNNER_RESULTS/shard-0.jsonl" ]]; then
  python3 -c 'import json, sys; [json.loads(line) for line in open(sys.argv[1])]' "$NETRUNNER_RESULTS/shard-0.jsonl" \
    || fail "the killed task left a line cut short"
  kept=$(wc -l <"$NETRUNNER_RESULTS/shard-0.jsonl")
fi
enough=$(submit_whole 2>&1) || fail "sbatch: $enough"
wait_jobs 400 "$enough"
expect_completed "$enough" "the task again with the script's --mem=512M"
expect_copies_answers "$NETRUNNER_RESULTS/shard-0.jsonl" "the task after the memory kill"
export NETRUNNER_PHOTOS=$shared/photos
say "task ${small}_0 with --mem=20M killed by Slurm (\"$(grep -m1 -o 'exceeded memory limit ([0-9]* > [0-9]*)' "$NETRUNNER_RESULTS/logs/bulk-${small}_0.log")\", $oom_state, $kept whole lines kept); run again with 512M: the single run's answers for all $((images * 8)) copies"

# --- 3. A replica dies under load. serve on n1, n2 and n3 (one thread each), nginx on lb with
# deploy/nginx/netrunner-serve.conf as shipped but for its addresses, 32 connections from ctl.
port=8081
start_serve() {
  start_on "$1" "$base/log/serve-$1.out" "$netrunner" serve --models "$base/models" --host "${address[$1]}" \
    --port "$port" --threads 1 --allowed-host "${address[lb]}" --allowed-host "${address[$1]}"
  serve_pid[$1]=$!
}
# Waits, within $2 seconds, until host $1's replica answers ready.
wait_ready() { wait_up "$1" "$2" "http://${address[$1]}:$port/v2/health/ready" "${serve_pid[$1]}" serve "the replica"; }
mkdir -p "$base/models"  # the embedded models only
for host in n1 n2 n3; do start_serve "$host"; done
for host in n1 n2 n3; do wait_ready "$host" 60; done
mkdir -p "$base/nginx"
servers=""
for host in n1 n2 n3; do servers+="    server ${address[$host]}:$port max_fails=1 fail_timeout=2s;"$'\n'; done
python3 "$root/tools/cluster/nginx_site.py" "$root/deploy/nginx/netrunner-serve.conf" "$base/nginx" "$servers" \
  "${address[lb]}:8080" || fail "deploy/nginx/netrunner-serve.conf changed shape"
start_on lb "$base/nginx/nginx.out" nginx -p "$base/nginx" -c "$base/nginx/nginx.conf"
pids+=($!)
entry=http://${address[lb]}:8080
deadline=$((SECONDS + 30))
until ip netns exec "$prefix-ctl" curl -sf -o /dev/null "$entry/v2/health/ready"; do
  ((SECONDS < deadline)) || fail "nginx on lb does not answer: $(cat "$base/nginx/error.log")"
  sleep 0.1
done
model=mobilenet-v2-1.0-224-uint8
photo=$root/Tests/Fixtures/Photos/test/coffee.jpg
answer=$(ip netns exec "$prefix-ctl" curl -sf --data-binary @"$photo" "$entry/v1/models/$model/classify") \
  || fail "classify through nginx failed"
grep -q "\"index\":967," <<<"$answer" || fail "classify through nginx: $answer"
say "serve on n1 n2 n3 behind nginx on lb (${address[lb]}:8080): coffee.jpg is espresso"

# Waits until $1 seconds have passed since $load_started.
sleep_until() {
  while awk -v now="$(since "$load_started")" -v until="$1" 'BEGIN { exit !(now < until) }'; do sleep 0.05; done
}
timeline() { python3 "$root/tools/cluster/timeline.py" "$@"; }

# kill -9 of n2's replica 8 s in, started again at 14 s. nginx's policy (proxy_next_upstream
# error timeout http_502 http_503 non_idempotent, 3 tries): a request that meets the dead or the
# loading replica is sent to another, so none is lost.
load=$base/load-kill.jsonl
load_started=$(date +%s.%N)
ip netns exec "$prefix-ctl" python3 "$root/tools/cluster/load.py" "$entry/v1/models/$model/classify" "$photo" 32 24 "$load" &
load_pid=$!
sleep_until 8
disown "${serve_pid[n2]}"
kill -KILL "${serve_pid[n2]}"
killed=$(since "$load_started")
sleep_until 14
start_serve n2
restarted=$(since "$load_started")
wait_ready n2 30
ready=$(since "$load_started")
wait "$load_pid" || fail "the load client failed"
summary=$(timeline "$load" "before:1:$killed" "n2 dead:$killed:$restarted" "n2 loading:$restarted:$ready" "after:$ready:24")
echo "$summary" | sed 's/^/    /'
lost=$(timeline "$load" --failed)
requests=$(wc -l <"$load")
from=$(awk -v s="$load_started" -v r="$ready" 'BEGIN { printf "%.3f", s + r }')
rejoined=$(awk -v from="$from" -v n2="${address[n2]}:$port" '$1 >= from && $3 == n2 && $2 == 200' "$base/nginx/access.log" | wc -l)
retried=$(awk '$3 ~ /,$/' "$base/nginx/access.log" | wc -l)
[[ "$lost" == 0 ]] || fail "$lost of $requests requests failed through nginx while a replica was killed (its policy retries them): $summary"
((rejoined > 0)) || fail "n2's replica took no requests after it came back"
say "replica n2 killed (-9) at ${killed}s under 32 connections, started again at ${restarted}s, ready at ${ready}s: 0 of $requests requests failed, $retried sent on to another replica by nginx, $rejoined answered by n2 after it rejoined"

# SIGTERM to n3's replica under load: it stops taking connections and finishes what it has.
load=$base/load-drain.jsonl
load_started=$(date +%s.%N)
ip netns exec "$prefix-ctl" python3 "$root/tools/cluster/load.py" "$entry/v1/models/$model/classify" "$photo" 32 10 "$load" &
load_pid=$!
sleep_until 3
kill -TERM "${serve_pid[n3]}"
drained=0
wait "${serve_pid[n3]}" || drained=$?
unset 'serve_pid[n3]'
wait "$load_pid" || fail "the load client failed"
lost=$(timeline "$load" --failed)
[[ "$drained" == 0 ]] || fail "n3's replica exited $drained on SIGTERM"
[[ "$lost" == 0 ]] || fail "$lost requests failed while n3 drained: $(timeline "$load" all:0:10)"
say "replica n3 stopped with SIGTERM under load: drained, exit 0, 0 of $(wc -l <"$load") requests failed"

# --- 4. The hub across the network: PostgreSQL on db, hub nodes on n1 and n2 sharing it (and the
# shared folder's files), clients on ctl and n3.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -n "$pg_bin" ]] || fail "no PostgreSQL (scripts/start-test-postgres.sh installs Debian's postgresql)"
pg=$base/pg
mkdir -p "$pg"
chown postgres "$pg"
su postgres -s /bin/sh -c "'$pg_bin/initdb' -D '$pg/data' -A trust -U postgres --no-sync" >"$base/log/initdb.out" 2>&1 \
  || fail "initdb: $(tail -n 5 "$base/log/initdb.out")"
echo "host all all 10.213.0.0/24 trust" >>"$pg/data/pg_hba.conf"
# pg_ctl on db: the server listens on db's address only, its socket in its own folder.
pg_ctl() {
  on db su postgres -s /bin/sh -c "'$pg_bin/pg_ctl' -D '$pg/data' -l '$pg/postgres.log' -w -t 120 $*" \
    >>"$base/log/pg_ctl.out" 2>&1
}
pg_ctl "-o \"-p 5432 -k $pg -c listen_addresses=${address[db]}\" start" || fail "PostgreSQL did not start on db"
pg_started=1
database="postgres://postgres@${address[db]}:5432/postgres?tlsmode=disable"
key=cluster-admin-key
hub_port=8090
start_hub() {
  start_on "$1" "$base/log/hub-$1.out" "$netrunner" hub serve --data "$shared/hub" --database "$database" \
    --host "${address[$1]}" --port "$hub_port" --admin-key "$key" --allowed-host "${address[$1]}"
  hub_pid[$1]=$!
}
wait_hub() { wait_up "$1" "$2" "http://${address[$1]}:$hub_port/v1/health" "${hub_pid[$1]}" hub "the hub"; }
for host in n1 n2; do start_hub "$host"; done
for host in n1 n2; do wait_hub "$host" 60; done
# netrunner's hub commands on host $1 against the hub on host $2.
hub_on() {
  local host=$1 hub=$2
  shift 2
  on "$host" env NETRUNNER_HUB="http://${address[$hub]}:$hub_port" NETRUNNER_HUB_TOKEN="$key" \
    NETRUNNER_CACHE_DIR="$base/cache-$host" "$netrunner" hub "$@"
}
say "PostgreSQL on db (${address[db]}:5432), hub nodes on n1 and n2 sharing it"

# Pushes on both nodes at once: 3 each, of two models, one name; then alias moves on both at once.
t0=$(date +%s.%N)
pushes=()
for round in 1 2 3; do
  for host in n1 n2; do
    file=$root/Models/mobilenet_v2_1.0_224_uint8_metadata.tflite
    [[ $host == n2 ]] && file=$root/Models/mobilenet_v2_1.0_224_int8.tflite
    hub_on ctl "$host" push "$file" --name mobilenet >"$base/log/push-$host-$round.out" 2>&1 &
    pushes+=($!)
  done
done
for pid in "${pushes[@]}"; do wait "$pid" || fail "a push failed: $(cat "$base"/log/push-*.out)"; done
model_json() { ip netns exec "$prefix-ctl" curl -sf "http://${address[$1]}:$hub_port/v1/models/mobilenet"; }
numbers=$(model_json n2 | python3 -c 'import json, sys; print(" ".join(sorted(str(v["version"]) for v in json.load(sys.stdin)["versions"])))') \
  || fail "the model's versions on n2"
[[ "$numbers" == "1 2 3 4 5 6" ]] || fail "versions after 6 pushes: $numbers"
hub_on ctl n1 alias mobilenet production 2 >"$base/log/alias-n1.out" 2>&1 &
first=$!
hub_on ctl n2 alias mobilenet staging 5 >"$base/log/alias-n2.out" 2>&1 &
second=$!
wait "$first" && wait "$second" || fail "alias moves: $(cat "$base"/log/alias-*.out)"
say "6 pushes, 3 on each node at once, in $(since "$t0")s: versions $numbers; production and staging moved on the two nodes at once"

# PostgreSQL restarted while the float model (14 MB) is being pushed to n1.
big=$root/Models/mobilenet_v2_1.0_224_float32.tflite
hub_on ctl n1 push "$big" --name mobilenet >"$base/log/push-restart.out" 2>&1 &
push_pid=$!
# Once the hub has a part of the upload (a file under its uploads), or after 3 s.
deadline=$((SECONDS + 3))
while ((SECONDS < deadline)) && [[ -z "$(find "$shared/hub" -newer "$base/log/alias-n2.out" -type f -size +100k 2>/dev/null)" ]]; do
  sleep 0.02
done
restart_started=$(date +%s.%N)
pg_ctl "-m fast -o \"-p 5432 -k $pg -c listen_addresses=${address[db]}\" restart" || fail "PostgreSQL did not restart"
restart_s=$(since "$restart_started")
pushed=0
wait "$push_pid" || pushed=$?
push_text=$(cat "$base/log/push-restart.out")
# The hub connects again for up to 5 s before an operation gives up, so a restart's blip is not
# seen; were the restart to land on a statement in flight, the push fails with a 503 to retry.
[[ "$pushed" == 0 ]] || grep -q "try again" <<<"$push_text" || fail "the push during the restart: $push_text"
say "PostgreSQL restarted (${restart_s}s) during a 14 MB push to n1: push exit $pushed: $(tail -n 1 <<<"$push_text")"
# Whatever the push answered: no half version, every alias's target there, every version's file
# whole, on both nodes alike.
first_view=$(model_json n1) || fail "the model on n1 after the restart"
second_view=$(model_json n2) || fail "the model on n2 after the restart"
state=$(python3 - "$first_view" "$second_view" "$shared/hub" <<'PY'
import hashlib, json, os, sys
first, second = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if first != second:
    sys.exit(f"the two nodes disagree: {first} vs {second}")
numbers = {version["version"] for version in first["versions"]}
for version in first["versions"]:
    digest = version["sha256"]
    found = [os.path.join(root, name) for root, _, names in os.walk(os.path.join(sys.argv[3], "blobs"))
             for name in names if name.startswith(digest)]
    if not found:
        sys.exit(f"version {version['version']}: no file for {digest}")
    if hashlib.sha256(open(found[0], "rb").read()).hexdigest() != digest or os.path.getsize(found[0]) != version["size"]:
        sys.exit(f"version {version['version']}: its file is not whole")
for alias in first["aliases"]:
    for target in alias["targets"]:
        if target["version"] not in numbers:
            sys.exit(f"alias {alias['alias']} points at {target['version']}, not a version")
print(f"{len(numbers)} versions ({' '.join(str(n) for n in sorted(numbers))}), aliases "
      + ", ".join(f"{a['alias']} -> {'+'.join(str(t['version']) for t in a['targets'])}" for a in first["aliases"]))
PY
) || fail "after the restart: $state"
say "after the restart: $state; no half version, every alias target a version, every file whole, both nodes alike"
again=$(hub_on ctl n2 push "$big" --name mobilenet --alias production 2>&1) || fail "a push after the restart: $again"
say "a push after the restart: $(tail -n 1 <<<"$again")"

# A client on n3: the model by alias; both hubs down: the verified local copy answers; the hubs
# back and production moved to version 1: version 1.
classify_on_n3() {  # the stderr file
  on n3 env NETRUNNER_HUB="http://${address[n1]}:$hub_port" NETRUNNER_CACHE_DIR="$base/cache-n3" \
    "$netrunner" classify --model hub:mobilenet@production --json "$photo" 2>"$1"
}
production=$(model_json n1 | python3 -c 'import json, sys; print(next(a["targets"][0]["version"] for a in json.load(sys.stdin)["aliases"] if a["alias"] == "production"))')
answer=$(classify_on_n3 "$base/log/n3-1.err") || fail "classify on n3: $(cat "$base/log/n3-1.err")"
grep -q "\"index\":967," <<<"$answer" && grep -q "is version $production " "$base/log/n3-1.err" \
  || fail "classify on n3 (production is $production): $answer $(cat "$base/log/n3-1.err")"
for host in n1 n2; do kill -TERM "${hub_pid[$host]}"; { wait "${hub_pid[$host]}" || true; } 2>/dev/null; done
answer=$(classify_on_n3 "$base/log/n3-2.err") || fail "classify on n3 with the hubs down: $(cat "$base/log/n3-2.err")"
grep -q "\"index\":967," <<<"$answer" || fail "classify on n3 with the hubs down: $answer"
offline=$(grep -m1 "hub:mobilenet@production" "$base/log/n3-2.err" || true)
for host in n1 n2; do start_hub "$host"; done
for host in n1 n2; do wait_hub "$host" 60; done
hub_on ctl n2 alias mobilenet production 1 >"$base/log/alias-back.out" 2>&1 || fail "alias: $(cat "$base/log/alias-back.out")"
answer=$(classify_on_n3 "$base/log/n3-3.err") || fail "classify on n3 after production moved: $(cat "$base/log/n3-3.err")"
grep -q "is version 1 " "$base/log/n3-3.err" || fail "the client on n3 did not take version 1: $(cat "$base/log/n3-3.err")"
say "a client on n3: production (version $production) answered; both hubs down: its local copy answered (\"$offline\"); production moved to 1 on n2: version 1"

echo "PASS test-cluster: $images photos, 6 tasks: three nodes ${spread_s}s, one node ${one_s}s, single run ${single_s}s; node n2 killed mid-array: down after ${down_s}s, every photo answered once ${recovered_s}s after the kill; a replica killed under 32 connections: 0 of $requests requests lost; two hub nodes on PostgreSQL restarted mid-push: nothing lost; $(since "$started")s in all"
