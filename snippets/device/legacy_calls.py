"""torch.cuda.* calls and their device-neutral torch.accelerator.* replacements.

On TPU, use the right-hand column. TorchTPU 0.2.0 keeps torch.tpu.device_count() and
similar calls internal: calling them raises a RuntimeError that names the replacement.
torch.cuda.set_device(local_rank) has no entry: drop it, because each TorchTPU worker already
owns its device as index 0 and set_device_index(local_rank) raises on every rank but 0.
"""

import torch

CUDA_TO_ACCELERATOR = {
    "torch.cuda.is_available": "torch.accelerator.is_available",
    "torch.cuda.device_count": "torch.accelerator.device_count",
    "torch.cuda.current_device": "torch.accelerator.current_device_index",
    "torch.cuda.synchronize": "torch.accelerator.synchronize",
    "torch.cuda.memory_allocated": "torch.accelerator.memory_allocated",
    "torch.cuda.max_memory_allocated": "torch.accelerator.max_memory_allocated",
    "torch.cuda.reset_peak_memory_stats": "torch.accelerator.reset_peak_memory_stats",
}


def resolve(dotted_name: str):
    """Look up 'torch.a.b' on the installed torch; AttributeError if it is missing."""
    obj = torch
    for part in dotted_name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


for cuda_call, accelerator_call in CUDA_TO_ACCELERATOR.items():
    assert callable(resolve(cuda_call)) and callable(resolve(accelerator_call))
    print(f"{cuda_call + '()':40} -> {accelerator_call}()")
print(f"torch {torch.__version__}: all {len(CUDA_TO_ACCELERATOR)} replacements exist")
print("ok")
