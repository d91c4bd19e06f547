"""Training entry point. Mentions torch.cuda.synchronize() and "cuda" only in this docstring."""

import torch
import torch.distributed
import torch_xla
import triton
from torch.utils.data import DataLoader


def setup():
    torch.distributed.init_process_group("nccl")
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(4, 4).cuda()
    x = torch.zeros(3, device="cuda:0")
    torch.cuda.synchronize()
    loader = DataLoader(range(8), num_workers=4, pin_memory=True)
    return model, x, loader, torch_xla, triton


def step(model, x):
    idx = x.nonzero()
    y = x[x > 0]
    for _ in range(3):
        loss = model(x).sum()
        print(loss.item())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        model(x)
    return idx, y


fast = torch.compile(step, mode="reduce-overhead", fullgraph=True)
label = f"cuda:{torch.distributed.get_rank()}"
