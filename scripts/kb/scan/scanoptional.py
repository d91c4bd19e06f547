"""Optional imports of a GPU-only package: the calls fail, not the import (issue 34).

Code keeps a CUDA-only kernel optional with a ``try`` whose ``except ImportError`` carries on
(``flash_attn_func = None``, ``HAS_XFORMERS = False``, ``pass``): on a TPU host the import fails
quietly. The import is right as written; what fails is each line that calls a name it binds, when
the path that makes it runs. So the must-change finding of such an import (a rule that matches
``imports``) becomes, once per ``try`` and rule, a review finding at its first import
(``optional-cuda-import``), and each line that calls a name one of its imports binds becomes a
must-change finding of its own (``optional-import-call``), which names the import: unless the call
runs only when the import worked (inside the ``try``, behind a test of a name the handler binds),
and at the ``assert`` or ``raise`` on such a name where one stops the run first. A handler that
raises again makes the package required: its import stays a must-change finding.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, NamedTuple

from .scannames import FileScan, Finding
from .scanrules import ScanRule
from .scanstmts import INNER, statements

if TYPE_CHECKING:
    from ..core.schema import Detector

IMPORT_RULE: Detector = "optional-cuda-import"
CALL_RULE: Detector = "optional-import-call"
_CAUGHT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"})
Key = tuple[int, int, str]
# PyTorch/XLA is no GPU package: code that imports it optionally picks its XLA path by its own test, and
# the port replaces that path whether or not the import is optional (its finding stays as it is)
_NOT_GPU = frozenset({"torch-xla-import"})


def _raises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(st, ast.Raise) for st in handler.body)


def _catches_import(handler: ast.ExceptHandler) -> bool:
    """The handler catches a failed import (or everything) and does not raise again."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {k.id if isinstance(k, ast.Name) else k.attr if isinstance(k, ast.Attribute) else "" for k in kinds if k}
    caught = handler.type is None or bool(names & _CAUGHT)
    return caught and not _raises(handler)


def required(node: ast.Try) -> bool:
    """Every handler of the ``try`` raises again: what its body imports, the module needs."""
    return bool(node.handlers) and all(_raises(h) for h in node.handlers)


def fallbacks(handlers: list[ast.ExceptHandler]) -> set[str]:
    """The names the handlers bind: the fallbacks and flags code tests before it takes the path
    (``except ImportError: flash_attn_func = None``)."""
    return {
        t.id
        for h in handlers
        for st in h.body
        if isinstance(st, ast.Assign)
        for t in st.targets
        if isinstance(t, ast.Name)
    }


class Guards(NamedTuple):
    """What the file does about its optional imports."""

    tries: dict[int, ast.Try]  # the line of each optional import -> its ``try``
    flags: frozenset[str]  # the names the handlers of those tries bind
    guarded: list[tuple[int, int]]  # spans that run only when the import worked
    asserts: list[tuple[ast.Assert, int, int]]  # an assert of a fallback, in the function spanning lines first-last
    simple: list[ast.stmt]  # the statements with no statement inside: a use's own statement is one
    stops: list[tuple[ast.Raise, str]]  # a raise in an if that tests a fallback: where a TPU run stops, and the name


def _optional_tries(tree: ast.Module, lines: set[int]) -> Guards:
    """The imports at ``lines`` that sit in the body of a ``try`` that carries on without them; the
    spans of code that runs only when they worked: the ``try`` itself, each ``if`` or ``while`` that
    tests a name its handlers bind (``if xops is not None``, ``if has_apex``); and each ``assert`` of
    such a name, the line a TPU run fails at before it reaches a call."""
    out: dict[int, ast.Try] = {}
    flags: set[str] = set()
    every = statements(tree)
    for node, _ in every:
        if type(node) is ast.Try and any(_catches_import(h) for h in node.handlers):
            for st in _tried(node.body):
                if isinstance(st, (ast.Import, ast.ImportFrom)) and st.lineno in lines:
                    out[st.lineno] = node
                    flags |= fallbacks(node.handlers)
    spans = [(t.lineno, t.end_lineno or t.lineno) for t in out.values()]
    asserts: list[tuple[ast.Assert, int, int]] = []
    simple: list[ast.stmt] = []
    stops: list[tuple[ast.Raise, str]] = []
    for n, function in every if flags else ():
        if isinstance(n, (ast.If, ast.While, ast.Assert)) and (flag := _tests(n.test, flags)):
            if isinstance(n, ast.Assert):
                asserts.append((n, *function))
            else:
                spans.append((n.lineno, n.end_lineno or n.lineno))
                stops += [(st, flag) for st in (*n.body, *n.orelse) if isinstance(st, ast.Raise)]
        if not any(getattr(n, field, None) for field in INNER):
            simple.append(n)
    return Guards(out, frozenset(flags), spans, asserts, simple, stops)


def _tests(test: ast.expr, names: set[str] | frozenset[str]) -> str:
    """The first of ``names`` the test reads, or ""."""
    return next((x.id for x in ast.walk(test) if type(x) is ast.Name and x.id in names), "")


def _tried(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a ``try`` body, and those of the ``if`` blocks in it (``if ENABLED: import x``)."""
    for st in body:
        yield st
        if type(st) is ast.If:
            yield from _tried([*st.body, *st.orelse])


def _chosen(use: ast.Call, guards: Guards) -> bool:
    """The use is an arm of a conditional expression that tests a fallback (``xops.f(q) if HAS_XOPS
    else q``): looked for in the use's own statement only."""
    line = use.lineno
    for st in guards.simple:
        if st.lineno <= line <= (st.end_lineno or st.lineno):
            for n in ast.walk(st):
                if type(n) is ast.IfExp and _tests(n.test, guards.flags):
                    if any(x is use for x in ast.walk(n.body)) or any(x is use for x in ast.walk(n.orelse)):
                        return True
    return False


def _name(use: ast.AST) -> str:
    """The imported name a use starts from: ``xops`` of ``xops.memory_efficient_attention(q, k, v)``."""
    node = use.func if isinstance(use, ast.Call) else use
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def optional_imports(s: FileScan, tree: ast.Module) -> None:
    """Rewrite ``s.findings`` for the imports of GPU-only packages that a ``try`` makes optional."""
    keys = [k for k in s.findings if k[2] in s.rules.raising_imports and k[2] not in _NOT_GPU]
    calls, reviews = s.rules.detectors.get(CALL_RULE, ()), s.rules.detectors.get(IMPORT_RULE, ())
    if not calls or not reviews or all(k[1] == 1 for k in keys):  # an import in a try is indented
        return
    guards = _optional_tries(tree, {k[0] for k in keys})
    tries = guards.tries
    first: dict[tuple[int, str], Key] = {}  # (try, rule) -> the review finding that stands for it
    dropped: set[int] = set()  # the lines of the imports whose finding went
    for key in sorted(k for k in keys if k[0] in tries):
        old = s.findings.pop(key)
        group = (id(tries[key[0]]), key[2])
        if group not in first:
            review = reviews[0]
            new = (key[0], key[1], review.id)
            first[group] = new
            s.findings[new] = old._replace(
                rule=review.id,
                code=review.code,
                severity=review.severity,
                message=_said(review.message, old),
                suggestion=review.suggestion,
                link=review.link,
            )
        dropped.add(key[0])
    _report_uses(s, dropped, guards, calls[0])


def _said(message: str, old: Finding) -> str:
    return f"{message} ({old.code} {old.rule})"


def _report_uses(s: FileScan, dropped: set[int], guards: Guards, rule: ScanRule) -> None:
    """One must-change finding per line that calls a name an optional import binds, outside the
    code that runs only when the import worked (and unless a finding already stands there); at
    the ``assert`` of a fallback instead, when one comes before the call in its function; and at
    each ``raise`` in an ``if`` that tests a fallback, where a TPU run stops."""
    taken = {k[:2] for k in s.findings}
    done: set[int] = set()

    def report(node: ast.AST, note: str) -> None:
        line, column, _ = s.position(node)
        if line not in done and (line, column) not in taken:
            done.add(line)
            s.add(node, rule)
            f = s.findings[(line, column, rule.id)]
            s.findings[(line, column, rule.id)] = f._replace(message=f"{f.message} ({note})")

    for statement, use in s.imported_uses:
        at = getattr(statement, "lineno", 0)
        if at not in dropped or type(use) is not ast.Call or _name(use) not in s.imported:
            continue
        line = s.position(use)[0]
        if any(a <= line <= b for a, b in guards.guarded) or _chosen(use, guards):
            continue
        before = [a for a, first, last in guards.asserts if first <= a.lineno < line <= last]
        report(max(before, key=lambda a: a.lineno) if before else use, f"`{_name(use)}`, imported at line {at}")
    for stop, flag in guards.stops:  # if not XFORMERS_AVAILABLE: raise ...
        report(stop, f"a raise on `{flag}`")
