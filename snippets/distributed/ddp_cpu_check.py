"""The DDP step of ddp_tpu.py on a CPU-only machine: two processes, gloo backend.

The training step is the same code; the backend (gloo), the device (cpu) and the launcher
(mp.spawn instead of torchrun) differ, and a check at the end compares the weights of the
two ranks. Use it to test data-parallel code on a laptop or in CI: python ddp_cpu_check.py
"""

import gc
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def worker(rank: int, port: int) -> None:
    dist.init_process_group(
        backend="gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE
    )
    device = torch.device("cpu")

    torch.manual_seed(0)  # same initial weights on every rank
    model = nn.Linear(32, 4).to(device)
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)

    torch.manual_seed(1 + rank)  # different data on every rank
    inputs = torch.randn(8, 32, device=device)
    targets = torch.randn(8, 4, device=device)

    optimizer.zero_grad()
    loss = nn.functional.mse_loss(ddp_model(inputs), targets)
    loss.backward()  # DDP averages the gradients across ranks here
    optimizer.step()

    # Different data, same averaged gradients: all ranks must now hold the same weights.
    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(weights) for _ in range(WORLD_SIZE)]
    dist.all_gather(gathered, weights)
    in_sync = all(torch.equal(gathered[0], w) for w in gathered)
    print(f"rank {rank}: loss {loss.item():.4f}, weights in sync: {in_sync}")
    # Free DDP, which holds the gloo group, while Python is fully alive: a gloo group that
    # is only torn down at interpreter exit can abort the process (seen with torch 2.13).
    del ddp_model, optimizer
    gc.collect()
    dist.destroy_process_group()
    if not in_sync:
        raise RuntimeError(f"rank {rank}: weights differ across ranks after the step")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE)  # raises if a worker fails
    print("ok")
