#!/usr/bin/env bash
# Start one training process per accelerator device on this machine.
set -euo pipefail

NUM_DEVICES=$(nvidia-smi --list-gpus | wc -l)

torchrun --nproc_per_node="$NUM_DEVICES" ddp_gpu.py
