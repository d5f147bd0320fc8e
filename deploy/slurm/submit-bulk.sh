#!/usr/bin/env bash
# Submits bulk.sbatch as a job array of NETRUNNER_SHARD_COUNT tasks (default 8) and
# bulk-merge.sbatch after it (--dependency=afterok), both with this environment (the paths
# bulk.sbatch lists, with its defaults); the jobs' logs go to $NETRUNNER_RESULTS/logs/.
# Prints the two job IDs, "ARRAY MERGE", on stdout.
#
#   NETRUNNER_SHARED=/shared/netrunner NETRUNNER_SHARD_COUNT=16 deploy/slurm/submit-bulk.sh [SBATCH OPTION...]
#   deploy/slurm/submit-bulk.sh --merge-after JOB[:JOB...] [SBATCH OPTION...]
#
# The second form submits only the merge, after the given jobs succeed: after a failed task was
# rerun (the array again after scontrol requeue, or the new one-task array of sbatch --array=K).
# The options (--partition, --account, --cpus-per-task, --time ...) go to every sbatch call.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shared=${NETRUNNER_SHARED:-/shared/netrunner}
export NETRUNNER_RESULTS=${NETRUNNER_RESULTS:-$shared/results/bulk}
export NETRUNNER_SHARD_COUNT=${NETRUNNER_SHARD_COUNT:-8}
if ! [[ "$NETRUNNER_SHARD_COUNT" =~ ^[1-9][0-9]{0,5}$ ]]; then
  echo "submit-bulk: NETRUNNER_SHARD_COUNT must be a whole number from 1 to 999999; got '$NETRUNNER_SHARD_COUNT'." >&2
  exit 2
fi
last=$((NETRUNNER_SHARD_COUNT - 1))
mkdir -p "$NETRUNNER_RESULTS/logs"

# --parsable prints "JOBID" or "JOBID;CLUSTER".
submit_merge() {
  local job
  job=$(sbatch --parsable --export=ALL --dependency="afterok:$1" \
    --output="$NETRUNNER_RESULTS/logs/bulk-merge-%j.log" "${@:2}" "$here/bulk-merge.sbatch")
  echo "${job%%;*}"
}

if [[ "${1:-}" == "--merge-after" ]]; then
  after=${2:?submit-bulk: --merge-after needs the job IDs to wait for, JOB[:JOB...]}
  merge=$(submit_merge "$after" "${@:3}")
  echo "Submitted the bulk merge: job $merge, after $after. Results in $NETRUNNER_RESULTS." >&2
  echo "$merge"
  exit 0
fi

array=$(sbatch --parsable --export=ALL --array="0-$last" --output="$NETRUNNER_RESULTS/logs/bulk-%A_%a.log" \
  "$@" "$here/bulk.sbatch")
array=${array%%;*}
merge=$(submit_merge "$array" "$@")

cat >&2 <<TEXT
Submitted bulk: array job $array (shards 0-$last of $NETRUNNER_SHARD_COUNT), merge job $merge after it.
Results in $NETRUNNER_RESULTS, logs in $NETRUNNER_RESULTS/logs. If task K fails, fix the cause, then
rerun it and the merge (in this environment):
  scontrol requeue ${array}_K; scontrol update JobId=${array}_K StartTime=now
  scancel $merge; $0 --merge-after $array
TEXT
echo "$array $merge"
