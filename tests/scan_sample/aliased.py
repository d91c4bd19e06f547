import torch.distributed as dist
import torch_xla.core.xla_model as xm
from torch import cuda as tc
from torch.cuda import amp
from torch_xla.core import xla_model as xmod


def train(model, batch):
    dist.init_process_group(backend="nccl")
    with amp.autocast():
        out = model(batch)
    tc.synchronize()
    xm.mark_step()
    xmod.mark_step()
    return out
