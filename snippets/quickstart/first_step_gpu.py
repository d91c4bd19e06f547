"""One training step of a small classifier on random data."""

import torch
from torch import nn

device = torch.device("cuda")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

inputs = torch.randn(16, 32, device=device)
labels = torch.randint(0, 10, (16,), device=device)

optimizer.zero_grad()
loss = nn.functional.cross_entropy(model(inputs), labels)
loss.backward()
optimizer.step()
print(f"loss {loss.item():.4f}")
