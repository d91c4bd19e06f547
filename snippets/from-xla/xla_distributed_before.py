"""Data-parallel training with PyTorch/XLA's own helpers (before)."""

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(index: int) -> None:
    device = torch_xla.device()
    torch.manual_seed(0)
    model = nn.Linear(32, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = TensorDataset(torch.randn(256, 32), torch.randn(256, 4))
    loader = pl.MpDeviceLoader(DataLoader(dataset, batch_size=16), device)

    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        xm.optimizer_step(optimizer)  # all-reduce gradients, step, sync
    if xm.is_master_ordinal():
        print(f"loss {loss.item():.4f}")
        xm.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    torch_xla.launch(train)  # one process per XLA device
