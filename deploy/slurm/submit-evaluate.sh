#!/usr/bin/env bash
# Submits evaluate.sbatch as a job array and evaluate-merge.sbatch after it: see submit.sh.
#
#   NETRUNNER_SHARED=/shared/netrunner NETRUNNER_SHARD_COUNT=16 deploy/slurm/submit-evaluate.sh [SBATCH OPTION...]
#   deploy/slurm/submit-evaluate.sh --merge-after JOB[:JOB...] [SBATCH OPTION...]
exec "$(dirname "${BASH_SOURCE[0]}")/submit.sh" evaluate "$@"
