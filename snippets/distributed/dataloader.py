"""Feed the device from a DataLoader: load in the main process, keep batch shapes fixed."""

import torch
from torch.utils.data import DataLoader, TensorDataset

accelerator = torch.accelerator.current_accelerator(check_available=True)
device = accelerator if accelerator is not None else torch.device("cpu")

dataset = TensorDataset(torch.randn(100, 8), torch.randint(0, 2, (100,)))
loader = DataLoader(
    dataset,
    batch_size=16,
    shuffle=True,
    num_workers=0,  # no worker processes: forking after the TPU runtime starts can deadlock
    drop_last=True,  # drop the short last batch, so every batch has the same shape
)

shapes = set()
for inputs, labels in loader:
    inputs, labels = inputs.to(device), labels.to(device)
    shapes.add(tuple(inputs.shape))
print(f"{len(loader)} batches on {device.type}, shapes {sorted(shapes)}")
assert shapes == {(16, 8)}  # 100 samples: 6 full batches, the last 4 samples dropped
print("ok")
