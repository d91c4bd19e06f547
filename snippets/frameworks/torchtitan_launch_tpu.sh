#!/usr/bin/env bash
# torchtitan on one TPU host: one process per device; torchtitan takes tpu and tpu_dist from
# PyTorch's own tables. No --compile.enable: llama3 uses FlexAttention, which torchtitan will
# only compile with Inductor, and TorchTPU refuses Inductor for TPU tensors.
set -euo pipefail
LAUNCH_ENV=$(python -m torch.tpu.distributed | grep -E '^[A-Z_]+=')
set -a
eval "$LAUNCH_ENV"
set +a
torchrun --nproc_per_node="$WORLD_SIZE" --node_rank="$NODE_RANK" -m torchtitan.train --module llama3 --config llama3_8b
