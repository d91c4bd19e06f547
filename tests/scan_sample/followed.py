import torch
import torch.distributed as dist

BACKEND = "nccl"
DEVICE = "cuda"
MODE = "max-autotune"


def main(local_rank, data):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torch.nn.Linear(2, 2).to(device)
    dist.init_process_group(BACKEND)
    dev = torch.device(DEVICE)
    rank_device = f"cuda:{local_rank}"
    data = data.to(rank_device)
    mask = data > 0
    picked = data[mask]
    compiled = torch.compile(model, mode=MODE)
    return model, dev, picked, compiled


def helper(x, device="cuda"):
    return x.to(device)
