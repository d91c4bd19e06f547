"""Docs: call torch.cuda.synchronize() and dist.init_process_group("nccl") on GPUs.

x[x > 0] and t.item() and f"cuda:{rank}" appear only in this docstring.
"""

import numpy as np
import torch

# torch.cuda.synchronize(); model.cuda(); import torch_xla
NOTE = "torch.cuda.synchronize() import torch_xla device='cuda'"
backend_name = "nccl"  # a string that is never passed as a backend


def describe(x, values):
    print("model.cuda() is CUDA only; use x.to('cuda')")
    y = x.to("cpu")
    z = torch.zeros(2, device="cpu")
    idx = np.nonzero(values)
    first = x[0]
    sliced = x[1:3]
    total = x.sum().item()  # outside any loop
    for v in values:
        print(v, backend_name)
    workers = torch.utils.data.DataLoader(values, num_workers=0)
    compiled = torch.compile(describe, mode="default", fullgraph=False)
    label = f"cpu:{len(values)}"
    return y, z, idx, first, sliced, total, workers, compiled, label
