"""``<!-- kb:bench PART -->``: a run of ./dev bench (docs/data/benchmarks.yml) as tables and a chart.

PART is ``about`` (machine, date, command, tool versions), ``timings``, ``faults``, ``ratios`` or
``chart``; ``id=RUN`` picks a run (default: the last record). Pass or fail is decided here from
each ratio's value and target, never stored.
"""

from __future__ import annotations

import math

from ..core.escape import md_code, md_text, number, svg_text
from ..core.load import KB, Record
from ..core.schema import BENCH_CHECKERS, BENCH_TIMED, Benchmark, BenchRatio, BenchTiming

PARTS = ("about", "timings", "faults", "ratios", "chart")
LABELS = {
    "build": "mkdocs build alone (no hook)",
    "build-hook": "mkdocs build with our hook (validate, render, check-site)",
    "build-render": "mkdocs build, render-only hook (no checks)",
    "build-htmlproofer": "render-only build + mkdocs-htmlproofer-plugin",
    "hook-check": "our hook's built-site check, timed inside the build with our hook (peak memory: that build's)",
    "check-site": "python -m kb check-site (a process)",
    "check-site-inprocess": "check_site() inside one process",
    "floor": "floor: read and lower-case every HTML file",
    "floor-lexbor": "floor: lexbor's parse of every HTML file, in as many processes as check-site",
    "kb-validate": "KB validation and rendering (inside one process)",
    "linkchecker": "linkchecker, no anchor check",
    "linkchecker-anchors": "linkchecker with AnchorCheck",
    "kb-check-site": "python -m kb check-site",
    "htmlproofer": "mkdocs-htmlproofer-plugin",
}
_CHECKER_HEAD = {
    "kb-validate": "kb validate (before the build)",
    "kb-check-site": "kb check-site",
    "htmlproofer": "htmlproofer",
    "linkchecker": "linkchecker",
    "linkchecker-anchors": "linkchecker + anchors",
}
_COLOURS = (
    "#3f51b5",
    "#d81b60",
    "#00897b",
    "#f4511e",
    "#6d4c41",
    "#546e7a",
    "#8e24aa",
    "#7cb342",
    "#fbc02d",
    "#039be5",
)


class BenchError(Exception):
    """A kb:bench shortcode that can't be rendered; render.py adds path and line."""


def pick(kb: KB, run_id: str | None) -> Benchmark | None:
    """The run ``run_id`` (default: the last one); None when no run is recorded and none was asked for."""
    runs: list[Record[Benchmark]] = kb.rows("benchmarks", Benchmark)
    if not runs and run_id is None:
        return None
    if run_id is None:
        return runs[-1].model
    for rec in runs:
        if rec.id == run_id:
            return rec.model
    known = ", ".join(r.id for r in runs) or "none recorded"
    raise BenchError(f"unknown benchmarks id '{run_id}' (expected one of: {known})")


def render(kb: KB, part: str, run_id: str | None) -> str:
    if part not in PARTS:
        raise BenchError(f"unknown part '{part}' (expected one of: {', '.join(PARTS)})")
    run = pick(kb, run_id)
    if run is None:
        return "\n\n*No run of `./dev bench` is recorded in docs/data/benchmarks.yml yet.*\n\n"
    body = {"about": about, "timings": timings, "faults": faults, "ratios": ratios, "chart": chart}[part](run)
    return "\n\n" + body + "\n\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(cell or "&nbsp;" for cell in row) + " |" for row in rows])


def _sizes(values: list[int]) -> str:
    return ", ".join(number(v) for v in values)


def about(run: Benchmark) -> str:
    tools = ", ".join(f"{md_text(t.name)} {md_text(t.version)}" for t in run.tools)
    slow = (
        f" The builds, htmlproofer and linkchecker at {number(run.slow_size)} pages and more ran "
        f"{number(run.slow_runs)} time{'s' if run.slow_runs != 1 else ''}."
        if any(s >= run.slow_size for s in run.sizes)
        else ""
    )
    sites = "; ".join(
        f"{number(s.pages)} pages: {number(s.html_files)} HTML files, {number(s.html_mib)} MiB" for s in run.sites
    )
    note = f"\n\n{md_text(run.note)}" if run.note else ""
    return (
        f"**Measured** {md_text(run.measured.isoformat())} on {md_text(run.machine)}, with "
        f"{md_code(run.command)}: sites of {md_text(_sizes(run.sizes))} pages ({md_text(sites)}), "
        f"each command run {number(run.runs)} time{'s' if run.runs != 1 else ''}.{slow}\n\n"
        f"**Tools:** {tools}.{note}"
    )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _order(t: BenchTiming) -> tuple[int, int]:
    return BENCH_TIMED.index(t.tool), t.pages


def timings(run: Benchmark) -> str:
    rows = []
    for t in sorted(run.timings, key=_order):
        if t.stopped_after_s is not None:
            median, low, high = f"stopped after {_seconds(t.stopped_after_s)}", "", ""
            runs = "stopped"
        else:
            median, low, high, runs = _seconds(t.median_s), _seconds(t.min_s), _seconds(t.max_s), number(t.runs or 0)
        rows.append(
            [
                md_text(LABELS[t.tool]),
                number(t.pages),
                f"**{md_text(median)}**",
                md_text(low),
                md_text(high),
                md_text(f"{t.peak_mib:.0f}"),
                md_text(runs),
            ]
        )
    return _table(["Run", "Pages", "Median (s)", "Min (s)", "Max (s)", "Peak memory (MiB)", "Runs"], rows)


def faults(run: Benchmark) -> str:
    checkers = [c for c in BENCH_CHECKERS if any(f.checker == c for f in run.findings)] or list(BENCH_CHECKERS)
    found = {f.checker: f for f in run.findings}
    unfinished = {c for c in checkers if c in found and found[c].stopped_at}
    rows = []
    for f in run.faults:
        cells = ["caught" if c in f.caught_by else "not reached" if c in unfinished else "**missed**" for c in checkers]
        rows.append([f"{md_text(f.fault)}<br><small>{md_code(f.injected)}</small>", *cells])
    rows.append(
        [
            "*Caught, of " + number(len(run.faults)) + "*",
            *[number(sum(c in f.caught_by for f in run.faults)) for c in checkers],
        ]
    )
    rows.append(
        [
            "*Other findings (false positives)*",
            *[number(found[c].other_findings) if c in found else "" for c in checkers],
        ]
    )
    stopped = [
        f"{_CHECKER_HEAD[c]} at {_sizes(found[c].stopped_at)} pages"
        for c in checkers
        if c in found and found[c].stopped_at
    ]
    note = (
        "\n\nStopped at the time limit (*not reached*: not reported before it was stopped): "
        + md_text("; ".join(stopped))
        + "."
        if stopped
        else ""
    )
    return _table(["Fault (where it was injected)", *[md_text(_CHECKER_HEAD[c]) for c in checkers]], rows) + note


def verdict(r: BenchRatio) -> str:
    if r.value is None:
        return "not measured"
    ok = r.value <= r.target if r.compare == "at-most" else r.value >= r.target
    return "pass" if ok else "fail"


def ratios(run: Benchmark) -> str:
    rows = []
    for r in run.ratios:
        value = "" if r.value is None else number(r.value)
        target = f"{'≤' if r.compare == 'at-most' else '≥'} {number(r.target)}"
        result = verdict(r)
        rows.append([md_text(r.what), md_text(value), md_text(target), f"**{result}**" if result == "fail" else result])
    return _table(["Ratio", "Value", "Target", "Result"], rows)


# ---- Chart: median seconds against site size, both on log scales, one line per command ----

# 420 units wide: on a 390 px phone 13-unit text still renders at 11 px (tests/browser/test_layout.py).
_W, _LEFT, _TOP, _PLOT_W, _PLOT_H = 420, 52, 30, 356, 220


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """log10 bounds for a scale from ``lo`` to ``hi`` (widened by half a decade when they are equal)."""
    a, b = math.log10(lo), math.log10(hi)
    return (a - 0.5, b + 0.5) if b - a < 1e-9 else (a, b)


def chart(run: Benchmark) -> str:
    series: dict[str, list[tuple[int, float]]] = {}
    for t in sorted(run.timings, key=_order):
        if t.median_s is not None and t.median_s > 0:
            series.setdefault(t.tool, []).append((t.pages, t.median_s))
    if not series:
        raise BenchError("no timing with a median to chart")
    pages = [p for pts in series.values() for p, _ in pts]
    secs = [s for pts in series.values() for _, s in pts]
    xa, xb = _decades(min(pages), max(pages))
    ya, yb = _decades(min(secs), max(secs))
    low, high = math.floor(ya), math.ceil(yb)

    def x(v: float) -> float:
        return _LEFT + 20 + (math.log10(v) - xa) / (xb - xa) * (_PLOT_W - 40)

    def y(v: float) -> float:
        return _TOP + _PLOT_H - (math.log10(v) - low) / (high - low) * _PLOT_H

    title = "Median seconds by site size (log scales)"
    bottom = _TOP + _PLOT_H
    height = bottom + 40 + 20 * len(series)
    parts = [
        f'<div class="kb-chart"><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="chart-bench" '
        f'viewBox="0 0 {_W} {height}" width="100%" style="max-width:{_W}px">',
        f'<title id="chart-bench">{svg_text(title)}</title>',
        f'<text x="0" y="16" class="kb-chart__title">{svg_text(title)}</text>',
    ]
    for e in range(low, high + 1):
        v = 10.0**e
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{svg_text(number(v))} s</text>'
            f'<line x1="{_LEFT}" y1="{y(v):.1f}" x2="{_LEFT + _PLOT_W}" y2="{y(v):.1f}" stroke="#9e9e9e" '
            'stroke-opacity="0.5"/>'
        )
    for p in sorted(set(pages)):
        parts.append(f'<text x="{x(p):.1f}" y="{bottom + 18}" text-anchor="middle">{svg_text(number(p))} pages</text>')
    for i, (tool, pts) in enumerate(series.items()):
        colour = _COLOURS[i % len(_COLOURS)]
        label = LABELS[tool]
        coords = " ".join(f"{x(p):.1f},{y(s):.1f}" for p, s in pts)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for p, s in pts:
            parts.append(
                f'<circle cx="{x(p):.1f}" cy="{y(s):.1f}" r="3.5" fill="{colour}">'
                f"<title>{svg_text(label)}: {svg_text(_seconds(s))} s at {svg_text(number(p))} pages</title></circle>"
            )
        ly = bottom + 44 + i * 20
        parts.append(
            f'<rect x="{_LEFT}" y="{ly - 6}" width="18" height="4" fill="{colour}"/>'
            f'<text x="{_LEFT + 26}" y="{ly}" class="kb-chart__label">{svg_text(label)}</text>'
        )
    parts.append("</svg></div>")
    return "".join(parts)
