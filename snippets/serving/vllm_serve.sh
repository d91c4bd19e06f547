#!/usr/bin/env bash
# Serve a Hugging Face model on TPU with vLLM and its TorchTPU platform plugin.
set -euo pipefail

# vllm-torchtpu installs vLLM itself plus the plugin (import name: vllm_torchtpu), which
# vLLM discovers on its own. Its 0.29.0 release installs on Python 3.12 only.
python3.12 -m venv ~/venv-vllm-tpu
source ~/venv-vllm-tpu/bin/activate
python -m pip install vllm-torchtpu

MODEL=${MODEL:-Qwen/Qwen3-0.6B}  # any model vLLM supports; downloaded on first start

# Default: the model runs through torch.compile(backend="tpu"). The first start compiles.
vllm serve "$MODEL" --max-model-len 4096

# To debug, skip compilation and run the model eagerly (slower):
#   vllm serve "$MODEL" --max-model-len 4096 --enforce-eager
