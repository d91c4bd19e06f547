import torch
import torch.distributed as dist


def init(rank):
    dist.init_process_group()
    torch.cuda.set_device(rank)
