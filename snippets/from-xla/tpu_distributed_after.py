"""Data-parallel training with plain PyTorch on TorchTPU (after). Launch as launch_tpu.sh does."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train() -> None:
    dist.init_process_group(backend="tpu_dist")
    device = torch.device("tpu", 0)  # each process sees its own device as tpu:0
    torch.manual_seed(0)
    model = DDP(nn.Linear(32, 4).to(device))  # no device_ids on TPU
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = TensorDataset(torch.randn(256, 32), torch.randn(256, 4))
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))

    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()
    final = loss.item()  # every rank materialises, so no rank's graph differs from the others
    if dist.get_rank() == 0:
        print(f"loss {final:.4f}")
        torch.save(model.module.state_dict(), "model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
