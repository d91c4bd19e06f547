#!/usr/bin/env bash
# Start one training process per accelerator device on this machine.
set -euo pipefail

# TorchTPU's launch helper (experimental in 0.2.0) picks free ports, reads the TPU topology
# and prints KEY="VALUE" lines: TORCH_TPU_TOPOLOGY, TORCH_TPU_SLICEBUILDER_ADDRESSES,
# TORCH_TPU_XPROF_SESSION_ID, WORLD_SIZE (devices on this host) and NODE_RANK. Importing the
# package may print other lines too, so keep only the assignments.
LAUNCH_ENV=$(python -m torch.tpu.distributed | grep -E '^[A-Z_]+=')  # stops here if no TPU is found
set -a  # export what eval assigns, so torchrun and every worker it starts inherit it
eval "$LAUNCH_ENV"
set +a

torchrun --nproc_per_node="$WORLD_SIZE" --node_rank="$NODE_RANK" ddp_tpu.py
