"""A short training loop on TPU."""

import torch
import torch_xla
from torch import nn

device = torch_xla.device()  # older code: xm.xla_device()

torch.manual_seed(0)
model = nn.Linear(64, 8).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    inputs = torch.randn(16, 64, device=device)
    targets = torch.randn(16, 8, device=device)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    torch_xla.sync()  # older code: xm.mark_step(); cuts the lazy graph and runs it
    print(f"step {step}: loss {loss.item():.4f}")
