"""Start one worker per TPU device from Python instead of the shell.

torch.tpu.distributed.set_tpu_launch_env (experimental in TorchTPU 0.2.0) fills in the TPU
launch variables in os.environ of the parent process; the workers inherit them. It never
overwrites a variable that is already set.

torch.multiprocessing.spawn, unlike torchrun, passes each worker only its index. TorchTPU reads
RANK, LOCAL_RANK and WORLD_SIZE when its runtime starts in a worker, to give the worker a device
of its own, so each worker sets them before its first TPU call.
"""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.tpu import distributed as tpu_distributed

NPROCS = 4  # TPU devices on this host; set_tpu_launch_env defaults to the number it finds


def train(rank: int) -> None:
    # What torchrun would have set, on one host: before anything touches the TPU.
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(NPROCS))
    dist.init_process_group(backend="tpu_dist")  # MASTER_ADDR and MASTER_PORT come from the parent
    device = torch.device("tpu", 0)  # each worker owns one device and reaches it as tpu:0
    total = torch.full((1,), float(rank), device=device)
    dist.all_reduce(total)  # every rank joins the collective
    print(f"rank {rank}: sum of all ranks {total.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    tpu_distributed.set_tpu_launch_env(nproc_per_node=NPROCS)  # before any worker starts
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")  # on one host the helper leaves these unset
    os.environ.setdefault("MASTER_PORT", "29500")
    mp.spawn(train, nprocs=NPROCS)
