"""Which ``torch.cuda.is_available()`` calls guard CUDA-only code the fixer leaves.

``torch.cuda.is_available()`` is false on a TPU host. Where it picks the device, that is the bug,
and ``torch.accelerator.is_available()`` is the fix. Where it only lets CUDA-only code run
(``torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)``), false is what
keeps that code from raising on a TPU host: rewriting the guard would make the port crash. Such a
guard is reported as ``cuda-only-guard`` (review, no fix) instead.

The code a guard lets run is what runs only when the call returns True: the later operands of an
``and`` (or of an ``or`` under ``not``), the branch of an ``if``, ``while`` or conditional
expression that a true call takes, and what follows an ``if`` whose other branch always leaves
(``if not torch.cuda.is_available(): return``); the same, in one function, for a plain name the
call's value is stored in (``use_cuda = torch.cuda.is_available()``, then ``if use_cuda:``).

It is CUDA-only when it calls a ``torch.cuda`` API that a must-change rule reports and no fix
rewrites (``get_device_capability``, ``manual_seed``, ``is_bf16_supported``...). A device or a
process group built there (``f"cuda:{rank}"``, DDP's ``device_ids``) does not count: such a guard
picks what the TPU needs too, so it stays must-change; so does an ``if`` whose ``else`` sets what its
body sets (``device = "cuda:0"``, else ``device = "cpu"``): a TPU host takes the other value."""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence

from .scannames import Finding
from .scanrules import PROBE, RuleSet

PROBES = frozenset({PROBE, "torch.accelerator.is_available"})  # what a guard rename's guard asks
Span = tuple[int, int, int, int]  # first line, first byte column, last line, end byte column


def guarded(
    call: ast.expr, parents: dict[ast.AST, ast.AST], names: list[str] | None = None, implies: bool = True
) -> list[ast.AST]:
    """The nodes that run only when ``call`` returns True (with ``implies`` False: only when it
    returns False); empty when none do. When its value is stored in a plain name
    (``use_cuda = ... and torch.cuda.is_available()``), the name goes in ``names``."""
    node: ast.AST = call
    # implies True: ``node`` true means the call returned the value asked about; False: ``node`` false does
    out: list[ast.AST] = []
    while (parent := parents.get(node)) is not None:
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            implies = not implies
        elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And) == implies:
            assert isinstance(node, ast.expr)
            out += parent.values[parent.values.index(node) + 1 :]
        elif isinstance(parent, ast.IfExp) and node is parent.test:
            return [*out, parent.body if implies else parent.orelse]
        elif isinstance(parent, (ast.If, ast.While)) and node is parent.test:
            taken, other = (parent.body, parent.orelse) if implies else (parent.orelse, parent.body)
            if isinstance(parent, ast.If) and other and isinstance(other[-1], _EXITS):  # if not ok: return
                taken = [*taken, *_after(parent, parents)]
            return out + taken
        else:
            if isinstance(parent, ast.Assign) and implies and names is not None and parent.value is node:
                names += [t.id for t in parent.targets if isinstance(t, ast.Name)]
            return out
        node = parent
    return out


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _after(statement: ast.stmt, parents: dict[ast.AST, ast.AST]) -> list[ast.stmt]:
    """The statements that follow ``statement`` in its block."""
    owner = parents.get(statement)
    for name in ("body", "orelse", "finalbody"):
        block = getattr(owner, name, None)
        if isinstance(block, list) and statement in block:
            return block[block.index(statement) + 1 :]
    return []


def _spans(nodes: Iterable[ast.AST]) -> list[Span]:
    return [
        (n.lineno, n.col_offset, n.end_lineno or n.lineno, n.end_col_offset or 0)
        for n in nodes
        if isinstance(n, (ast.expr, ast.stmt))
    ]


def _inside(spans: Sequence[Span], number: int, column: int, line: Callable[[int], str]) -> bool:
    """Whether line ``number``, character column ``column`` (1-based, as findings give it) is in a span."""
    at = (number, len(line(number)[: column - 1].encode("utf-8")))  # spans count bytes
    return any((a, b) <= at < (c, d) for a, b, c, d in spans)


def _parents(tree: ast.Module, lines: set[int]) -> Iterator[dict[ast.AST, ast.AST]]:
    """The child -> parent map of each top-level statement that spans one of ``lines``. Each map is
    made once per tree (kept on the tree: the guard, device-test and logging passes all ask)."""
    made: dict[int, dict[ast.AST, ast.AST]] = tree.__dict__.setdefault("_kb_parents", {})
    for i, top in enumerate(tree.body):
        if any(top.lineno <= n <= (top.end_lineno or top.lineno) for n in lines):
            found = made.get(i)
            if found is None:
                found = made[i] = _parent_map(top)
            yield found


def _parent_map(top: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node under ``top`` -> its parent, in the order ``ast.walk`` meets the parents: the same map
    as ``{c: n for n in ast.walk(top) for c in ast.iter_child_nodes(n)}``, in half the time (no
    generator per node)."""
    out: dict[ast.AST, ast.AST] = {}
    todo = deque([top])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                out[value] = node
                todo.append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        out[item] = node
                        todo.append(item)
    return out


def _guarded_spans(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> list[Span]:
    """Where the code ``call`` guards is, directly or through a name it is stored in."""
    names: list[str] = []
    spans = _spans(guarded(call, parents, names))
    for use in [n for n in parents if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)]:
        spans += _spans(guarded(use, parents))  # if use_cuda: ...
    return spans


def mark_unguarded(
    tree: ast.Module,
    findings: list[Finding],
    rules: RuleSet,
    resolve: Callable[[ast.expr], tuple[str | None, str]],
    line: Callable[[int], str],
) -> list[Finding]:
    """``findings`` with each one of a guard rename (``rules.guarded``) marked ``manual`` unless it
    sits in code that runs only when ``torch.cuda.is_available()`` or
    ``torch.accelerator.is_available()`` returned True: there the renamed call can't raise."""
    spans: list[Span] = []
    for parents in _parents(tree, {f.line for f in findings if f.rule in rules.guarded}):
        for node in parents:
            if isinstance(node, ast.Call) and not node.args and not node.keywords and resolve(node.func)[0] in PROBES:
                spans += _guarded_spans(node, parents)
    return [
        f._replace(manual=True) if f.rule in rules.guarded and not _inside(spans, f.line, f.column, line) else f
        for f in findings
    ]


def _short_circuited(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> list[Span]:
    """Where the later operands of ``not <call> or ...`` are: on a TPU host the ``or`` stops at the
    true ``not``, so they never run and the whole is True (``not cuda or cuda.is_bf16_supported()``)."""
    negation = parents.get(call)
    owner = parents.get(negation) if isinstance(negation, ast.UnaryOp) and isinstance(negation.op, ast.Not) else None
    if not isinstance(owner, ast.BoolOp) or not isinstance(owner.op, ast.Or):
        return []
    return _spans(owner.values[owner.values.index(negation) + 1 :])  # type: ignore[arg-type]


def soften_short_circuited(
    tree: ast.Module,
    findings: list[Finding],
    resolve: Callable[[ast.expr], tuple[str | None, str]],
    line: Callable[[int], str],
) -> list[Finding]:
    """``findings`` with each must-change one after ``not torch.cuda.is_available() or`` made review:
    that code never runs on a TPU host, as the label conventions count a branch TPU never enters."""
    probes = {  # a cheap filter first: the probe's line says "not" and "or"
        f.line for f in findings if " or " in (text := line(f.line)) and "not " in text and "is_available" in text
    }
    if not probes:
        return findings
    spans: list[Span] = []
    for parents in _parents(tree, probes):
        for node in parents:
            if isinstance(node, ast.Call) and not node.args and not node.keywords and resolve(node.func)[0] == PROBE:
                spans += _short_circuited(node, parents)
    if not spans:
        return findings
    return [
        f._replace(severity="review") if f.severity == "must-change" and _inside(spans, f.line, f.column, line) else f
        for f in findings
    ]


_LOG_CALLS = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
# The rank-0 print helpers training code defines for itself (print0, print_rank_0, rank0_print,
# rank_zero_info, master_print): they print on one rank, and compute nothing.
_RANK_LOG = re.compile(
    r"(?:print|log|info|warn(?:ing)?)_?(?:rank_?0|rank_zero|0|master|main)"
    r"|(?:rank_?0|rank_zero|master|main)_?(?:print|log|info|warn(?:ing)?)"
)


def _log_name(name: str) -> bool:
    """Whether a call of ``name`` only writes a message."""
    return name in _LOG_CALLS or _RANK_LOG.fullmatch(name) is not None


def soften_logged(
    tree: ast.Module, findings: list[Finding], attributes: frozenset[str], line: Callable[[int], str]
) -> list[Finding]:
    """``findings`` with each one of an attribute rule (``torch.version.cuda``), or of the ``rules``
    given beside them (``torch.cuda.is_available()``), inside the arguments of a print or logging
    call made info: a value only written to a log changes nothing the run does."""
    candidates = {  # the call's name is on the finding's line, or the statement's first: a cheap filter
        f.line
        for f in findings
        if f.rule in attributes and f.severity != "info" and any(w in line(f.line) for w in ("print", "log", "warn"))
    }
    if not candidates:
        return findings
    spans: list[Span] = []
    for parents in _parents(tree, candidates):
        for node in parents:
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if _log_name(name):
                    spans += _spans([*node.args, *(k.value for k in node.keywords)])
    return [
        f._replace(severity="info") if f.rule in attributes and _inside(spans, f.line, f.column, line) else f
        for f in findings
    ]


def cuda_only_guards(
    tree: ast.Module, probes: set[tuple[int, int]], blockers: list[tuple[int, int]], line: Callable[[int], str]
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """Of the probe calls at ``probes`` (line, character column), those whose guarded code holds a
    blocker (line, character column of a finding the fixer leaves): the guards, and the tests that
    pick a value (``_picks``), which a rename alone would send into the blocker."""
    wanted = {line for line, _ in probes}
    out: set[tuple[int, int]] = set()
    picks: set[tuple[int, int]] = set()
    for parents in _parents(tree, wanted):
        for node in parents:
            if not isinstance(node, ast.Call) or node.lineno not in wanted:
                continue
            at = (node.lineno, len(line(node.lineno).encode("utf-8")[: node.col_offset].decode("utf-8", "replace")) + 1)
            if at not in probes:
                continue
            spans = _guarded_spans(node, parents)
            if any(_inside(spans, number, column, line) for number, column in blockers):
                (picks if _picks(node, parents) else out).add(at)
    return out, picks


def _picks(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    """``call`` is the test of an ``if`` whose ``else`` sets a name its body sets too (``device =
    "cuda:0"``, else ``device = "cpu"``): the test picks a value, and a TPU host gets the other one."""
    parent = parents.get(call)
    if not isinstance(parent, ast.If) or parent.test is not call or not parent.orelse:
        return False
    return bool(_assigned(parent.body) & _assigned(parent.orelse))


def _assigned(body: list[ast.stmt]) -> set[str]:
    return {
        t.id
        for st in body
        for n in ast.walk(st)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


def apply_guards(
    tree: ast.Module, findings: list[Finding], rules: RuleSet, line: Callable[[int], str]
) -> list[Finding]:
    """``findings`` with each probe that guards CUDA-only code reported by the ``cuda-only-guard``
    rule instead (unchanged when the table has no such rule)."""
    guard = rules.detectors.get("cuda-only-guard")
    probe_rules = rules.probes
    probes = {(f.line, f.column) for f in findings if f.rule in probe_rules}
    if not guard or not probes:
        return findings
    blockers = [(f.line, f.column) for f in findings if f.rule in rules.cuda_only and f.severity == "must-change"]
    found, picks = cuda_only_guards(tree, probes, blockers, line) if blockers else (set(), set())
    g = guard[0]
    out = [
        f._replace(rule=g.id, code=g.code, severity=g.severity, message=g.message, suggestion=g.suggestion, link=g.link)
        if (f.line, f.column) in found and f.rule in probe_rules
        else f._replace(manual=True)  # must-change, but renamed alone it would run the CUDA-only code
        if (f.line, f.column) in picks and f.rule in probe_rules
        else f
        for f in findings
    ]
    return sorted(set(out))


def soften_cuda_guards(ifs: list[ast.If], findings: list[Finding], line: Callable[[int], str]) -> list[Finding]:
    """``findings`` with each ``cuda-compare`` in the test of an ``if`` made review when the test
    guards CUDA-only code and nothing else (``if device.type == "cuda": torch.cuda.synchronize()``,
    no ``else``): on a TPU the branch is skipped, which is right, so nothing breaks there; only the
    CUDA calls inside it need a TPU counterpart, and they are findings of their own."""
    tests = [f for f in findings if f.rule == "cuda-compare" and f.severity == "must-change"]
    others = [(f.line, f.column) for f in findings if f.severity == "must-change" and f.rule != "cuda-compare"]
    if not tests or not others:
        return findings
    soft: set[tuple[int, int]] = set()
    lines = {f.line for f in tests}
    for node in ifs:  # the `if <comparison>:` statements with no else (kb.scan.scan)
        if not node.test.lineno <= max(lines) or not any(
            node.test.lineno <= n <= (node.test.end_lineno or node.test.lineno) for n in lines
        ):
            continue
        test = _spans([node.test])
        if all(any(_inside(_spans([st]), ln, col, line) for ln, col in others) for st in node.body):
            soft |= {(f.line, f.column) for f in tests if _inside(test, f.line, f.column, line)}
    return [f._replace(severity="review") if (f.line, f.column) in soft else f for f in findings]


def _logs_only(body: list[ast.stmt]) -> bool:
    """Every statement of ``body`` is a print or logging call (``logger.info(...)``)."""
    for st in body:
        call = st.value if isinstance(st, ast.Expr) else None
        func = call.func if isinstance(call, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not _log_name(name):
            return False
    return bool(body)


def drop_logging_guards(ifs: list[ast.If], findings: list[Finding], line: Callable[[int], str]) -> list[Finding]:
    """``findings`` without each ``cuda-compare`` in the test of an ``if`` (no ``else``) whose body only
    prints or logs (``if device != "cuda": logger.info(...)``): on a TPU the message is written or not,
    and nothing the run computes changes."""
    tests = [f for f in findings if f.rule == "cuda-compare"]
    if not tests:
        return findings
    spans = _spans([node.test for node in ifs if _logs_only(node.body)])
    return [f for f in findings if f.rule != "cuda-compare" or not _inside(spans, f.line, f.column, line)]
