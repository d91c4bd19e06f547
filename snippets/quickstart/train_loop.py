"""A device-agnostic training loop: the same file runs on TPU, GPU or CPU."""

import torch
from torch import nn

# The accelerator this PyTorch has (tpu, cuda, ...), or the CPU when there is none.
device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")

torch.manual_seed(0)
with torch.device(device):  # create the parameters on the device directly
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

# A tiny synthetic regression task: learn y = sum(x).
inputs = torch.randn(64, 8, device=device)
targets = inputs.sum(dim=1, keepdim=True)

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())  # one host sync per step; fine for a log line
    print(f"step {step}: loss {losses[-1]:.4f} on {device.type}")

if not losses[-1] < losses[0]:
    raise SystemExit(f"loss did not go down: {losses}")
print("ok")
