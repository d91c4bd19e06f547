"""Helpers for the scanner's tests: the project's own rule table, and a scan of a small tree of
files written for a test (kb.scan.scanrun.scan_all, as ``./dev scan`` runs it, in one process)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import ROOT
from kb.scan.scan import scan_source
from kb.scan.scannames import Finding
from kb.scan.scanrules import RuleSet, load_rules
from kb.scan.scanrun import scan_all


def project_rules() -> RuleSet:
    return load_rules(sorted((ROOT / "docs" / "data").glob("migration_rules*.yml")), ROOT)


def scan_tree(tmp_path: Path, rules: RuleSet, files: dict[str, str]) -> list[Finding]:
    """Write ``files`` (path -> source, dedented) under ``tmp_path`` and scan them together."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    findings, problems = scan_all([(str(tmp_path / n), n) for n in sorted(files)], rules, jobs=1)
    assert problems == []
    return findings


def places(rules: RuleSet, code: str, rule: str) -> list[tuple[int, int]]:
    """(line, column) of each finding of ``rule`` in ``code`` (dedented), scanned as one file."""
    return [(f.line, f.column) for f in scan_source(textwrap.dedent(code), "t.py", rules) if f.rule == rule]
