"""The shape of the code a newcomer reads: layers as CONTRIBUTING.md declares them, no import cycle
in scripts/kb (type-only imports included), no long function, a thin hook.

Each rule is computed from the sources with ``ast``, so a change that breaks it fails here with the
module, function or cycle named.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

KB = ROOT / "scripts" / "kb"
MAX_FUNCTION_LINES = 60
MAX_HOOK_CODE_LINES = 60


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"), str(path))


def module_name(path: Path) -> str:
    """``core.errors`` for scripts/kb/core/errors.py, ``__main__`` for scripts/kb/__main__.py."""
    return ".".join(path.relative_to(KB).with_suffix("").parts)


def kb_imports(module: str, tree: ast.Module) -> set[str]:
    """The kb modules (``layer.name``) that ``module`` imports anywhere in its file: inside functions,
    ``if`` blocks and ``if TYPE_CHECKING:`` too (a type-only import is still a dependency)."""
    package = module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and (node.module == "kb" or node.module.startswith("kb.")):
                base = node.module.split(".")[1:]
            else:
                continue
            if len(base) >= 2:  # from kb.layer.mod import name
                found.add(".".join(base[:2]))
            else:  # from kb.layer import mod, or from . import mod
                found.update(".".join([*base, a.name]) for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(".".join(a.name.split(".")[1:3]) for a in node.names if a.name.startswith("kb."))
    found.discard(module)
    return found


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(KB.rglob("*.py")) if p.name != "__init__.py"}


def import_graph() -> dict[str, set[str]]:
    known = set(modules())
    return {name: kb_imports(name, _tree(path)) & known for name, path in modules().items()}


def architecture() -> dict[str, tuple[list[str], set[str]]]:
    """CONTRIBUTING.md's Architecture table: each layer's modules and the layers it may import."""
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8").split("## Architecture", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, tuple[list[str], set[str]]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            names = [re.findall(r"`([^`]+)`", c) for c in cells]
            layers[names[0][0]] = (names[1], set(names[2]))
    return layers


def layer_problems(graph: dict[str, set[str]], layers: dict[str, tuple[list[str], set[str]]]) -> list[str]:
    """Every module outside the table or in another folder than its layer, and every import between
    layers that the table does not allow."""
    placed = {f"{layer}.{m}" for layer, (mods, _) in layers.items() for m in mods}
    out = [
        f"scripts/kb/{m.replace('.', '/')}.py is not in its layer's row" for m in graph if m not in placed and "." in m
    ]
    out += [f"{m} is in the table but not in scripts/kb" for m in sorted(placed - set(graph))]
    for module, deps in sorted(graph.items()):
        layer = module.split(".")[0]
        if layer not in layers:
            continue  # __main__ stands above every layer
        for dep in sorted(deps):
            other = dep.split(".")[0]
            if other != layer and other not in layers[layer][1]:
                out.append(f"{module} imports {dep}: layer {layer} may import only {sorted(layers[layer][1])}")
    return out


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


def test_kb_imports_resolves_levels_and_counts_type_only_imports():
    tree = ast.parse(
        "from .a import x\nimport kb.core.b\nfrom kb.core import c\nif TYPE_CHECKING:\n    from ..render.d import y\n"
        "def f():\n    from .e import z\n    from . import g\n    from ..wiki import h\n"
    )
    assert kb_imports("pages.m", tree) == {"pages.a", "core.b", "core.c", "render.d", "pages.e", "pages.g", "wiki.h"}


def test_layer_problems_finds_an_upward_import_and_a_module_outside_the_table():
    layers = {"core": (["a"], set()), "render": (["b"], {"core"})}
    graph = {"core.a": {"render.b"}, "render.b": {"core.a"}, "render.c": set()}
    assert layer_problems(graph, layers) == [
        "scripts/kb/render/c.py is not in its layer's row",
        "core.a imports render.b: layer core may import only []",
    ]


def test_the_architecture_table_lists_every_layer_folder():
    folders = {p.name for p in KB.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert set(architecture()) == folders


def test_every_import_follows_the_layers_of_contributing():
    problems = layer_problems(import_graph(), architecture())
    assert not problems, "CONTRIBUTING.md's Architecture table and the code disagree:\n" + "\n".join(problems)


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
    found = [f for p in sorted(KB.rglob("*.py")) for f in long_functions(p)]
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
