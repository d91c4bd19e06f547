"""A small GPU training script, for the scanner's sample report."""

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
device = "cuda"
model = torch.nn.Linear(8, 2).to(device)
torch.backends.cuda.matmul.allow_tf32 = True
inputs = torch.randn(4, 8, device=device)
loss = model(inputs).sum()
loss.backward()
torch.cuda.synchronize()
print(loss.item())
