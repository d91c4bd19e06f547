#!/usr/bin/env bash
# Reuse compiled programs across processes and runs (both caches are experimental).
set -euo pipefail

# Tier 2: one cache per host, in shared memory, used by all processes on it.
# On by default only when the world size is above 1; "disabled" turns it off.
export TORCH_TPU_TIER2_COMPILATION_CACHE=my_job

# Tier 3: a cache shared by every host and by later runs. Off unless you set it.
export TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT=gs://my-bucket/torch-tpu-cache

# TorchTPU reads each one once, on first use, and keeps it: export them before Python starts.
torchrun --nproc_per_node="${WORLD_SIZE:-4}" train.py
