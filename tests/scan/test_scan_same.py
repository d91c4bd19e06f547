"""benchmarks/scan_same.py: two scanners' JSON reports compare equal only when every field of every
finding (related locations included) and every problem is the same."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import scan_same  # noqa: E402


def report(related: list[dict[str, object]], message: str = "m") -> dict[str, object]:
    finding = {"path": "a.py", "line": 3, "column": 1, "code": "TPU102", "message": message, "related": related}
    return {"findings": [finding], "problems": [{"path": "b.py", "line": 1, "message": "does not parse"}]}


def test_the_same_reports_compare_equal(capsys):
    assert scan_same.compare("tree", report([{"line": 9, "column": 5}]), report([{"line": 9, "column": 5}]))
    assert "tree: 1 findings, identical" in capsys.readouterr().out


def test_a_related_location_or_a_message_makes_them_differ(capsys):
    assert not scan_same.compare("tree", report([{"line": 9, "column": 5}]), report([{"line": 9, "column": 6}]))
    out = capsys.readouterr().out
    assert "tree: findings differ: 1 in base, 1 here; 1 only in base, 1 only here" in out
    lines = out.splitlines()
    assert lines[1].startswith("  - ") and '"column": 5' in lines[1]
    assert lines[2].startswith("  + ") and '"column": 6' in lines[2]
    assert lines[3] == "tree: 1 problems, identical"
    assert not scan_same.compare("tree", report([]), report([], message="other"))


def test_a_missing_problem_makes_them_differ():
    ours = report([])
    ours["problems"] = []
    assert not scan_same.compare("tree", report([]), ours)
