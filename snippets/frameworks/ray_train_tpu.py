"""Ray Train on TPU workers (ray 2.58 or newer): each worker gets a tpu device and tpu_dist."""

import ray.train
import ray.train.torch
import torch
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer


def train_loop(config):
    device = ray.train.torch.get_device()  # torch.device("tpu")
    model = ray.train.torch.prepare_model(torch.nn.Linear(32, 1))  # DDP without device_ids
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(config["steps"]):
        loss = model(torch.randn(8, 32, device=device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        ray.train.report({"step": step, "loss": loss.item()})


trainer = TorchTrainer(
    train_loop,
    train_loop_config={"steps": 10},
    scaling_config=ScalingConfig(
        num_workers=8,
        use_tpu=True,
        topology="2x4",
        accelerator_type="TPU-V6E",
        resources_per_worker={"TPU": 1},
    ),
)
print(trainer.fit().metrics)
