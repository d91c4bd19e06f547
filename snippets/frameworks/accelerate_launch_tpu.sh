#!/usr/bin/env bash
set -euo pipefail
# One process: Accelerate 1.16.0 has no multi-process backend for the tpu device.
# On torch 2.13, save_state() reads the TPU's random state through a call TorchTPU keeps
# internal; this variable turns its error into a one-time warning.
export TORCH_TPU_ALLOW_LEGACY_DEVICE_APIS=1
python accelerate_tpu.py
