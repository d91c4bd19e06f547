"""Ray resources a TorchTPU host never offers (issue 34): Ray counts the ``GPU`` resource through
NVIDIA's management library, so on a TPU host it has none, and its chips are the ``TPU`` resource.

``ray-gpu-resource`` reports, in a file that imports Ray:

- ``num_gpus=`` with a value other than 0 (``@ray.remote(num_gpus=1)``, ``.options(num_gpus=n)``);
- a ``"GPU"`` key of a dict (placement-group bundles, ``resources_per_worker={"GPU": 1}``);
- a read of the ``"GPU"`` count (``ray.cluster_resources()["GPU"]``, ``.get("GPU", 0)``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

DETECTOR = "ray-gpu-resource"
_GPU = "GPU"


def mentions_gpus(text: str) -> bool:
    """A cheap test on the source: the file may ask Ray for GPUs."""
    return "num_gpus" in text or '"GPU"' in text or "'GPU'" in text


def _gpu(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == _GPU


def _zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in (0, None)


def gpu_resources(tree: ast.Module) -> Iterator[ast.AST]:
    """Each place the module asks Ray for, or reads, the ``GPU`` resource."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword):
            if node.arg == "num_gpus" and not _zero(node.value):
                yield node
        elif isinstance(node, ast.Dict):
            yield from (
                k for k, v in zip(node.keys, node.values, strict=True) if k is not None and _gpu(k) and not _zero(v)
            )
        elif isinstance(node, ast.Subscript):
            if _gpu(node.slice):
                yield node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if node.args and _gpu(node.args[0]):
                yield node
