"""FIXED: call current_accelerator(), and fall back to the CPU when it returns None."""

import torch
from torch import nn

model = nn.Linear(4, 2)
device = torch.accelerator.current_accelerator(check_available=True)  # FIXED: called
if device is None:  # no accelerator on this machine
    device = torch.device("cpu")
model = model.to(device)
print(f"model on {next(model.parameters()).device}")
print("ok")
