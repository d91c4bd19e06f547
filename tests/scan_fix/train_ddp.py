"""A small GPU-style DDP training script of the handbook's own, written the way GPU trainers are:
the scanner's --fix test rewrites a copy, runs it on the CPU and scans it again.

Run: python train_ddp.py [steps] [out_dir]   (under torchrun it trains with DDP on NCCL)
"""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
out_dir = sys.argv[2] if len(sys.argv) > 2 else "out"
backend = "nccl"
device = "cuda"
ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    dist.init_process_group(backend=backend)
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
else:
    rank, local_rank = 0, 0
    if not torch.cuda.is_available():  # this script also runs on a laptop
        device = "cpu"
torch.manual_seed(1337 + rank)
torch.backends.cuda.matmul.allow_tf32 = True  # tf32 matmuls on Ampere and later
torch.backends.cudnn.allow_tf32 = True
use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
dtype = torch.bfloat16 if use_bf16 else torch.float16
device_type = "cuda" if "cuda" in device else "cpu"


class Net(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, width), nn.GELU(), nn.Linear(width, 1))

    def forward(self, x):
        return self.body(x)


model = Net().to(device)
if ddp:
    model = DDP(model, device_ids=[local_rank])
model = torch.compile(model, backend="eager")  # "eager": the test runs without a C++ compiler
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler(device="cuda", enabled=(dtype == torch.float16))
autocast = torch.autocast(device_type=device_type, dtype=dtype, enabled=device_type == "cuda")
target = torch.randn(8, 1)

start = time.time()
for step in range(steps):
    x = torch.randn(16, 8)
    if torch.cuda.is_available():
        x = x.pin_memory()
    x = x.to(device, non_blocking=True)
    y = (x @ target.to(device)).detach()
    with autocast:
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if step % 5 == 0 and rank == 0:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() / 2**20
        else:
            peak = 0.0
        print(f"step {step} loss {loss.item():.4f} peak {peak:.1f} MiB {time.time() - start:.2f}s")
if rank == 0:
    os.makedirs(out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out_dir, "ckpt.pt"))
    print(f"final loss {loss.item():.4f}")
if ddp:
    dist.destroy_process_group()
