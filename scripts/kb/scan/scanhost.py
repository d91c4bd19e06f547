"""Values that live on the host: a ``.item()`` or ``.tolist()`` of one copies nothing from a device.

``item-in-loop`` reports a host read in a loop because it stalls the device; a tensor or array the
code built on the host (``torch.tensor([...])`` with no ``device=``, anything NumPy made) holds no
device value, so reading it is free; so does one copied to the host before the loop (``probs =
logits.softmax(-1).cpu()``, then ``probs[i].item()`` in a loop), while a copy inside the loop is the
stall itself. ``on_host`` says whether what a read is called on is such a
value: the expression itself (``torch.as_tensor(xs).mean().item()``), or a name each of whose
values that reach the read is one. The values that reach a read are found by walking the function's
statements in order up to it: an assignment replaces the name's values, an ``if`` joins its
branches, and a loop around the read adds what the loop assigns anywhere (its next turn); a name
with no assignment before the read (a parameter, a loop variable) is not known to be on the host.
"""

from __future__ import annotations

import ast
from typing import Callable

_MAKERS = frozenset(
    f"torch.{f}"
    for f in ("tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "arange", "linspace")
)
_MOVES = frozenset({"to", "cuda", "tpu", "type"})  # methods that may put a value on a device
_TO_NUMPY = frozenset({"numpy", "to_numpy"})  # methods that return a NumPy array
_UNKNOWN = None
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_TURNS = (*_LOOPS, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)  # what runs a read again and again
Span = tuple[int, int]
Resolve = Callable[[ast.expr], tuple[str | None, str]]


def _made_on_host(node: ast.expr, resolve: Resolve, loop: Span = (0, 1 << 30)) -> bool:
    """A call that builds its value on the host: a NumPy function, ``.numpy()``, a torch factory
    with no device, or ``.cpu()`` outside ``loop`` (the lines of the loop around the read)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in _TO_NUMPY and not node.args:
        return True  # what .numpy() returns is a NumPy array (pandas and Arrow's .to_numpy() too)
    if isinstance(node.func, ast.Attribute) and node.func.attr == "cpu" and not node.args:
        return not loop[0] <= node.lineno <= loop[1]  # copied once, before the loop
    path = resolve(node.func)[0] or ""
    if path.startswith("numpy."):
        return True
    return path in _MAKERS and all(k.arg not in ("device", None) for k in node.keywords)


def _root(node: ast.expr, resolve: Resolve, loop: Span) -> ast.expr:
    """What a chain of methods and indexing starts from (``x[i].mean()`` -> ``x``), stopping at a host
    factory (``np.frombuffer(b).reshape(s)`` -> the ``np.frombuffer`` call) or a move to a device."""
    while True:
        if _made_on_host(node, resolve, loop):
            return node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in _MOVES:
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
            node = node.left  # (array == t): elementwise, where the array is
        else:
            return node


def _assigns(st: ast.stmt, name: str) -> tuple[bool, ast.expr | None]:
    """Whether ``st`` binds ``name`` and the value it binds (``name = value``; None when the value is
    one part of another, as in ``a, name = pair``)."""
    targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
    for t in targets:
        if isinstance(t, ast.Name) and t.id == name:
            return True, st.value  # type: ignore[attr-defined]  # an Assign or AnnAssign
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(t)):
            return True, _UNKNOWN
    return False, None


def _anywhere(node: ast.AST, name: str) -> list[ast.expr | None]:
    """Every value ``node`` may bind to ``name`` (an augmented assignment or a loop target: unknown)."""
    out: list[ast.expr | None] = []
    for n in ast.walk(node):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and (bound := _assigns(n, name))[0]:
            out.append(bound[1])
        elif isinstance(n, (ast.AugAssign, ast.For, ast.AsyncFor)) and any(
            isinstance(t, ast.Name) and t.id == name for t in ast.walk(n.target)
        ):
            out.append(_UNKNOWN)
    return out


def reaching(body: list[ast.stmt], name: str, line: int, current: list[ast.expr | None]) -> list[ast.expr | None]:
    """The values of ``name`` that reach ``line`` from the start of ``body`` (``current``: those before it)."""
    for st in body:
        if st.lineno > line:
            break
        if st.lineno <= line <= (st.end_lineno or st.lineno) and not isinstance(st, (ast.Assign, ast.AnnAssign)):
            if isinstance(st, _LOOPS):
                current = current + _anywhere(st, name)
            blocks = [getattr(st, b, None) or [] for b in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(st, "handlers", ())]
            inner = next((b for b in blocks if b and b[0].lineno <= line <= (b[-1].end_lineno or 0)), None)
            return reaching(inner, name, line, current) if inner else current
        if st.lineno <= line <= (st.end_lineno or st.lineno):
            return current  # the read is in the assignment's value: the old values
        if (bound := _assigns(st, name))[0]:
            current = [bound[1]]
        elif isinstance(st, ast.If):
            joined = reaching(st.body, name, 1 << 30, current) + reaching(st.orelse, name, 1 << 30, current)
            current = list({id(v): v for v in joined}.values())  # each value once: no doubling per branch
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            current = reaching(st.body, name, 1 << 30, current)
        elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            current = current + _anywhere(st, name)
    return current


def _loop_around(function: ast.AST, line: int) -> Span:
    """The lines of the innermost loop or comprehension of ``function`` around ``line``."""
    spans = [
        (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(function)
        if isinstance(n, _TURNS) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    return max(spans, default=(0, 1 << 30))


def on_host(node: ast.expr, function: ast.AST, resolve: Resolve, depth: int = 3, loop: Span | None = None) -> bool:
    """Whether ``node`` (what ``.item()`` is called on, inside ``function``) is a value built on the
    host: made there, or a name each of whose values is (followed through ``depth`` names:
    ``arr = col.to_numpy()``, ``hits = (arr == t).nonzero()[0]``, ``hits.tolist()``)."""
    loop = loop or _loop_around(function, node.lineno)
    root = _root(node, resolve, loop)
    if _made_on_host(root, resolve, loop):
        return True
    body = getattr(function, "body", None)
    if not isinstance(root, ast.Name) or not isinstance(body, list) or depth == 0:
        return False
    values = reaching(body, root.id, node.lineno, [_UNKNOWN])
    return bool(values) and all(v is not None and on_host(v, function, resolve, depth - 1, loop) for v in values)
