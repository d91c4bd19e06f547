"""Ray resources a TorchTPU host never offers (issue 34): Ray counts the ``GPU`` resource through
NVIDIA's management library, so on a TPU host it has none, and its chips are the ``TPU`` resource.

``ray-gpu-resource`` reports, in a file that imports Ray:

- ``num_gpus=`` with a value other than 0 (``@ray.remote(num_gpus=1)``, ``.options(num_gpus=n)``);
- a ``"GPU"`` key of a dict (placement-group bundles, ``resources_per_worker={"GPU": 1}``);
- a read of the ``"GPU"`` count (``ray.cluster_resources()["GPU"]``, ``.get("GPU", 0)``).

In a file that doesn't import Ray (a module that plans the resources Ray is then given), only what
has the shape of Ray's resources: a dict with both ``"GPU"`` and ``"CPU"`` keys, and a read of
``"GPU"`` from something named for resources (``cluster_resources.get("GPU", 0.0)``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

DETECTOR = "ray-gpu-resource"
_GPU = "GPU"


def mentions_gpus(text: str, ray: bool) -> bool:
    """A cheap test on the source: the file may ask Ray for GPUs (``ray``: it imports Ray)."""
    gpu = '"GPU"' in text or "'GPU'" in text
    return ("num_gpus" in text or gpu) if ray else gpu and ('"CPU"' in text or "'CPU'" in text or "resource" in text)


def _gpu(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == _GPU


def _num_gpus(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == "num_gpus"


def _zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in (0, None)


def _resources(node: ast.expr) -> bool:
    """``node`` is named for resources (``cluster_resources``, ``ray.available_resources()``)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return "resource" in name.lower()


def _bundle(node: ast.Dict) -> bool:
    return any(isinstance(k, ast.Constant) and k.value == "CPU" for k in node.keys)


def gpu_resources(tree: ast.Module, ray: bool) -> Iterator[ast.AST]:
    """Each place the module asks Ray for, or reads, the ``GPU`` resource (``ray``: it imports Ray)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword):
            if ray and node.arg == "num_gpus" and not _zero(node.value):
                yield node
        elif isinstance(node, ast.Dict):
            if ray or _bundle(node):
                yield from (
                    k
                    for k, v in zip(node.keys, node.values, strict=True)
                    if k is not None and (_gpu(k) or ray and _num_gpus(k)) and not _zero(v)
                )
        elif isinstance(node, ast.Assign):  # options["num_gpus"] = n, handed to .options(**options)
            if ray and not _zero(node.value):
                yield from (t for t in node.targets if isinstance(t, ast.Subscript) and _num_gpus(t.slice))
        elif isinstance(node, ast.Subscript):
            if _gpu(node.slice) and (ray or _resources(node.value)):
                yield node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if node.args and _gpu(node.args[0]) and (ray or _resources(node.func.value)):
                yield node
