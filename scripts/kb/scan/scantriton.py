"""Triton kernels a module defines, and where it launches them (issue 34).

- ``triton-kernel``: a function decorated with ``triton.jit`` (bare or called, alone or under
  ``triton.autotune``/``triton.heuristics``), reported at its first decorator: the kernel to rewrite.
- ``triton-launch``: ``kernel[grid](...)`` of such a function of the module, or of a name ending in
  ``kernel`` imported into a module that imports Triton: the launch fails for TPU tensors.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .scanext import Resolve

_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})


def _triton_decorated(fn: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Resolve) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if resolve(target)[0] in _DECORATORS:
            return True
    return False


def kernels(tree: ast.Module, resolve: Resolve) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module-level functions it compiles with Triton."""
    return [
        st
        for st in tree.body
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and _triton_decorated(st, resolve)
    ]


def launches(tree: ast.Module, text: str, names: set[str], imported: set[str]) -> list[ast.Call]:
    """Each ``name[grid](...)`` of a kernel in ``names``, or of an imported name in ``imported`` that
    ends in ``kernel``; ``text`` is the module's source, which must show one subscripted."""
    imported = {name for name in imported if name.lower().endswith("kernel")}
    both = names | imported
    if not both or not re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(both)))})\s*\[", text):
        return []  # nothing to launch: no walk (most Triton-importing modules of a big tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            head = node.func.value
            if isinstance(head, ast.Name) and (head.id in names or head.id in imported):
                out.append(node)
    return out
