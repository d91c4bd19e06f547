"""The benchmarks table (schema.Benchmark) and its shortcode, <!-- kb:bench PART -->."""

from __future__ import annotations

import html
import textwrap
from pathlib import Path

import pytest

from conftest import write_tables
from kb.core.load import load_kb, load_table
from kb.render.render import Ctx, render_markdown

RUN = """\
    - id: run-a
      measured: 2026-11-30
      machine: Linux x86_64, 2 CPUs
      command: ./dev bench --sizes 100,1000 --runs 1
      sizes: [100, 1000]
      runs: 1
      slow_runs: 1
      slow_size: 5000
      tools:
        - {name: LinkChecker, version: 10.6.0}
      sites:
        - {pages: 100, html_files: 102, html_mib: 7.9}
        - {pages: 1000, html_files: 1002, html_mib: 80.5}
      timings:
        - {tool: check-site, pages: 100, runs: 1, median_s: 0.2, min_s: 0.2, max_s: 0.2, peak_mib: 30}
        - {tool: check-site, pages: 1000, runs: 1, median_s: 1.5, min_s: 1.5, max_s: 1.5, peak_mib: 60}
        - {tool: floor, pages: 100, runs: 1, median_s: 0.05, min_s: 0.05, max_s: 0.05, peak_mib: 28}
        - {tool: linkchecker-anchors, pages: 1000, stopped_after_s: 900, peak_mib: 128}
      faults:
        - id: missing-page
          fault: Markdown link to a page that does not exist
          injected: docs/bench/s00/page-0001.md:54
          caught_by: [kb-validate, kb-check-site, linkchecker]
        - id: external-script
          fault: script loaded from another origin
          injected: docs/bench/s00/page-0005.md:54
          caught_by: [kb-check-site]
      findings:
        - {checker: kb-validate, other_findings: 0}
        - {checker: kb-check-site, other_findings: 0}
        - {checker: linkchecker, other_findings: 2}
        - {checker: linkchecker-anchors, other_findings: 0, stopped_at: [1000]}
      ratios:
        - {id: check-vs-floor, what: check-site / floor, value: 4.0, target: 3, compare: at-most}
        - {id: linkchecker-vs-check, what: linkchecker / check-site, value: 61.5, target: 60, compare: at-least}
        - {id: check-scaling, what: 5000 / 1000, value: null, target: 5.5, compare: at-most}
    """


def render(tmp_path: Path, page: str, runs: str = RUN) -> tuple[str, list[str]]:
    data = write_tables(tmp_path / "docs" / "data", benchmarks=runs)
    kb = load_kb(data, shown_root=tmp_path)
    md, problems = render_markdown(page, Ctx(kb, "about/performance.md"), "docs/about/performance.md")
    return md, [str(p) for p in problems]


def shown(tmp_path: Path, page: str) -> str:
    """The rendered Markdown with character references decoded (what a reader sees), problems checked."""
    md, problems = render(tmp_path, page)
    assert problems == []
    return html.unescape(md)


def test_ratios_are_judged_from_value_and_target(tmp_path):
    md = shown(tmp_path, "<!-- kb:bench ratios -->")
    assert "| check-site / floor | 4 | ≤ 3 | **fail** |" in md
    assert "| linkchecker / check-site | 61.5 | ≥ 60 | pass |" in md
    assert "| 5000 / 1000 | \xa0 | ≤ 5.5 | not measured |" in md


def test_faults_table_has_a_column_per_checker_and_totals(tmp_path):
    md = shown(tmp_path, "<!-- kb:bench faults -->")
    assert "| Fault (where it was injected) | kb validate (before the build) | kb check-site | linkchecker" in md
    assert "htmlproofer" not in md.split("\n")[2]  # no findings entry for it: no column
    row = next(line for line in md.split("\n") if "script loaded" in line)
    assert row.endswith("| **missed** | caught | **missed** | not reached |")
    assert "| *Caught, of 2* | 1 | 2 | 1 | 0 |" in md
    assert "| *Other findings (false positives)* | 0 | 0 | 2 | 0 |" in md
    assert "linkchecker + anchors at 1,000 pages" in md


def test_timings_list_runs_and_stopped_runs(tmp_path):
    md = shown(tmp_path, "<!-- kb:bench timings -->")
    lines = md.strip().split("\n")
    assert lines[2] == "| python -m kb check-site (a process) | 100 | **0.200** | 0.200 | 0.200 | 30 | 1 |"
    assert "| 1,000 | **stopped after 900.0** |" in md
    assert lines[-1].startswith("| linkchecker with AnchorCheck")


def test_about_names_machine_date_command_and_tools(tmp_path):
    md = shown(tmp_path, "<!-- kb:bench about -->")
    assert "2026-11-30" in md and "Linux x86_64, 2 CPUs" in md
    assert "<code>./dev bench --sizes 100,1000 --runs 1</code>" in md
    assert "LinkChecker 10.6.0" in md
    assert "1,000 pages: 1,002 HTML files, 80.5 MiB" in md


def test_chart_draws_a_line_per_command_with_a_median(tmp_path):
    md = shown(tmp_path, "<!-- kb:bench chart -->")
    assert md.count("<polyline") == 2  # check-site and floor; the stopped run has no median
    assert "100 pages</text>" in md and "1,000 pages</text>" in md
    assert "\n\n" not in md.strip()  # one HTML block


def test_hostile_text_is_escaped(tmp_path):
    runs = RUN.replace("machine: Linux x86_64, 2 CPUs", 'machine: "<script>alert(1)</script>"')
    md, problems = render(tmp_path, "<!-- kb:bench about -->", runs)
    assert problems == []
    assert "<script>" not in md and "&#60;script&#62;alert&#40;1&#41;&#60;/script&#62;" in md


@pytest.mark.parametrize(
    ("page", "runs", "message"),
    [
        (
            "<!-- kb:bench tables -->",
            RUN,
            "kb:bench: unknown part 'tables' (expected one of: about, timings, faults, ratios, chart)",
        ),
        ("<!-- kb:bench about id=run-b -->", RUN, "kb:bench: unknown benchmarks id 'run-b' (expected one of: run-a)"),
        ("<!-- kb:bench about x=1 -->", RUN, "kb:bench: unexpected argument 'x' (expected none)"),
        (
            "<!-- kb:bench about id=run-a -->",
            "[]\n",
            "kb:bench: unknown benchmarks id 'run-a' (expected one of: none recorded)",
        ),
    ],
)
def test_bad_shortcodes_are_problems_at_their_line(tmp_path, page, runs, message):
    _, problems = render(tmp_path, "# Title\n\n" + page, runs)
    assert problems == [f"docs/about/performance.md:3: {message}"]


def test_no_run_recorded_yet_is_said_not_failed(tmp_path):
    md, problems = render(tmp_path, "<!-- kb:bench timings -->", "[]\n")
    assert problems == []
    assert md.strip() == "*No run of `./dev bench` is recorded in docs/data/benchmarks.yml yet.*"


def test_the_generic_table_lists_runs(tmp_path):
    md = shown(tmp_path, "<!-- kb:table benchmarks -->")
    assert '<span class="kb-anchor" id="bench-run-a"></span><code>run-a</code>' in md
    assert "100, 1,000" in md


def test_a_timing_with_min_above_median_is_refused_with_its_line(tmp_path):
    path = tmp_path / "benchmarks.yml"
    bad = RUN.replace("median_s: 0.2, min_s: 0.2", "median_s: 0.2, min_s: 0.3")
    path.write_text(textwrap.dedent(bad), encoding="utf-8")
    records, problems = load_table("benchmarks", path, "docs/data/benchmarks.yml")
    assert records == []
    assert [str(p) for p in problems] == [
        "docs/data/benchmarks.yml:15: benchmarks[0].timings[0]: expected min_s <= median_s <= max_s, got 0.3, 0.2, 0.2"
    ]


def test_a_timing_needs_runs_or_a_stop(tmp_path):
    path = tmp_path / "benchmarks.yml"
    bad = RUN.replace(
        "{tool: floor, pages: 100, runs: 1, median_s: 0.05, min_s: 0.05, max_s: 0.05,", "{tool: floor, pages: 100,"
    )
    path.write_text(textwrap.dedent(bad), encoding="utf-8")
    _, problems = load_table("benchmarks", path, "docs/data/benchmarks.yml")
    assert [p.message for p in problems] == [
        "benchmarks[0].timings[2]: a timing needs runs, median_s, min_s and max_s (or stopped_after_s)"
    ]
