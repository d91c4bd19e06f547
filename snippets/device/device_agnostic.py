"""Device-agnostic setup: one file for TPU, GPU and CPU-only machines."""

import io

import torch
from torch import nn


def pick_device() -> torch.device:
    """The accelerator of this machine (tpu, cuda, ...), else the CPU."""
    # A torch.device, or None when PyTorch has no accelerator backend. With
    # check_available=True it is also None when the backend is there but no device is.
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    if accelerator is None:
        return torch.device("cpu")
    return accelerator


device = pick_device()
torch.manual_seed(0)  # seeds the CPU generator and the accelerator's


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))


# A checkpoint written on another machine (here: on the CPU, into memory).
buffer = io.BytesIO()
torch.save(build_model().state_dict(), buffer)
buffer.seek(0)

# Build the model on the device itself: the parameters are allocated there, with no
# full copy in host memory first (what runs out of RAM with big models).
with torch.device(device):
    model = build_model()

# map_location puts every tensor of the checkpoint on this run's device,
# whichever device saved it.
state = torch.load(buffer, map_location=device, weights_only=True)
model.load_state_dict(state)

x = torch.randn(3, 16, device=device)
y = model(x)
print(f"device {device.type}: output {tuple(y.shape)} on {y.device.type}")
assert all(p.device.type == device.type for p in model.parameters())
print("ok")
