"""Measure what bfloat16 does to a matmul, on this machine's accelerator or on the CPU.

A recipe for numerics checks: compute once in full fp32 and once under bf16 autocast,
then compare both with a float64 reference on the host.
"""

import torch

accelerator = torch.accelerator.current_accelerator(check_available=True)
device = accelerator if accelerator is not None else torch.device("cpu")

# Plain fp32 matmuls at full fp32 precision: no TF32 on GPU, Precision.HIGHEST on TPU.
torch.set_float32_matmul_precision("highest")

torch.manual_seed(0)
a = torch.randn(256, 256, device=device)
b = torch.randn(256, 256, device=device)
reference = a.cpu().double() @ b.cpu().double()

fp32_result = a @ b
with torch.autocast(device.type, dtype=torch.bfloat16):
    bf16_result = a @ b  # autocast runs the matmul with bf16 inputs


def compare(name: str, result: torch.Tensor) -> float:
    """Print max absolute and relative (Frobenius norm) error; return the relative one."""
    diff = result.cpu().double() - reference
    max_abs = diff.abs().max().item()
    rel = (diff.norm() / reference.norm()).item()
    print(f"{name}: {str(result.dtype):15} max abs error {max_abs:.2e}, rel error {rel:.2e}")
    return rel


rel_fp32 = compare("fp32", fp32_result)
rel_bf16 = compare("bf16", bf16_result)
assert bf16_result.dtype == torch.bfloat16
# bf16 keeps 8 significant bits (rel. rounding ~4e-3); fp32 keeps 24 (~6e-8).
assert rel_fp32 < 1e-5 < rel_bf16 < 5e-2, (rel_fp32, rel_bf16)
print(f"on {device.type}: bf16 is {rel_bf16 / rel_fp32:.0f}x less precise than fp32")
print("ok")
