"""Mixed precision: run the forward pass in bfloat16 under autocast, keep fp32 weights."""

import torch
from torch import nn

device = torch.device("cuda")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(32, 64, device=device)
targets = torch.randn(32, 1, device=device)

with torch.amp.autocast("cuda", dtype=torch.bfloat16):
    outputs = model(inputs)  # the matmuls run in bfloat16
    loss = nn.functional.mse_loss(outputs.float(), targets)  # compute the loss in fp32
loss.backward()  # outside autocast; gradients come back in fp32, like the weights
optimizer.step()
print(f"outputs {outputs.dtype}, grads {model[0].weight.grad.dtype}, loss {loss.item():.4f}")
