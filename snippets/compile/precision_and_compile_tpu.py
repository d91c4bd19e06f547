"""Raise matmul precision for compiled code without breaking the graph.

torch.tpu.precision(...) cannot be traced yet: inside a compiled function it splits the
graph, and with fullgraph=True compilation fails. Set the precision outside instead.
"""

import torch

torch.set_float32_matmul_precision("highest")  # on TPU: Precision.HIGHEST for fp32 matmuls


@torch.compile(backend="tpu", fullgraph=True)
def project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # Do not open `with torch.tpu.precision(...)` here: it forces a graph break.
    return torch.tanh(x @ w)


x = torch.randn(256, 512, device="tpu")
w = torch.randn(512, 128, device="tpu")
print(project(x, w).shape)
