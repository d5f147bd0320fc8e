#!/usr/bin/env bash
# Submits bulk.sbatch as a job array and bulk-merge.sbatch after it: see submit.sh.
#
#   NETRUNNER_SHARED=/shared/netrunner NETRUNNER_SHARD_COUNT=16 deploy/slurm/submit-bulk.sh [SBATCH OPTION...]
#   deploy/slurm/submit-bulk.sh --merge-after JOB[:JOB...] [SBATCH OPTION...]
exec "$(dirname "${BASH_SOURCE[0]}")/submit.sh" bulk "$@"
