#!/usr/bin/env bash
# Start one training process per accelerator device on this machine.
set -euo pipefail

# TorchTPU's wrapper prints what the workers need (TPU topology, WORLD_SIZE, ...) as KEY=VALUE.
# Export them so torchrun and every worker it starts inherit them.
eval "$(python -m torch_tpu._internal.distributed.launchers.singlehost_wrapper | sed 's/^/export /')"
NUM_DEVICES=$WORLD_SIZE

torchrun --nproc_per_node="$NUM_DEVICES" ddp_tpu.py
