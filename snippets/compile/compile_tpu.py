"""Compile the whole training step (forward, backward, optimizer) with torch.compile."""

import torch
from torch import nn

device = torch.device("tpu")

torch.manual_seed(0)
with torch.device(device):
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)  # required on TPU


@torch.compile(backend="tpu", dynamic=False)  # XLA backend, static shapes
def train_step(inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


for _ in range(5):
    inputs = torch.randn(32, 128, device=device)  # same shapes every step: compiled once
    labels = torch.randint(0, 10, (32,), device=device)
    loss = train_step(inputs, labels)  # the first call compiles, later calls reuse it
print(f"loss after 5 steps: {loss.item():.4f}")
