"""benchmarks/bench.py glossary --build --write: the CPU 10,000 terms added loads as a valid speed
record, replaces only the last glossary run, and is refused for any other size."""

from __future__ import annotations

import sys

import pytest
import yaml

from conftest import ROOT
from kb.core.load import load_table

sys.path.insert(0, str(ROOT / "benchmarks"))
import editbench  # noqa: E402
import scalebench  # noqa: E402

import bench  # noqa: E402

ADDED = [6.1, 5.9, 6.0]


def test_the_recorded_run_loads_as_a_speed_record(tmp_path):
    path = tmp_path / "speed.yml"
    editbench.write_run(path, scalebench.glossary_speed_record(ADDED, "cmd --write", "2026-12-06", "a machine"))
    records, problems = load_table("speed", path, "docs/data/speed.yml")
    assert problems == []
    run = records[0].model
    assert (run.what, run.runs, run.median_s, run.min_s, run.max_s, run.target_s) == (
        "glossary-build",
        3,
        6.0,
        5.9,
        6.1,
        1.0,
    )
    assert run.floor_s is None and run.command == "cmd --write"


def test_a_glossary_run_replaces_the_last_of_its_kind_only(tmp_path):
    path = tmp_path / "speed.yml"
    path.write_text(yaml.safe_dump([{"id": "e", "what": "edit-to-reload"}, {"id": "g", "what": "glossary-build"}]))
    editbench.write_run(path, scalebench.glossary_speed_record(ADDED, "cmd", "2026-12-06", "m"))
    assert [r["id"] for r in yaml.safe_load(path.read_text("utf-8"))] == ["e", "glossary-build-2026-12-06"]


@pytest.mark.parametrize(("terms", "whole_build"), [([10_000], False), ([2_000], True), ([10_000, 20_000], True)])
def test_write_is_refused_but_for_whole_builds_of_10000_terms(monkeypatch, terms, whole_build):
    monkeypatch.setattr(scalebench, "glossary_build", lambda *a: pytest.fail("no build before the refusal"))
    monkeypatch.setattr(scalebench, "glossary", lambda *a: pytest.fail("no run before the refusal"))
    with pytest.raises(SystemExit, match="expected --build --terms 10000"):
        bench.bench_glossary(terms, 10, whole_build, 1, True)


def test_nothing_is_recorded_when_no_build_with_the_terms_finished(monkeypatch):
    monkeypatch.setattr(editbench, "write_run", lambda *a: pytest.fail("recorded"))
    with pytest.raises(SystemExit, match="nothing was recorded"):
        bench.record_glossary([], 1)


def test_the_floor_goes_in_the_record_and_its_note(tmp_path):
    """With --floor, the plain MkDocs figure of the variant the handbook is like (the glossary as
    HTML, the rows again on a print page) is the record's plain_s; every variant is in the note."""
    import glossfloor

    assert scalebench.FLOOR in glossfloor.VARIANTS
    floors = {name: 1.0 + i for i, name in enumerate(glossfloor.VARIANTS)}
    path = tmp_path / "speed.yml"
    editbench.write_run(path, scalebench.glossary_speed_record(ADDED, "cmd", "2026-12-06", "m", floors))
    records, problems = load_table("speed", path, "docs/data/speed.yml")
    assert problems == []
    assert records[0].model.plain_s == floors[scalebench.FLOOR]
    assert all(f"{name}: +{s:.2f} s." in records[0].model.note for name, s in floors.items())


def test_the_floor_projects_hold_the_rows_as_the_glossary_writes_them():
    """Markdown and HTML tables of the same rows: the term bold after its anchor, the labelled meaning."""
    import glossfloor

    md, html = glossfloor.markdown_table(3), glossfloor.html_table(3)
    assert md.count("\n| <span") == 3 and html.count("<tr>\n<td>") == 3
    assert '<td><span class="kb-anchor" id="term-bench-term-2"></span><strong>CAQ2</strong></td>' in html
    assert '| <span class="kb-anchor" id="term-bench-term-2"></span>**CAQ2** | &nbsp; |' in md
