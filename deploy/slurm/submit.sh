#!/usr/bin/env bash
# Submits KIND.sbatch (bulk or evaluate) as a job array of NETRUNNER_SHARD_COUNT tasks (default
# 8) and KIND-merge.sbatch after it (--dependency=afterok), both with this environment (the paths
# KIND.sbatch lists, with its defaults); the jobs' logs go to $NETRUNNER_RESULTS/logs/.
# Prints the two job IDs, "ARRAY MERGE", on stdout. submit-bulk.sh and submit-evaluate.sh call it.
#
#   NETRUNNER_SHARED=/shared/netrunner NETRUNNER_SHARD_COUNT=16 deploy/slurm/submit.sh KIND [SBATCH OPTION...]
#   deploy/slurm/submit.sh KIND --merge-after JOB[:JOB...] [SBATCH OPTION...]
#
# The second form submits only the merge, after the given jobs succeed: after a failed task was
# rerun (the array again after scontrol requeue, or the new one-task array of sbatch --array=K).
# The options (--partition, --account, --cpus-per-task, --time ...) go to every sbatch call.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kind=${1:-}
if [[ "$kind" != bulk && "$kind" != evaluate ]]; then
  echo "submit.sh: the first argument is bulk or evaluate; got '$kind'." >&2
  exit 2
fi
shift
shared=${NETRUNNER_SHARED:-/shared/netrunner}
export NETRUNNER_RESULTS=${NETRUNNER_RESULTS:-$shared/results/$kind}
export NETRUNNER_SHARD_COUNT=${NETRUNNER_SHARD_COUNT:-8}
if ! [[ "$NETRUNNER_SHARD_COUNT" =~ ^[1-9][0-9]{0,5}$ ]]; then
  echo "submit-$kind: NETRUNNER_SHARD_COUNT must be a whole number from 1 to 999999; got '$NETRUNNER_SHARD_COUNT'." >&2
  exit 2
fi
last=$((NETRUNNER_SHARD_COUNT - 1))
mkdir -p "$NETRUNNER_RESULTS/logs"

# --parsable prints "JOBID" or "JOBID;CLUSTER".
submit_merge() {
  local job
  job=$(sbatch --parsable --export=ALL --dependency="afterok:$1" \
    --output="$NETRUNNER_RESULTS/logs/$kind-merge-%j.log" "${@:2}" "$here/$kind-merge.sbatch")
  echo "${job%%;*}"
}

if [[ "${1:-}" == "--merge-after" ]]; then
  after=${2:?submit-$kind: --merge-after needs the job IDs to wait for, JOB[:JOB...]}
  merge=$(submit_merge "$after" "${@:3}")
  echo "Submitted the $kind merge: job $merge, after $after. Results in $NETRUNNER_RESULTS." >&2
  echo "$merge"
  exit 0
fi

array=$(sbatch --parsable --export=ALL --array="0-$last" --output="$NETRUNNER_RESULTS/logs/$kind-%A_%a.log" \
  "$@" "$here/$kind.sbatch")
array=${array%%;*}
merge=$(submit_merge "$array" "$@")

cat >&2 <<TEXT
Submitted $kind: array job $array (shards 0-$last of $NETRUNNER_SHARD_COUNT), merge job $merge after it.
Results in $NETRUNNER_RESULTS, logs in $NETRUNNER_RESULTS/logs. If task K fails, fix the cause, then
rerun it and the merge (in this environment):
  scontrol requeue ${array}_K; scontrol update JobId=${array}_K StartTime=now
  scancel $merge; $here/submit-$kind.sh --merge-after $array
TEXT
echo "$array $merge"
