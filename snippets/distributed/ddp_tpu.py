"""One data-parallel training step with DDP, one process per device. Start it with launch_tpu.sh."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    dist.init_process_group(backend="tpu_dist")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun
    device = torch.device("tpu", 0)  # each process sees only its own device, as tpu:0

    torch.manual_seed(0)  # same initial weights on every rank
    model = nn.Linear(32, 4).to(device)
    ddp_model = DDP(model)  # no device_ids on TPU
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)

    torch.manual_seed(1 + rank)  # different data on every rank
    inputs = torch.randn(8, 32, device=device)
    targets = torch.randn(8, 4, device=device)

    optimizer.zero_grad()
    loss = nn.functional.mse_loss(ddp_model(inputs), targets)
    loss.backward()  # DDP averages the gradients across ranks here
    optimizer.step()

    # Every rank calls .item(): no rank skips work that the others do.
    print(f"rank {rank} (local {local_rank}): loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
