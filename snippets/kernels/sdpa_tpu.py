"""Scaled dot-product attention on TPU: ask for the device's own attention kernel.

SDPBackend.OVERRIDEABLE is the slot that out-of-tree backends such as TorchTPU fill
with their own kernel; Google's Ray + TorchTPU training sample selects it this way.
Without it, SDPA can fall back to the generic MATH implementation, which builds the
full attention matrix. TorchTPU 0.2.0 also ships an experimental Splash attention op that
needs JAX: torch.tpu.ops.splash_sdpa(q, k, v, *, scale=None, is_causal=True, ...), with
block-size keywords. Note that it defaults to is_causal=True, unlike SDPA.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

batch, heads, seq_len, head_dim = 2, 8, 1024, 128
q, k, v = (
    torch.randn(batch, heads, seq_len, head_dim, device="tpu", dtype=torch.bfloat16)
    for _ in range(3)
)

with sdpa_kernel([SDPBackend.OVERRIDEABLE]):  # only this backend; error if it can't run
    out = F.scaled_dot_product_attention(q, k, v)
print(out.shape, out.dtype)
