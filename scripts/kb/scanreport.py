"""The migration scan's reports: text (the default), JSON and SARIF 2.1.0.

Text lists findings grouped by file, then a summary by severity and by rule.

JSON (``--format json``) is one object, stable across releases (``format`` changes if it does)::

    {
      "tool": "kb scan", "format": 1,
      "files_scanned": 12,
      "findings": [{"path": "train.py", "line": 3, "column": 1, "rule": "nccl-backend",
                    "severity": "must-change", "match": "direct" | "followed",
                    "code": "dist.init_process_group('nccl')", "message": "...",
                    "suggestion": "...", "link": "migrate/device-code.md#nccl"}],
      "problems": [{"path": "broken.py", "line": 4, "message": "does not parse: ...; skipped"}],
      "summary": {"must-change": 1, "review": 0, "info": 0, "by_rule": {"nccl-backend": 1}}
    }

Findings are sorted by path, line, column and rule; ``problems`` are files that were not scanned.

SARIF (``--format sarif``) is one run whose ``tool.driver.rules`` are all loaded rules (id,
shortDescription, fullDescription, defaultConfiguration.level: must-change is ``error``, review
``warning``, info ``note``; properties.link; helpUri only when the link is an absolute URL, as the
schema's ``"format": "uri"`` asks, i.e. when mkdocs.yml sets ``site_url``) and whose results carry
ruleId, ruleIndex, level, message and one physical location (uri, startLine, startColumn, snippet).
Files that were not scanned are ``toolExecutionNotifications`` of the run's invocation.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from urllib.parse import quote, urlsplit

from .errors import Problem
from .scannames import Finding
from .scanrules import SEVERITIES, ScanRule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"must-change": "error", "review": "warning", "info": "note"}
TOOL = "kb scan"


def summary(findings: list[Finding]) -> dict[str, Any]:
    by_severity = Counter(f.severity for f in findings)
    out: dict[str, Any] = {s: by_severity.get(s, 0) for s in SEVERITIES}
    out["by_rule"] = dict(sorted(Counter(f.rule for f in findings).items()))
    return out


def text_report(findings: list[Finding], problems: list[Problem], files: int) -> str:
    lines: list[str] = []
    current = None
    for f in findings:
        if f.path != current:
            if current is not None:
                lines.append("")
            lines.append(f.path)
            current = f.path
        how = "  (followed)" if f.how == "followed" else ""
        lines.append(f"  {f.line}:{f.column}  {f.severity}  {f.rule}  {f.code}{how}")
        lines.append(f"      {f.message} Fix: {f.suggestion} See: {f.link}")
    if findings:
        lines.append("")
    with_findings = len({f.path for f in findings})
    skipped = f"; {len(problems)} problem(s), listed on stderr" if problems else ""
    lines.append(f"{len(findings)} finding(s) in {with_findings} of {files} file(s) scanned{skipped}")
    if findings:
        counts = summary(findings)
        lines.append("by severity: " + ", ".join(f"{s} {counts[s]}" for s in SEVERITIES))
        severity = {f.rule: f.severity for f in findings}
        width = max(len(r) for r in severity)
        lines.append("by rule:")
        for rule, n in counts["by_rule"].items():
            lines.append(f"  {rule:<{width}}  {severity[rule]:<11}  {n}")
    return "\n".join(lines)


def json_report(findings: list[Finding], problems: list[Problem], files: int) -> str:
    """One object; each finding and problem on one line (json's C encoder: indenting is 10x slower)."""
    encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder: json.dumps makes one per call
    # A rule's fields are the same on each of its findings, and a path on each finding in its file:
    # encode each once (a repository scan has tens of thousands of findings).
    paths: dict[str, str] = {}
    rules: dict[str, tuple[str, str]] = {}
    rows = []
    for f in findings:
        path = paths.get(f.path) or paths.setdefault(f.path, encode(f.path))
        rule = rules.get(f.rule)
        if rule is None:
            rule = rules[f.rule] = (
                f'"rule": {encode(f.rule)}, "severity": {encode(f.severity)}, ',
                f'"message": {encode(f.message)}, "suggestion": {encode(f.suggestion)}, "link": {encode(f.link)}',
            )
        rows.append(
            f'{{"path": {path}, "line": {f.line}, "column": {f.column}, {rule[0]}"match": "{f.how}", '
            f'"code": {encode(f.code)}, {rule[1]}}}'
        )
    issues = [encode({"path": p.path, "line": p.line, "message": p.message}) for p in sorted(problems)]

    def items(values: list[str]) -> str:
        body = ",".join(["\n    " + v for v in values])
        return f"[{body}\n  ]" if values else "[]"

    return (
        f'{{\n  "tool": {json.dumps(TOOL)},\n  "format": 1,\n  "files_scanned": {files},\n'
        f'  "findings": {items(rows)},\n  "problems": {items(issues)},\n'
        f'  "summary": {json.dumps(summary(findings), ensure_ascii=False)}\n}}'
    )


def sarif_report(findings: list[Finding], problems: list[Problem], rules: list[ScanRule]) -> str:
    index = {r.id: i for i, r in enumerate(rules)}
    driver = {
        "name": TOOL,
        "rules": [
            {
                "id": r.id,
                "shortDescription": {"text": r.message},
                "fullDescription": {"text": r.suggestion},
                "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]},
                "properties": {"severity": r.severity, "match": r.kind, "link": r.link},
            }
            | ({"helpUri": r.link} if urlsplit(r.link).scheme else {})
            for r in rules
        ],
    }
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": SARIF_LEVEL[f.severity],
            "message": {"text": f"{f.message} {f.suggestion}"},
            "locations": [_location(f.path, f.line, f.column, f.code)],
            "properties": {"match": f.how},
        }
        for f in findings
    ]
    notes = [
        {"level": "warning", "message": {"text": p.message}, "locations": [_location(p.path, p.line, None, None)]}
        for p in sorted(problems)
    ]
    run = {
        "tool": {"driver": driver},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
        "results": results,
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False)


def _location(path: str, line: int, column: int | None, code: str | None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line}
    if column is not None:
        region["startColumn"] = column
    if code:
        region["snippet"] = {"text": code}
    return {"physicalLocation": {"artifactLocation": {"uri": quote(path)}, "region": region}}
