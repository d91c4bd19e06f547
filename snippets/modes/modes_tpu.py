"""Choose TorchTPU's eager execution mode: for the whole run, globally, or for one block.

For the whole run, from the shell. TorchTPU reads each environment variable once, on
first use, and keeps that value, so set them before Python imports torch:

    TORCH_TPU_DEFER_AND_FUSE=1 python train.py    # Fused Eager for the whole run

Without it, 0.2.0 starts in Strict Eager (DEFER_NEVER), or in Debug Eager when
TORCH_TPU_LAUNCH_BLOCKING is true. These mode APIs are marked experimental in TorchTPU 0.2.0.
"""

import torch

# Globally, from Python, for the rest of the process: torch.tpu.eager_mode is a property
# of the torch.tpu module, so assigning to it sets the mode (reading it returns the mode).
torch.tpu.eager_mode = torch.tpu.EagerMode.DEFER_AND_FUSE

x = torch.randn(1024, 1024, device="tpu")
y = torch.relu(x @ x) * 2  # recorded, then fused and compiled with its neighbours

# For one block: a context manager that restores the previous mode on exit.
# Debug Eager runs each op on its own and waits for it, so an error surfaces at the
# line that caused it (like CUDA_LAUNCH_BLOCKING=1). Slowest mode: for debugging only.
with torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING):
    z = torch.log(y + 1)

# Strict Eager: each op is sent on its own, asynchronously, as on a GPU.
with torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER):
    z = z / z.norm()

print(z.sum().item())
