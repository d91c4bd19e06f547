"""Start one worker per TPU device from Python instead of the shell.

torch.tpu.distributed.set_tpu_launch_env (experimental in TorchTPU 0.2.0) fills in the TPU
launch variables in os.environ of the parent process; the workers inherit them. It never
overwrites a variable that is already set.
"""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.tpu import distributed as tpu_distributed

NPROCS = 4  # TPU devices on this host; set_tpu_launch_env defaults to the number it finds


def train(rank: int, port: int) -> None:
    dist.init_process_group(
        backend="tpu_dist", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=NPROCS
    )
    device = torch.device("tpu", 0)  # each process sees its own device as tpu:0
    total = torch.full((1,), float(rank), device=device)
    dist.all_reduce(total)  # every rank joins the collective
    print(f"rank {rank}: sum of all ranks {total.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    tpu_distributed.set_tpu_launch_env(nproc_per_node=NPROCS)  # before any worker starts
    mp.spawn(train, args=(29500,), nprocs=NPROCS)
