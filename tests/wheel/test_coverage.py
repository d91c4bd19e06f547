"""kb.wheel.coverage.message_problems: every message the wheel prints is an error entry or an internal one."""

from __future__ import annotations

import textwrap

from conftest import MINI_TABLES, write_tables
from kb.core.load import load_kb
from kb.wheel.coverage import message_problems

INTERNAL = """\
    - id: int-split
      message: "wait_tensor producer not found in partition map."
      where: torch_tpu/_internal/compile/split_compiler.py:664
      reason: An invariant of the graph splitter; no public call reaches it.
      verified: 2026-12-01
      checked_against: torch-tpu==0.2.0
"""
INVENTORY = {
    "messages": [
        {"text": "wait_tensor producer not found in partition map.", "kind": "RuntimeError", "where": "a.py:1"},
        {"text": "world_size must be strictly positive, got \u2026.", "kind": "ValueError", "where": "b.py:48"},
    ]
}


def kb_with(tmp_path, internal: str):
    data = write_tables(tmp_path / "docs" / "data", internal_messages=textwrap.dedent(internal) or "[]\n")
    assert "internal_messages" in MINI_TABLES
    return load_kb(data, tmp_path)


def test_a_message_in_neither_table_is_a_problem_naming_it_and_where(tmp_path):
    found = [str(p) for p in message_problems(kb_with(tmp_path, INTERNAL), INVENTORY)]
    assert len(found) == 1
    assert found[0].startswith("docs/data/package.json:1: the wheel's message 'world_size must be strictly positive")
    assert "(b.py:48) is neither an entry of docs/data/errors.yml nor in docs/data/internal_messages.yml" in found[0]


def test_an_internal_message_the_wheel_does_not_print_is_stale(tmp_path):
    inventory = {"messages": INVENTORY["messages"][1:]}
    found = [str(p) for p in message_problems(kb_with(tmp_path, INTERNAL), inventory)]
    assert any("internal_messages[0].message: not a message of the wheel's inventory" in p for p in found), found
