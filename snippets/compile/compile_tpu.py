"""Put the whole training step (forward, backward, optimizer) in one compiled function.

Dynamo still splits it into graphs on torch 2.13. TorchTPU turns on Dynamo's
trace_autograd_ops, so backward() is traced into the forward pass's graph; zero_grad() is
skipped and runs eagerly, and optimizer.step() breaks the graph, so the parameter update is
a second graph. torch._dynamo.explain(train_step)(inputs, labels) lists graphs and breaks.
"""

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
    loss = loss.detach()  # before step(): a loss kept alive past its break splits off backward
    optimizer.step()
    return loss


for _ in range(5):
    inputs = torch.randn(32, 128, device=device)  # same shapes every step: compiled once
    labels = torch.randint(0, 10, (32,), device=device)
    loss = train_step(inputs, labels)  # the first call compiles, later calls reuse it
print(f"loss after 5 steps: {loss.item():.4f}")
