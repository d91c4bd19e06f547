"""Device dispatches: code that branches on a device's name over several backends.

``if device == "cuda": ... elif device == "xpu": ... elif device == "npu": ... else: raise`` (or the
same as a run of ``if`` statements that each leave) names CUDA as one backend among others, not as the
one it assumes. On a TPU the name is ``tpu``, which no arm takes: what matters is where it lands.

- On a ``raise`` (the chain's last ``else``, or the statement right after a run of arms): that
  ``raise`` is reported as ``device-dispatch-no-tpu``, the place to add a ``tpu`` arm, and the
  ``cuda`` comparisons of the arms are not (``cuda-compare``, or a ``"cuda"`` in a tuple of names).
- On code that handles any device by its name (``else: device = torch.device(name)``, ``return
  name``): the TPU is served there, and the ``cuda`` comparisons are not reported either.
- Anywhere else (no ``else``: the TPU skips what each arm does, such as a synchronize; or an ``else``
  that only logs): the ``cuda`` comparison is the bug, and stays reported.

A dispatch that already names ``tpu`` (or ``xla``) has its arm: none of its comparisons is
reported. A test names a backend by comparing something with its name (``==``, ``!=``, ``in``,
``not in``, a tuple of names, ``.startswith("cuda")``); ``torch.xpu.is_available()`` and the like
name one too, but a chain of such probes alone is an availability chain (``torch.cuda.is_available()``
is its own finding). A dispatch names CUDA and at least one other accelerator (``mps``, ``xpu``,
``npu``, ``hpu``, ``mlu``, ``musa``, or ``tpu`` itself): ``if device == "cuda": ... else: ...`` alone
is the plain CUDA assumption the other rules report."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field

OTHER_BACKENDS = frozenset({"mps", "xpu", "npu", "hpu", "mlu", "musa"})
PORTED = frozenset({"tpu", "xla"})
_KNOWN = OTHER_BACKENDS | PORTED | {"cuda", "cpu", "hip", "meta"}
_WORDS = tuple(sorted(OTHER_BACKENDS | PORTED))  # a file naming none of them has no dispatch
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass
class Dispatch:
    """One dispatch: its arms' tests, the backends they name and where a ``tpu`` device lands."""

    tests: list[ast.expr]
    names: set[str] = field(default_factory=set)
    compared: int = 0  # arms that name a backend by comparing a name (not by a probe alone)
    subjects: set[str] = field(default_factory=set)  # the names compared with the backends' names
    lands: ast.AST | None = None  # the raise a tpu device ends at, or the list a refusal checks it against
    generic: bool = False  # where a tpu device lands, code handles any device by its name


# Another backend named as a string ("xpu", 'npu:0'): a line a dispatch may be on.
_QUOTED = re.compile(r"""["'](?:%s)["':]""" % "|".join(sorted(OTHER_BACKENDS | PORTED)))
_PROBES = tuple(f"is_{b}" for b in sorted(OTHER_BACKENDS))  # is_npu_available()
_ASKED = tuple(sorted(OTHER_BACKENDS))  # torch.xpu.is_available(), torch.backends.mps.is_available()


def _probe_starts(text: str) -> list[int]:
    """Where the text asks whether another backend is there (found with str.find: a pattern that
    starts with a word is tried at every character, which costs more than the rest of this pass)."""
    out = []
    at = text.find("_available")
    while at >= 0:
        head = text[max(0, at - 8) : at]
        if head.endswith(".is") and head[:-3].endswith(_ASKED) or head.endswith(_PROBES):
            out.append(at)
        at = text.find("_available", at + 10)
    return out


def candidate_lines(text: str) -> list[int]:
    """The lines (sorted) that name another backend, in a file that names ``cuda``; most files have none."""
    if "cuda" not in text or not any(word in text for word in _WORDS):
        return []
    starts = [m.start() for m in _QUOTED.finditer(text)] + _probe_starts(text)
    if not starts:
        return []
    newlines = [m.start() for m in re.finditer("\n", text)]
    return sorted({bisect_left(newlines, at) + 1 for at in starts})


def _backend(value: object) -> str | None:
    if type(value) is not str:
        return None
    name = value.lower().split(":")[0]
    return name if name in _KNOWN else None


def _root(node: ast.expr) -> str | None:
    """The name an expression starts from (``device`` of ``device.type``, ``str(device)``)."""
    while True:
        if type(node) is ast.Attribute or type(node) is ast.Subscript:
            node = node.value
        elif type(node) is ast.Call and node.args:
            node = node.func.value if type(node.func) is ast.Attribute else node.args[0]
        else:
            return node.id if type(node) is ast.Name else None


def _compared(test: ast.expr, subjects: set[str]) -> set[str]:
    """The backends ``test`` names by comparing a value with their names (the value's root name goes
    in ``subjects``)."""
    out: set[str] = set()
    for node in ast.walk(test):
        named: set[str] = set()
        if type(node) is ast.Compare:
            operands = [node.left, *node.comparators]
            for operand in operands:
                items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                named |= {b for item in items if type(item) is ast.Constant and (b := _backend(item.value))}
            others = [o for o in operands if type(o) is not ast.Constant and not isinstance(o, (ast.Tuple, ast.List))]
        elif type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "startswith":
            named = {b for a in node.args if type(a) is ast.Constant and (b := _backend(a.value))}
            others = [node.func.value]
        if named:
            out |= named
            subjects.update(root for o in others if (root := _root(o)))
    return out


def _probed(test: ast.expr) -> set[str]:
    """The backends ``test`` asks about: ``torch.xpu.is_available()``, ``torch.backends.mps.is_available()``,
    ``is_npu_available()``."""
    out: set[str] = set()
    for node in ast.walk(test):
        if type(node) is not ast.Call:
            continue
        func = node.func
        if type(func) is ast.Attribute and func.attr == "is_available" and type(func.value) is ast.Attribute:
            out.add(func.value.attr)
        elif type(func) is ast.Name and func.id.startswith("is_") and func.id.endswith("_available"):
            out.update(part for part in func.id.split("_") if part in _KNOWN)
    return out & _KNOWN


_LOGS = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception", "log"})


def _logs(st: ast.stmt) -> bool:
    call = st.value if type(st) is ast.Expr else None
    if type(call) is not ast.Call:
        return False
    func = call.func
    return (func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else "") in _LOGS


def _generic(last: list[ast.stmt], subjects: set[str]) -> bool:
    """Whether ``last`` does something with the compared name other than log it."""
    return any(type(node) is ast.Name and node.id in subjects for st in last if not _logs(st) for node in ast.walk(st))


def _lands(last: list[ast.stmt]) -> ast.Raise | None:
    """The ``raise`` that ends ``last`` when it does nothing else before it but log."""
    if not last or type(last[-1]) is not ast.Raise:
        return None
    return last[-1] if all(type(st) is ast.Expr for st in last[:-1]) else None


def _chain(node: ast.If) -> tuple[list[ast.If], list[ast.stmt]]:
    """The arms of an ``if``/``elif`` chain and its final ``else`` block."""
    arms = [node]
    while len(node.orelse) == 1 and type(node.orelse[0]) is ast.If:
        node = node.orelse[0]
        arms.append(node)
    return arms, node.orelse


def _dispatch(arms: list[ast.If]) -> Dispatch:
    found = Dispatch([arm.test for arm in arms])
    for arm in arms:
        named = _compared(arm.test, found.subjects)
        found.compared += bool(named)
        found.names |= named | _probed(arm.test)
    return found


def _runs(block: list[ast.stmt]) -> Iterator[tuple[list[ast.If], ast.stmt | None]]:
    """Runs of two or more ``if`` statements without ``else`` that each compare a name with a
    backend's and leave, each with the statement after it."""
    run: list[ast.If] = []
    for st in [*block, None]:
        if type(st) is ast.If and not st.orelse and isinstance(st.body[-1], _ENDS) and _compared(st.test, set()):
            run.append(st)
            continue
        if len(run) >= 2:
            yield run, st
        run = []


def _blocks(stmts: list[ast.stmt], lines: list[int]) -> Iterator[list[ast.stmt]]:
    """``stmts`` and each block nested in a statement of it that spans one of ``lines`` (sorted): only
    the code around a line that names another backend is read."""
    yield stmts
    for st in stmts:
        end = st.end_lineno or st.lineno
        at = bisect_left(lines, st.lineno)
        if at == len(lines) or lines[at] > end:
            continue
        for name in ("body", "orelse", "finalbody"):
            block = getattr(st, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield from _blocks(block, lines)
        for handler in getattr(st, "handlers", ()):
            yield from _blocks(handler.body, lines)
        for case in getattr(st, "cases", ()):
            yield from _blocks(case.body, lines)


def dispatches(tree: ast.Module, lines: list[int]) -> list[Dispatch]:
    """Every device dispatch in ``tree`` around ``lines`` (sorted; see ``candidate_lines``)."""
    out: list[Dispatch] = []
    for block in _blocks(tree.body, lines):
        for arms, after in _runs(block):
            found = _dispatch(arms)
            tail = [after] if after is not None else []
            found.lands, found.generic = _lands(tail), _generic(tail, found.subjects)
            out.append(found)
        for st in block:  # an elif's arm is the only statement of its head's else: met there, not as a head
            if type(st) is ast.If and (refused := _refusal(st)) is not None:
                out.append(refused)
            elif type(st) is ast.If:
                arms, last = _chain(st)
                found = _dispatch(arms)
                found.lands, found.generic = _lands(last), _generic(last, found.subjects)
                out.append(found)
    return [d for d in out if "cuda" in d.names and d.names & (OTHER_BACKENDS | PORTED)]


def _refusal(node: ast.If) -> Dispatch | None:
    """``if name not in ("cpu", "cuda", "mps"): raise ...``: a check that refuses every device name
    its list leaves out, ``tpu`` among them. The list is where ``tpu`` goes: the place reported."""
    test = node.test
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.NotIn:
        return None
    names = test.comparators[0]
    if not isinstance(names, (ast.Tuple, ast.List, ast.Set)) or _lands(node.body) is None:
        return None
    found = Dispatch([test], compared=2, lands=names)
    found.names = {b for e in names.elts if type(e) is ast.Constant and (b := _backend(e.value))}
    return found


def quiet_places(found: Dispatch) -> Iterator[ast.AST]:
    """The comparisons and ``cuda`` literals in the dispatch's tests, when a ``tpu`` device has an arm
    of its own, lands on a ``raise`` (reported instead) or on code that handles any device: arms, not
    findings."""
    if not (found.names & PORTED or found.lands or found.generic):
        return
    for test in found.tests:
        for node in ast.walk(test):
            if type(node) is ast.Compare or type(node) is ast.Constant and _backend(node.value) == "cuda":
                yield node
            elif type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "startswith":
                yield node


def tpu_lands_on(found: Dispatch) -> ast.AST | None:
    """The ``raise`` a ``tpu`` device reaches, in a dispatch on a name that does not name ``tpu`` (for
    a refusal, the list of names it is checked against)."""
    if found.names & PORTED or found.compared < 2:
        return None
    return found.lands
