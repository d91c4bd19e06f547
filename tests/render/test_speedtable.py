"""The speed table (docs/data/speed.yml, written by benchmarks/editbench.py --write): its runs are
checked as they load, and ``kb:table speed`` says whether each median meets its target or floor."""

from __future__ import annotations

import html
import textwrap
from pathlib import Path
from typing import get_args

import pytest

from conftest import write_tables
from kb.core.load import load_kb, load_table
from kb.core.schema import SpeedTimed
from kb.render.render import SPEED_LABELS, Ctx, render_markdown

RUN = """\
    - id: edit-1
      what: edit-to-reload
      measured: 2026-12-06
      machine: Linux x86_64, 2 CPUs
      command: python benchmarks/editbench.py --pages 10 --write
      runs: 10
      median_s: {median}
      min_s: {low}
      max_s: 1.9
      target_s: 1.0
      floor_s: 1.5
    """


def rendered(root: Path, run: str) -> str:
    """The speed table's Markdown (escaped, as the page gets it) for one run."""
    data = write_tables(root / "docs" / "data", speed=run)
    kb = load_kb(data, shown_root=root)
    md, problems = render_markdown("<!-- kb:table speed -->", Ctx(kb, "about/performance.md"), "docs/p.md")
    assert problems == []
    return md


def shown(tmp_path: Path, median: float, low: float = 0.5, extra: str = "") -> str:
    """The table for a run of ``median`` (with ``extra`` fields), its references unescaped."""
    return html.unescape(rendered(tmp_path, RUN.format(median=median, low=low).rstrip() + "\n" + extra))


@pytest.mark.parametrize(
    ("median", "verdict"),
    [(0.9, "at most 1 s (floor 1.5 s): met"), (1.2, ": missed, within the floor"), (1.6, ": missed |")],
)
def test_the_target_cell_judges_the_median(tmp_path, median, verdict):
    md = shown(tmp_path, median)
    assert verdict in md
    assert f"**{median:.2f}**" in md
    assert "<code>python benchmarks/editbench.py --pages 10 --write</code>" in md


def test_the_target_cell_gives_what_plain_mkdocs_alone_takes(tmp_path):
    assert "plain MkDocs" not in shown(tmp_path, 1.6)
    md = shown(tmp_path / "p", 1.6, extra="      plain_s: 2.73\n")
    assert "at most 1 s (floor 1.5 s): missed (plain MkDocs and Material alone: 2.73 s)" in md


def test_every_kind_of_run_has_a_label():
    assert set(SPEED_LABELS) == set(get_args(SpeedTimed))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("min_s: 0.5", "min_s: 1.3"),
        ("floor_s: 1.5", "floor_s: 0.5"),
    ],
)
def test_a_run_out_of_order_is_refused_with_its_line(tmp_path, change, message):
    text = textwrap.dedent(RUN.format(median=1.2, low=0.5)).replace(*((change, message)))
    path = tmp_path / "speed.yml"
    path.write_text(text, encoding="utf-8")
    records, problems = load_table("speed", path, "docs/data/speed.yml")
    assert records == []
    assert [str(p).split(": expected")[0] for p in problems] == ["docs/data/speed.yml:1: speed[0]"]


NEW_KINDS = [
    ("hook-cost", "x", 1.41, 1.25, "**1.41** ×", "at most 1.25 ×: missed"),
    ("content-page-weight", "KB", 353.0, 150.0, "**353.00** KB", "at most 150 KB: missed"),
    ("print-part-weight", "KB", 998.0, 1000.0, "**998.00** KB", "at most 1000 KB: met"),
    ("search-index-weight", "KB", 937.0, 400.0, "**937.00** KB", "at most 400 KB: missed"),
    ("scale-build", "x", 16.9, 25.0, "**16.90** ×", "at most 25 ×: met"),
]


@pytest.mark.parametrize(("what", "unit", "median", "target", "figure", "verdict"), NEW_KINDS)
def test_a_figure_that_is_not_a_time_shows_its_unit_and_verdict(tmp_path, what, unit, median, target, figure, verdict):
    run = (
        RUN.format(median=median, low=median)
        .replace("what: edit-to-reload", f"what: {what}\n      unit: {unit}")
        .replace("max_s: 1.9", f"max_s: {median}")
        .replace("target_s: 1.0", f"target_s: {target}")
        .replace("      floor_s: 1.5\n", "")
    )
    data = write_tables(tmp_path / "docs" / "data", speed=run)
    kb = load_kb(data, shown_root=tmp_path)
    md, problems = render_markdown(f"<!-- kb:table speed what={what} -->", Ctx(kb, "about/performance.md"), "p.md")
    assert problems == []
    shown = html.unescape(md)
    assert figure in shown and verdict in shown
    assert SPEED_LABELS[what] in shown
    assert " s" not in shown.split(figure)[1].split("|")[1]  # the min-to-max cell gives the same unit, not seconds


def test_the_note_with_the_load_average_is_shown_under_what_was_measured(tmp_path):
    assert "<small>" not in shown(tmp_path, 0.9)
    run = RUN.format(median=0.9, low=0.5).rstrip() + "\n      note: 'Load average at the end: 0.78 <b>.'\n"
    md = rendered(tmp_path / "p", run)
    assert "<b>" not in md  # escaped, as every field is
    assert "to the page served with it<br><small>Load average at the end: 0.78 <b>.</small>" in html.unescape(md)
