"""Device tests written for CUDA that send a TPU tensor down the wrong path (issue 34, class 3).

- ``cpu-else-cuda``: ``if x.device.type == "cpu": <torch> else: <CUDA code>`` (or ``x.is_cpu``, or
  ``!= "cpu"`` with the CUDA code in the body). A TPU tensor is not on the CPU, so it takes the
  CUDA path. Reported at the test when that path holds CUDA-only code: a finding of a CUDA rule, a
  call whose name says CUDA (``forward_cuda``, ``_C.cuda_op``), or a use of a function or class of
  the module that holds such code (``FusedFn.apply(x)``, whose forward calls a CUDA extension).
- ``is-cuda-test``: ``if x.is_cuda: <plain torch>`` used as the "on an accelerator" test. A TPU
  tensor's ``is_cuda`` is False, so the TPU takes the other (CPU) path. Reported when the branch
  ``is_cuda`` guards holds no CUDA-only code; a guard of CUDA-only code is right as it is.
- ``assert-is-cuda``: ``assert x.is_cuda`` or ``assert x.device.type == "cuda"`` (alone or among
  ``and``-ed conditions) fails for every TPU tensor, whatever follows it, and so does every call of
  the function that asserts it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .scanguard import Span, _inside, _parents, _spans, guarded
from .scannames import calls_of
from .scanstmts import statements

if TYPE_CHECKING:
    from ..core.schema import Detector

# the detectors it serves
DEVICE_TESTS: frozenset[Detector] = frozenset({"cpu-else-cuda", "is-cuda-test", "assert-is-cuda"})
CpuTest = tuple[ast.expr, bool]  # the test, and whether True means "on the CPU"


def device_tests(
    tree: ast.Module, candidates: list[ast.expr], cuda_places: Iterable[tuple[int, int]], line: Callable[[int], str]
) -> list[tuple[Detector, ast.expr, list[ast.Call]]]:
    """(detector, node, uses) for each device test among ``candidates`` (the ``is_cuda``/``is_cpu``
    attributes and the comparisons with "cpu" the scan met) that sends a TPU tensor down the wrong
    path; ``cuda_places`` are the (line, character column) of findings of CUDA-only code. ``uses``
    are the calls the TPU reaches on that path of a function or class of the module that holds CUDA
    code (``FusedFn.apply(x)``): each is a place of the finding."""
    is_cuda = [n for n in candidates if isinstance(n, ast.Attribute) and n.attr == "is_cuda"]
    cpu = [t for n in candidates if (t := _cpu_test(n)) is not None]
    if not is_cuda and not cpu:
        return []
    places = list(cuda_places)
    defs = _cuda_defs(tree, places)
    out: list[tuple[Detector, ast.expr, list[ast.Call]]] = []
    for parents in _parents(tree, {n.lineno for n in is_cuda} | {t.lineno for t, _ in cpu}):
        for node in is_cuda:
            if node in parents and _asserted(node, parents):
                continue  # cuda_asserts: a finding already
            branch = guarded(node, parents) if node in parents else []
            if branch and not _cuda_inside(branch, places, line, defs):
                out.append(("is-cuda-test", node, []))
        for test, true_is_cpu in cpu:
            other = guarded(test, parents, implies=not true_is_cpu) if test in parents else []  # off the CPU
            if other and _cuda_inside(other, places, line, defs):
                out.append(("cpu-else-cuda", test, _calls_of(other, defs)))
    return out


def cuda_asserts(tree: ast.Module, candidates: list[ast.expr]) -> list[ast.expr]:
    """The ``x.is_cuda`` attributes and ``x.device.type == "cuda"`` comparisons among ``candidates``
    that an ``assert`` requires (``assert-is-cuda``): found before the failures are followed, since
    every call of the function that asserts one fails too."""
    on_cuda = [
        n
        for n in candidates
        if isinstance(n, ast.Attribute)
        and n.attr == "is_cuda"
        or isinstance(n, ast.Compare)
        and all(type(op) is ast.Eq for op in n.ops)
    ]
    wanted: dict[int, ast.expr] = {id(n): n for n in on_cuda}
    out: list[ast.expr] = []
    for st, _ in statements(tree) if wanted else ():  # the asserts: statements, far fewer than nodes
        if type(st) is ast.Assert:
            test = st.test
            parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
            out += [wanted[id(part)] for part in parts if id(part) in wanted]
    return out


def _asserted(node: ast.expr, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` is what an ``assert`` requires: its test, or one of its ``and``-ed parts."""
    up = parents.get(node)
    if isinstance(up, ast.BoolOp) and isinstance(up.op, ast.And):
        node, up = up, parents.get(up)
    return isinstance(up, ast.Assert) and up.test is node


def _calls_of(nodes: list[ast.AST], defs: frozenset[str]) -> list[ast.Call]:
    """The calls in ``nodes`` of one of ``defs`` (``FusedFn.apply(x)``, ``fused_op(x)``)."""
    return [call for node in nodes for call in calls_of(node, defs)]


def _cpu_test(node: ast.AST) -> CpuTest | None:
    """``x.device.type == "cpu"`` / ``!= "cpu"`` / ``x.is_cpu``: the test and its sense."""
    if isinstance(node, ast.Attribute) and node.attr == "is_cpu" and isinstance(node.ctx, ast.Load):
        return node, True
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        sides = (node.left, node.comparators[0])
        if any(isinstance(s, ast.Constant) and s.value == "cpu" for s in sides) and any(_device_type(s) for s in sides):
            return node, isinstance(node.ops[0], ast.Eq)
    return None


def _device_type(node: ast.expr) -> bool:
    """``<expr>.device.type`` (or ``device_type``, a name commonly holding it)."""
    if isinstance(node, ast.Attribute) and node.attr == "type":
        inner = node.value
        return isinstance(inner, ast.Attribute) and inner.attr == "device"
    return False


def _cuda_defs(tree: ast.Module, places: list[tuple[int, int]]) -> frozenset[str]:
    """The module-level functions and classes that hold a CUDA finding (``class FusedFn(Function)``
    whose forward calls a CUDA extension): a branch that calls one runs CUDA code."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    lines = {ln for ln, _ in places}
    return frozenset(
        st.name
        for st in tree.body
        if isinstance(st, kinds) and any(st.lineno <= ln <= (st.end_lineno or st.lineno) for ln in lines)
    )


def _cuda_inside(
    nodes: list[ast.AST], places: list[tuple[int, int]], line: Callable[[int], str], defs: frozenset[str] = frozenset()
) -> bool:
    spans: list[Span] = _spans(nodes)
    if any(_inside(spans, ln, col, line) for ln, col in places):
        return True
    if any(_names_cuda(n) for node in nodes for n in ast.walk(node)):
        return True
    return bool(defs) and any(type(n) is ast.Name and n.id in defs for node in nodes for n in ast.walk(node))


def _names_cuda(node: ast.AST) -> bool:
    """A call whose own name says CUDA (``forward_cuda(x)``, ``ext.cuda_kernel(x)``), not ``.cuda()``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name != "cuda" and "cuda" in name.lower().split("_")
