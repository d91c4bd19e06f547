"""How precise is an fp32 matmul on TPU? Compare the three precision modes.

By default the TPU runs fp32 matmuls in bfloat16 (Precision.DEFAULT). HIGH and HIGHEST
split each operand into several bf16 pieces and cost more matrix-unit work. The counts of
3 and 6 passes come from a pre-release guide; 0.2.0 does not state them and says its lowering
may vary by hardware. torch.tpu.precision is experimental in TorchTPU 0.2.0 and is not
traceable: inside torch.compile it splits the graph.
"""

import torch

torch.manual_seed(0)
a = torch.randn(1024, 1024, device="tpu")
b = torch.randn(1024, 1024, device="tpu")
reference = a.cpu().double() @ b.cpu().double()  # float64 on the host

# 1. For one block of code: a context manager.
for mode in (torch.tpu.Precision.DEFAULT, torch.tpu.Precision.HIGH, torch.tpu.Precision.HIGHEST):
    with torch.tpu.precision(mode):
        c = a @ b
    error = (c.cpu().double() - reference).abs().max().item()
    print(f"{mode}: max abs error {error:.2e}")

# 2. For the whole program: PyTorch's own knob, which TorchTPU 0.2.0 maps onto its modes:
#    "medium" -> Precision.DEFAULT, "high" -> Precision.HIGH, "highest" -> Precision.HIGHEST.
#    A torch.tpu.precision block overrides it locally.
torch.set_float32_matmul_precision("high")
c = a @ b
print("global 'high':", (c.cpu().double() - reference).abs().max().item())
