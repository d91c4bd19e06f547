"""What makes TorchTPU stop deferring and run the recorded work (materialisation).

In Fused Eager, ops are recorded and run mostly when a value is needed; the runtime may
also run them on its own. Each line marked SYNC forces a run: the recorded ops are
compiled and run, and the host waits for them.
"""

import io

import torch

x = torch.randn(512, 512, device="tpu")
w = torch.randn(512, 512, device="tpu")

with torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_AND_FUSE):
    y = torch.tanh(x @ w) + 1  # recorded, nothing has run yet
    total = y.sum()

    value = total.item()  # SYNC: a Python number needs the result
    host_copy = y.cpu()  # SYNC: copying to host memory (also .tolist())
    print(total)  # SYNC: printing a tensor reads its values
    torch.save(y, io.BytesIO())  # SYNC: saving reads the values
    if (y > 1.5).any():  # SYNC: a Python `if` on a tensor needs its value
        y = y.clamp(max=1.5)

    # No sync: keep data-dependent choices on the device, as tensor ops.
    y = torch.where(y > 1.5, 1.5, y)
    mean = y.mean()  # still recorded; the next SYNC line runs it all as one fused region

print(f"{value:.2f} {mean.item():.4f}")
