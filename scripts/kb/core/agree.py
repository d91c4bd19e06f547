"""One answer per question: a mapping row may not recommend a call the error index says raises.

An ``errors`` entry lists under ``raised_by`` the calls that raise its message in the setup the
handbook assumes (``torch.accelerator.set_device_index`` with any index but ``0``). Every inline
code span of an ``api_map`` row's TPU side is read as Python; a call it writes that such an entry
names, with arguments other than the entry's ``except_args``, is a problem at the row's ``tpu`` line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from .errors import Problem
from .load import KB, Record
from .schema import ApiMap, ErrorEntry

_CODE = re.compile(r"`([^`]+)`")


def check(kb: KB) -> list[Problem]:
    """A problem for each api_map row whose TPU side writes a call an error entry says raises."""
    raising: dict[str, list[tuple[Record[ErrorEntry], list[str]]]] = {}
    for err in kb.rows("errors", ErrorEntry):
        for by in err.model.raised_by:
            raising.setdefault(by.call, []).append((err, by.except_args))
    problems = []
    for row in kb.rows("api_map", ApiMap):
        for name, args in calls(row.model.tpu):
            for err, allowed in raising.get(name, []):
                if args not in allowed:
                    problems.append(_problem(row, err, name, args, allowed))
    return problems


def calls(text: str) -> Iterator[tuple[str, str]]:
    """Each call written in an inline code span of ``text``: its dotted name and its arguments as
    ``ast.unparse`` writes them. Spans that are not Python expressions are skipped."""
    for span in _CODE.findall(text):
        try:
            tree = ast.parse(span.strip(), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (name := _dotted(node.func)):
                yield name, ", ".join(ast.unparse(a) for a in [*node.args, *node.keywords])


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _problem(row: Record[ApiMap], err: Record[ErrorEntry], name: str, args: str, allowed: list[str]) -> Problem:
    ok = " or ".join(f"{name}({a})" for a in allowed) or "no call of it"
    return Problem(
        row.path,
        row.line_of("tpu"),
        f"{row.where('tpu')}: the TPU side writes `{name}({args})`, which raises in a normal setup "
        f"according to {err.path}:{err.line_of('id')} ('{err.id}': {err.model.message}) "
        f"(expected the TPU side to agree with the error index: {ok}, or drop the call)",
    )
