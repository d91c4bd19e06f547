"""Scaled dot-product attention on GPU: ask for the device's own attention kernel.

On NVIDIA GPUs, PyTorch ships fused attention kernels such as FlashAttention and
selects one automatically; sdpa_kernel() pins the choice, here to FLASH_ATTENTION.
Without a fused kernel that fits the inputs, SDPA falls back to the generic MATH
implementation, which builds the full attention matrix.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

batch, heads, seq_len, head_dim = 2, 8, 1024, 128
q, k, v = (
    torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=torch.bfloat16)
    for _ in range(3)
)

with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):  # only this backend; error if it can't run
    out = F.scaled_dot_product_attention(q, k, v)
print(out.shape, out.dtype)
