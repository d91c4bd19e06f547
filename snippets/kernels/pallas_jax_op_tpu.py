"""Call a Pallas kernel, written in JAX, from PyTorch on TPU.

Needs `pip install jax` (JAX is optional for TorchTPU). Assumed, because the reference
docs for it were not found: torch.tpu.pallas.jax_op(name, fn) takes a "namespace::op"
name and a JAX function with annotated jax.Array arguments, registers it as a PyTorch
custom op, and returns a callable that takes and returns torch tensors on the TPU.
"""

import jax
import torch
from jax.experimental import pallas as pl


def add_kernel(x_ref, y_ref, out_ref):
    """The Pallas kernel: reads the input blocks, writes the output block."""
    out_ref[...] = x_ref[...] + y_ref[...]


def add_jax(x: jax.Array, y: jax.Array) -> jax.Array:
    """A JAX function that launches the kernel over the whole arrays."""
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)


add = torch.tpu.pallas.jax_op("handbook::add", add_jax)  # register once, at import time

a = torch.randn(8, 128, device="tpu")  # (8, 128): one fp32 tile of TPU memory
b = torch.randn(8, 128, device="tpu")
torch.testing.assert_close(add(a, b), a + b)
print("ok")
