#!/usr/bin/env bash
# Install TorchTPU into a fresh virtual environment on a Cloud TPU VM.
set -euo pipefail

# torch-tpu 0.2.0 needs Python 3.11 or newer.
python3.11 -m venv ~/venv-torchtpu
source ~/venv-torchtpu/bin/activate
python -m pip install --upgrade pip

# 1. torch first: the CPU build, from PyTorch's CPU wheel index, in the range that torch-tpu
#    0.2.0 accepts (torch>=2.11.0,<=2.15.0). Left to PyPI, pip would pick the default torch
#    wheel, which on Linux is the CUDA build with gigabytes of nvidia-* packages a TPU VM never uses.
python -m pip install "torch>=2.11.0,<=2.15.0" --index-url https://download.pytorch.org/whl/cpu

# 2. Then torch-tpu (it also brings libtpu>=0.0.50). The torch installed above already meets its
#    requirement, so pip keeps that CPU build.
python -m pip install "torch-tpu==0.2.0"

# Check the build: expect a "+cpu" version and "CUDA build: False".
python -c 'import torch; print("torch", torch.__version__, "| CUDA build:", torch.version.cuda is not None)'

# Optional, only for custom Pallas kernels and torch.tpu.ops.splash_sdpa (see the kernels page):
#   python -m pip install jax
