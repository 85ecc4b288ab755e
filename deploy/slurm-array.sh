#!/usr/bin/env bash
# A folder of meal photos analysed as a Slurm job array: one task per shard. `--shard auto` takes the task's place in
# the array from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_STEP and SLURM_ARRAY_TASK_COUNT, so any
# --array range works (0-15, 1-16, 0-30:2). Each task writes part-<task>.ndjson; afterwards
#   foodmoment merge-results results/part-*.ndjson > results.ndjson
# joins them (or submit it with --dependency=afterok:<array job id>). A requeued task resumes from its own journal.
#   sbatch deploy/slurm-array.sh /path/to/photos
#SBATCH --job-name=foodmoment-analyze
#SBATCH --array=0-15
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=02:00:00
#SBATCH --output=logs/foodmoment-%A_%a.log
set -euo pipefail
photos="${1:?give the photo folder}"
results="${FOODMOMENT_RESULTS:-results}"
mkdir -p "$results"
part="$results/part-$SLURM_ARRAY_TASK_ID.ndjson"
foodmoment analyze "$photos" --ndjson --shard auto --threads "${SLURM_CPUS_PER_TASK:-2}" \
  --db "$results/journal-$SLURM_ARRAY_TASK_ID.sqlite" > "$part.tmp"
mv "$part.tmp" "$part"
