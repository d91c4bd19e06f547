#!/usr/bin/env bash
# torchtitan on one host of 8 GPUs: NCCL and the default compile backend, Inductor.
set -euo pipefail
torchrun --nproc_per_node=8 -m torchtitan.train --module llama3 --config llama3_8b \
  --compile.enable
