"""Put a model and its data on the accelerator, wait for it, read its memory use."""

import torch
from torch import nn

device = torch.device("cuda")

model = nn.Linear(256, 128).to(device)  # move the parameters to the device
batch = torch.randn(64, 256).to(device)  # copy a CPU tensor to the device
bias = torch.zeros(64, 128, device=device)  # or create it on the device directly

out = model(batch) + bias
torch.cuda.synchronize()  # wait until the queued work has finished
print(out.device, f"{torch.cuda.memory_allocated() / 2**20:.1f} MiB allocated")
