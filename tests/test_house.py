"""The shape of the code a newcomer reads: no import cycle in scripts/kb, no long function, a thin hook.

Each rule is computed from the sources with ``ast``, so a change that breaks it fails here with the
module, function or cycle named.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

KB = ROOT / "scripts" / "kb"
MAX_FUNCTION_LINES = 60
MAX_HOOK_CODE_LINES = 60


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"), str(path))


def kb_imports(module: str, tree: ast.Module) -> set[str]:
    """The kb modules ``module`` imports anywhere in its file (inside functions and ``if`` blocks
    too, but not under ``if TYPE_CHECKING:``, which never runs)."""
    found: set[str] = set()
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for child in node.body
        for n in ast.walk(child)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:  # from .x import y, or from . import x
                names = [base] if base else [a.name for a in node.names]
            elif base == "kb" or base.startswith("kb."):
                names = [base.removeprefix("kb").lstrip(".")] if base != "kb" else [a.name for a in node.names]
            else:
                continue
            found.update(n.split(".")[0] for n in names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("kb."))
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {p.stem for p in KB.glob("*.py")}
    return {p.stem: kb_imports(p.stem, _tree(p)) & modules for p in sorted(KB.glob("*.py"))}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_kb_imports_counts_imports_inside_functions():
    tree = ast.parse(
        "from .a import x\nimport kb.b\nfrom kb import c\nif TYPE_CHECKING:\n    from .d import y\n"
        "def f():\n    from .e import z\n    from . import g\n"
    )
    assert kb_imports("m", tree) == {"a", "b", "c", "e", "g"}


def test_no_import_cycle_in_kb():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in scripts/kb: " + " -> ".join(cycle or [])


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``file:line name (N lines)`` for each function or method longer than ``limit`` lines."""
    out = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > limit:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_long_functions_are_found():
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    probe = KB / "__probe_long__.py"
    try:
        probe.write_text(f"def f():\n{body}\n", "utf-8")
        assert long_functions(probe) == ["scripts/kb/__probe_long__.py:1 f (71 lines)"]
    finally:
        probe.unlink()


def test_no_function_over_60_lines_in_kb():
    found = [f for p in sorted(KB.glob("*.py")) for f in long_functions(p)]
    assert not found, "functions over 60 lines (split them):\n" + "\n".join(found)


def code_lines(path: Path) -> int:
    """Lines that hold code: not blank, not a comment, not part of a docstring."""
    tree = _tree(path)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and ast.get_docstring(node) is not None:
            doc = node.body[0]
            doc_lines.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    lines = path.read_text("utf-8").split("\n")
    return sum(
        1 for n, line in enumerate(lines, 1) if line.strip() and not line.strip().startswith("#") and n not in doc_lines
    )


def test_hook_is_thin():
    hook = ROOT / "scripts" / "hooks.py"
    assert code_lines(hook) <= MAX_HOOK_CODE_LINES, f"scripts/hooks.py has {code_lines(hook)} code lines"
    assert not long_functions(hook, 15), "a hook event should only call the library"
