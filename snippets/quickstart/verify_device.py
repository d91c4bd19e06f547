"""Check that PyTorch can see and use the TPU. Run it on the TPU VM after install.sh."""

import torch

# torch-tpu registers itself as a PyTorch backend, so `import torch` already loads it.
# Importing it by name as well makes a missing install fail here, with a clear error.
import torch_tpu  # noqa: F401

# check_available=True returns None when no accelerator device is present at run time.
accelerator = torch.accelerator.current_accelerator(check_available=True)
if accelerator is None or accelerator.type != "tpu":
    raise SystemExit(f"no TPU found: the current accelerator is {accelerator}")

x = torch.ones(2, 2, device="tpu")
print("tensor on:", x.device)
# The runtime has started (x exists), so this counts the devices this process can address.
print("TPU devices visible to this process:", torch.accelerator.device_count())
# .item() copies the result to the host, so the TPU must really run the matmul.
print("sum of x @ x:", (x @ x).sum().item())
