import torch.distributed as dist
from torch.utils.data import DataLoader


def init(dataset):
    dist.init_process_group()
    return DataLoader(dataset, num_workers=4)
