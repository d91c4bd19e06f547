"""Work made on a default device set to CUDA (issue 34).

``torch.set_default_device("cuda")`` puts every tensor and module made after it, in the same block,
on a GPU; ``with torch.device("cuda"):`` does so for its body. The device string is the line to
change, and each call that makes a tensor or a module there is one of its uses: ``torch.randint(0,
n, (2, 128))``, ``Transformer(args)``. A factory given its own ``device=`` is not, nor a class of the
module that holds no tensors (a dataclass, a class with no base).
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from .scanstmts import blocks

Resolve = Callable[[ast.expr], tuple[str | None, str]]
# torch's functions that make a tensor on the default device
_FACTORIES = frozenset(
    {"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange"}
    | {"linspace", "logspace", "eye", "empty_strided", "zeros_like", "ones_like", "rand_like", "randn_like"}
)


Made = list[tuple[ast.expr, ast.Call]]


def default_device_calls(tree: ast.Module, setters: dict[int, ast.expr], resolve: Resolve) -> Made:
    """(the device string, a call that makes a tensor or module on it) for each of ``setters`` (the
    id of a ``torch.set_default_device(...)`` or ``torch.device(...)`` call -> its cuda string): the
    calls of the statements after it in its block, or of the ``with`` it opens."""
    plain = _plain_classes(tree)
    out: Made = []
    for block in blocks(tree):
        for i, st in enumerate(block):
            if type(st) is ast.Expr and id(st.value) in setters:
                out += [(setters[id(st.value)], c) for c in _made(block[i + 1 :], resolve, plain)]
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    if id(item.context_expr) in setters:
                        out += [(setters[id(item.context_expr)], c) for c in _made(st.body, resolve, plain)]
    return out


def _made(statements: list[ast.stmt], resolve: Resolve, plain: set[str]) -> Iterator[ast.Call]:
    """The calls in ``statements`` that make a tensor or a module (not those in a nested function,
    which runs later, if at all)."""
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if type(node) is ast.Call and _makes(node, resolve, plain):
            yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _makes(call: ast.Call, resolve: Resolve, plain: set[str]) -> bool:
    path, _ = resolve(call.func)
    if path is not None and path.startswith("torch."):
        last = path.rsplit(".", 1)[-1]
        if last in _FACTORIES:
            return not any(k.arg == "device" for k in call.keywords)
        return path.startswith("torch.nn.") and last[:1].isupper()  # nn.Linear(...)
    # a class made: the module's own (unless plain), or one imported from outside torch
    return type(call.func) is ast.Name and call.func.id[:1].isupper() and call.func.id not in plain


def _plain_classes(tree: ast.Module) -> set[str]:
    """The module's classes that hold no tensors of their own making: dataclasses, and classes with no base."""
    out = set()
    for st in tree.body:
        if isinstance(st, ast.ClassDef):
            marks = [d.func if isinstance(d, ast.Call) else d for d in st.decorator_list]
            if not st.bases or any(getattr(m, "id", getattr(m, "attr", "")) == "dataclass" for m in marks):
                out.add(st.name)
    return out
