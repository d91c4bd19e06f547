"""Call a Pallas kernel, written in JAX, from PyTorch on TPU.

Needs `pip install jax` (JAX is optional for TorchTPU). In torch-tpu 0.2.0 the call is
torch.tpu.pallas.jax_op(name, fn=None, /, *, donate_argnums=None, mesh=None,
input_partition_specs=None, output_partition_specs=None), marked experimental. `name` is
"namespace::op"; every argument of `fn` and its return value need type annotations
(jax.Array for arrays). It returns a PyTorch custom op (torch.library.CustomOpDef) that
takes and returns torch tensors; without `fn` it is a decorator.
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

a = torch.randn(8, 128, device="tpu")  # a small 2-D fp32 input
b = torch.randn(8, 128, device="tpu")
torch.testing.assert_close(add(a, b), a + b)
print("ok")
