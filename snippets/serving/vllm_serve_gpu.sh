#!/usr/bin/env bash
# Serve a Hugging Face model on NVIDIA GPUs with vLLM.
set -euo pipefail

# The vllm package brings a CUDA build of PyTorch and vLLM's GPU kernels.
python3 -m venv ~/venv-vllm-gpu
source ~/venv-vllm-gpu/bin/activate
python -m pip install vllm

MODEL=${MODEL:-Qwen/Qwen3-0.6B}  # any model vLLM supports; downloaded on first start

# Default: the model runs through torch.compile and CUDA graphs. The first start compiles.
vllm serve "$MODEL" --max-model-len 4096

# To debug, skip compilation and run the model eagerly (slower):
#   vllm serve "$MODEL" --max-model-len 4096 --enforce-eager
