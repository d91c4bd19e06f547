"""WRONG, do not copy: `device` is the function current_accelerator, not a device."""

import torch
from torch import nn

model = nn.Linear(4, 2)
device = torch.accelerator.current_accelerator  # WRONG: not called, so not a device
model = model.to(device)  # TypeError: to() received an invalid combination of arguments
print(f"model on {next(model.parameters()).device}")
print("ok")
