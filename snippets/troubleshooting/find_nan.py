"""Find the layer that first produces a NaN or inf, with forward hooks.

On TPU, run the check in Debug Eager: Fused Eager runs many ops as one compiled region,
so an error surfaces later than the line that caused it, while Debug Eager runs each op
on its own and waits for it. Add TORCH_SHOW_CPP_STACKTRACES=1 for C++ frames in errors.
The same file runs on a CPU-only machine, without the TPU mode switch.
"""

import contextlib

import torch
from torch import nn


class Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)  # NaN for negative inputs: the bug to find


accelerator = torch.accelerator.current_accelerator(check_available=True)
device = accelerator if accelerator is not None else torch.device("cpu")
if device.type == "tpu":
    debug_mode = torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING)
else:
    debug_mode = contextlib.nullcontext()


def stop_at_non_finite(name: str):
    def hook(module: nn.Module, inputs, output: torch.Tensor) -> None:
        if not torch.isfinite(output).all():  # reads the value: a sync after every layer
            raise FloatingPointError(f"first non-finite output: layer '{name}' ({module})")

    return hook


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), Log(), nn.Linear(4, 2)).to(device)
for name, module in model.named_modules():
    if name:  # skip the container itself
        module.register_forward_hook(stop_at_non_finite(name))

with debug_mode:
    try:
        model(torch.randn(8, 4, device=device))
    except FloatingPointError as err:
        print(err)  # first non-finite output: layer '1' (Log())
