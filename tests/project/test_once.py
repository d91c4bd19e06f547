"""Each thing once: a helper that two modules each defined (and that drifted apart) is defined in
one module of scripts/kb, and the others import it."""

from __future__ import annotations

import ast
import re
from collections import Counter

import pytest

from conftest import ROOT

KB = ROOT / "scripts" / "kb"
# name -> the one module that defines it
ONCE = {
    "read_inventory": "wheel/coverage.py",  # raises InventoryError; check-wheel takes that as "does not match"
    "ENV_TOKEN": "wheel/wheel.py",
    # text shown in a terminal or a message (yamlload's one_line, which wrote \n \r \t as escapes, and
    # scanreport's safe were subsets of it) ...
    "escape_text": "core/errors.py",
    # ... and text flattened to one line of a page (line breaks and controls as spaces)
    "one_line": "core/escape.py",
}


def _definitions(name: str) -> list[str]:
    """The modules of scripts/kb that define ``name`` at their top level (a def, class or assignment)."""
    found = []
    for path in sorted(KB.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            names = [getattr(node, "name", None)]
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            if name in names:
                found.append(path.relative_to(KB).as_posix())
    return found


@pytest.mark.parametrize("name", sorted(ONCE))
def test_a_helper_is_defined_once(name):
    assert _definitions(name) == [ONCE[name]]


# Called by tests alone, on purpose: what tests/pages/test_recommended_calls.py runs (kb.pages.calls
# collects the spans for it), and the loader that raises, for tests that want the KB or its problems.
FOR_TESTS = {"pages/calls.py": {"record_spans", "page_spans", "compile_arguments"}, "core/load.py": {"load_kb"}}


def test_every_function_and_class_is_used_by_the_code():
    """A top-level function or class that nothing in scripts/ names is dead code, even when a test calls it
    (pages.load_pages, pages.appendix and printpage.print_html were)."""
    sources = {p: p.read_text("utf-8") for p in [*KB.rglob("*.py"), ROOT / "scripts" / "hooks.py"]}
    words = Counter(re.findall(r"\w+", "\n".join(sources.values())))
    unused = [
        f"{path.relative_to(KB).as_posix()}:{node.lineno} {node.name}"
        for path, text in sources.items()
        if path.is_relative_to(KB)
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        and words[node.name] == 1
        and node.name not in FOR_TESTS.get(path.relative_to(KB).as_posix(), ())
    ]
    assert unused == []
