"""Each thing once: a helper that two modules each defined (and that drifted apart) is defined in
one module of scripts/kb, and the others import it."""

from __future__ import annotations

import ast

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
