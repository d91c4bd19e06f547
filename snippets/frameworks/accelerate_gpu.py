"""A training loop with Hugging Face Accelerate on NVIDIA GPUs (start it with accelerate launch)."""

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed

set_seed(0)
accelerator = Accelerator(mixed_precision="fp16")
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(64, 32), torch.randn(64, 1))
loader = torch.utils.data.DataLoader(
    data, batch_size=8, shuffle=True, num_workers=4, pin_memory=True
)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

for step, (x, y) in enumerate(loader):
    if step == 2:
        break
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    accelerator.print(f"step {step}: loss {loss.item():.4f} on {accelerator.device}")
accelerator.save_state("checkpoint")
