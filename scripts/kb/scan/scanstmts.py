"""Every statement of a module, listed once per tree: far fewer than its nodes.

Passes that look for a kind of statement (an ``assert``, an assignment, a block that sets a default
device) read this list instead of walking every expression node of the tree again; it is kept on
the tree, so each file's passes share one walk.
"""

from __future__ import annotations

import ast
from typing import Iterator

Placed = tuple[ast.stmt, tuple[int, int]]  # a statement, the lines of the innermost function it is in
INNER = ("body", "orelse", "finalbody", "handlers", "cases")
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def statements(tree: ast.Module) -> list[Placed]:
    """Every statement in the order written, with the span of the innermost function it is in ((0, 0)
    at module level)."""
    found: list[Placed] | None = tree.__dict__.get("_kb_statements")
    if found is None:
        found = tree.__dict__["_kb_statements"] = list(_walk(tree))
    return found


def _walk(tree: ast.Module) -> Iterator[Placed]:
    stack: list[tuple[ast.AST, tuple[int, int]]] = [(st, (0, 0)) for st in reversed(tree.body)]
    while stack:
        node, span = stack.pop()
        if isinstance(node, ast.stmt):
            yield node, span
            if isinstance(node, FUNCS):
                span = (node.lineno, node.end_lineno or node.lineno)
        for field in INNER:
            stack += [(inner, span) for inner in reversed(getattr(node, field, ()))]


def blocks(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    """Each block of statements: the module's body, and each body, ``else`` and ``finally`` of a
    statement, each ``except`` clause's and each ``case``'s body."""
    yield tree.body
    for st, _ in statements(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if type(block) is list and block:
                yield block
        for inner in (*getattr(st, "handlers", ()), *getattr(st, "cases", ())):
            yield inner.body
