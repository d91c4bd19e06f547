"""Scaled dot-product attention on TPU: the default call already uses TorchTPU's kernel.

TorchTPU 0.2.0 picks SDPA's backend itself, among those left enabled (all are by default):
its flash-attention kernel when FLASH_ATTENTION is enabled and the call fits (fp32 or bf16,
static shapes, 4-D or more, dropout_p below 1, no attn_mask that needs a gradient); otherwise,
with OVERRIDEABLE or MATH enabled and dropout_p == 0, an optimised StableHLO version of the
math path; otherwise PyTorch's plain MATH path. So sdpa_kernel([SDPBackend.OVERRIDEABLE])
turns the flash kernel off: restrict backends only to compare paths or to rule one out.
TorchTPU 0.2.0 also ships an experimental Splash attention op that needs JAX:
torch.tpu.ops.splash_sdpa(q, k, v, *, scale=None, is_causal=True, ...), with block-size
keywords. Note that it defaults to is_causal=True, unlike SDPA.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

batch, heads, seq_len, head_dim = 2, 8, 1024, 128
q, k, v = (
    torch.randn(batch, heads, seq_len, head_dim, device="tpu", dtype=torch.bfloat16)
    for _ in range(3)
)

out = F.scaled_dot_product_attention(q, k, v)  # bf16, 4-D, no grad: the flash kernel
with sdpa_kernel([SDPBackend.OVERRIDEABLE]):  # flash off: the StableHLO path instead
    out = F.scaled_dot_product_attention(q, k, v)
print(out.shape, out.dtype)
