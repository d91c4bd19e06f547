"""A short training loop on TPU."""

import torch
from torch import nn

device = torch.device("tpu")

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
    print(f"step {step}: loss {loss.item():.4f}")
