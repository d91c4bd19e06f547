"""The migration scan's reports: text (the default), JSON and SARIF 2.1.0.

Text lists findings grouped by file, then a summary by severity and by rule; each finding is the
line to change, with "used at N places" when uses were traced back to it. Concise (``--format
concise``) is ``path:line:col: CODE message`` one line per finding, as editors parse it. Both write
control, format and invisible characters from paths and source as escapes (``\x1b``, kb.core.errors'
``escape_text``), so a file can't drive the terminal or hide text.

JSON (``--format json``) is one object, stable across releases (``format`` changes if it does)::

    {
      "tool": "kb scan", "format": 2,
      "files_scanned": 12,
      "findings": [{"path": "train.py", "line": 3, "column": 1, "code": "TPU301",
                    "rule": "nccl-backend", "severity": "must-change",
                    "match": "direct" | "followed", "snippet": "'nccl'", "message": "...",
                    "suggestion": "...", "link": "migrate/device-code.md#nccl",
                    "fixable": true, "related": [{"path": "train.py", "line": 9, "column": 5}]}],
      "problems": [{"path": "broken.py", "line": 4, "message": "does not parse: ...; skipped"}],
      "summary": {"must-change": 1, "review": 0, "info": 0, "by_rule": {"nccl-backend": 1}}
    }

Findings are sorted by path, line, column and rule; ``problems`` are files that were not scanned.

SARIF (``--format sarif``) is one run whose ``tool.driver.rules`` are all loaded rules (id,
shortDescription, fullDescription, defaultConfiguration.level: must-change is ``error``, review
``warning``, info ``note``; properties.link; helpUri only when the link is an absolute URL, as the
schema's ``"format": "uri"`` asks, i.e. when mkdocs.yml sets ``site_url``) and whose results carry
ruleId, ruleIndex, level, message, one physical location (uri, startLine, startColumn, snippet)
and the uses as ``relatedLocations``.
Files that were not scanned are ``toolExecutionNotifications`` of the run's invocation.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from urllib.parse import quote, urlsplit

from ..core.errors import Problem, escape_text
from .scannames import Finding
from .scanrules import SEVERITIES, ScanRule

_RANKS = {s: -i for i, s in enumerate(SEVERITIES)}  # must-change ranks highest

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"must-change": "error", "review": "warning", "info": "note"}
TOOL = "kb scan"
FORMAT = 2


def summary(findings: list[Finding]) -> dict[str, Any]:
    by_severity = Counter(f.severity for f in findings)
    out: dict[str, Any] = {s: by_severity.get(s, 0) for s in SEVERITIES}
    out["by_rule"] = dict(sorted(Counter(f.rule for f in findings).items()))
    return out


def text_report(
    findings: list[Finding], problems: list[Problem], files: int, fixable: frozenset[str] = frozenset()
) -> str:
    lines: list[str] = []
    current = None
    for f in findings:
        if f.path != current:
            if current is not None:
                lines.append("")
            lines.append(escape_text(f.path))
            current = f.path
        fix = "  [fixable]" if f.rule in fixable and not f.manual else ""
        lines.append(f"  {f.line}:{f.column}  {f.code}  {f.severity}  {f.rule}  {escape_text(f.snippet)}{fix}")
        if f.related or f.elsewhere:
            uses = [f"{line}:{col}" for line, col in f.related] + [
                f"{escape_text(p)}:{ln}:{c}" for p, ln, c in f.elsewhere
            ]
            places = ", ".join(uses[:8]) + (", ..." if len(uses) > 8 else "")
            lines.append(f"      used at {len(uses)} place(s): {places}")
        lines.append(f"      {f.message} Fix: {f.suggestion} See: {f.link}")
    if findings:
        lines.append("")
    with_findings = len({f.path for f in findings})
    skipped = f"; {len(problems)} problem(s), listed on stderr" if problems else ""
    lines.append(f"{len(findings)} finding(s) in {with_findings} of {files} file(s) scanned{skipped}")
    if findings:
        counts = summary(findings)
        lines.append("by severity: " + ", ".join(f"{s} {counts[s]}" for s in SEVERITIES))
        severity: dict[str, tuple[str, str]] = {}
        for f in findings:  # a rule's most severe finding names it (one may be softened, kb.scan.scanguard)
            if f.rule not in severity or _RANKS[f.severity] > _RANKS[severity[f.rule][1]]:
                severity[f.rule] = (f.code, f.severity)
        width = max(len(r) for r in severity)
        lines.append("by rule:")
        for rule, n in counts["by_rule"].items():
            code, sev = severity[rule]
            lines.append(f"  {code}  {rule:<{width}}  {sev:<11}  {n}")
        n_fix = sum(1 for f in findings if f.rule in fixable and not f.manual)
        if n_fix:
            lines.append(f"{n_fix} finding(s) can be fixed with --fix (see them first with --diff)")
    return "\n".join(lines)


def concise_report(findings: list[Finding]) -> str:
    """``path:line:col: CODE message``, one line per finding (what editors and CI annotate)."""
    return "\n".join(f"{escape_text(f.path)}:{f.line}:{f.column}: {f.code} {f.message}" for f in findings)


def json_report(
    findings: list[Finding], problems: list[Problem], files: int, fixable: frozenset[str] = frozenset()
) -> str:
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
                f'"code": {encode(f.code)}, "rule": {encode(f.rule)}, ',
                f'"message": {encode(f.message)}, "suggestion": {encode(f.suggestion)}, "link": {encode(f.link)}, ',
            )
        fix = "true" if f.rule in fixable and not f.manual else "false"
        places = [(path, line, col) for line, col in f.related] + [(encode(p), ln, c) for p, ln, c in f.elsewhere]
        related = ", ".join(f'{{"path": {p}, "line": {line}, "column": {col}}}' for p, line, col in places)
        rows.append(
            f'{{"path": {path}, "line": {f.line}, "column": {f.column}, {rule[0]}"severity": "{f.severity}", '
            f'"match": "{f.how}", '
            f'"snippet": {encode(f.snippet)}, {rule[1]}"fixable": {fix}, "related": [{related}]}}'
        )
    issues = [encode({"path": p.path, "line": p.line, "message": p.message}) for p in sorted(problems)]

    def items(values: list[str]) -> str:
        body = ",".join(["\n    " + v for v in values])
        return f"[{body}\n  ]" if values else "[]"

    return (
        f'{{\n  "tool": {json.dumps(TOOL)},\n  "format": {FORMAT},\n  "files_scanned": {files},\n'
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
                "name": r.code,
                "shortDescription": {"text": r.message},
                "fullDescription": {"text": r.suggestion},
                "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]},
                "properties": {
                    "code": r.code,
                    "severity": r.severity,
                    "match": r.kind,
                    "link": r.link,
                    "fixable": r.fix is not None,
                },
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
            "locations": [_location(f.path, f.line, f.column, f.snippet)],
            "properties": {"match": f.how, "code": f.code},
        }
        | (
            {
                "relatedLocations": [
                    {"id": i, **_location(path, line, col, None), "message": {"text": "used here"}}
                    for i, (path, line, col) in enumerate([(f.path, *r) for r in f.related] + list(f.elsewhere))
                ]
            }
            if f.related or f.elsewhere
            else {}
        )
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
