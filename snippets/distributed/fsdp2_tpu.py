"""Shard a model's parameters over all devices with FSDP2 (fully_shard). Run via launch_tpu.sh."""

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


def main() -> None:
    dist.init_process_group(backend="tpu_dist")
    mesh = init_device_mesh("tpu", (dist.get_world_size(),), mesh_dim_names=("fsdp",))

    torch.manual_seed(0)
    with torch.device(mesh.device_type):  # allocate on the device, not in host memory
        model = nn.Sequential(*(nn.Linear(512, 512) for _ in range(4)))
    for layer in model:  # shard each layer, then the root module
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)  # parameters are now DTensors split across the mesh

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.manual_seed(1 + dist.get_rank())  # different data on every rank
    inputs = torch.randn(16, 512, device=mesh.device_type)
    loss = model(inputs).pow(2).mean()
    loss.backward()  # gathers each layer's weights just in time, then reduce-scatters grads
    optimizer.step()
    print(f"rank {dist.get_rank()}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
