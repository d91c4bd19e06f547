#!/usr/bin/env bash
# Install TorchTPU into a fresh virtual environment on a Cloud TPU VM.
set -euo pipefail

# torch-tpu 0.2.0 needs Python 3.11 or newer.
python3.11 -m venv ~/venv-torchtpu
source ~/venv-torchtpu/bin/activate
python -m pip install --upgrade pip

# Install torch_tpu into the empty environment and let pip choose a torch that fits it
# (0.2.0 accepts torch 2.11 to 2.15). Do not install torch first: a CUDA build of torch
# brings gigabytes of CUDA libraries that a TPU VM never uses.
python -m pip install "torch_tpu==0.2.0"

# Check which build of torch came in.
python -c 'import torch; print("torch", torch.__version__, "| CUDA build:", torch.version.cuda is not None)'

# If it says "CUDA build: True", swap in the CPU build of the same torch version:
#   TORCH_VERSION=$(python -c 'import torch; print(torch.__version__.split("+")[0])')
#   python -m pip install --force-reinstall --no-deps "torch==$TORCH_VERSION" \
#       --index-url https://download.pytorch.org/whl/cpu

# Optional, only for custom Pallas kernels (see the kernels page):
#   python -m pip install jax
