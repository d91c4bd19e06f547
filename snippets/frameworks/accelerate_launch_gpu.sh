#!/usr/bin/env bash
set -euo pipefail
# Eight GPU processes on one host: Accelerate starts them with torchrun and NCCL.
accelerate launch --multi_gpu --num_processes 8 accelerate_gpu.py
