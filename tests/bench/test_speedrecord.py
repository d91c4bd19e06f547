"""benchmarks/speedrecord.py: the hook's cost, the page weights and the scale ratio load as valid speed records
through the one writer (editbench.write_run), each replacing only the last run of its kind."""

from __future__ import annotations

import sys

import pytest
import yaml

from conftest import ROOT
from kb.core.load import load_table

sys.path.insert(0, str(ROOT / "benchmarks"))
import editbench  # noqa: E402
import hookbench  # noqa: E402
import speedrecord  # noqa: E402

import bench  # noqa: E402

HOOK = {
    "hook_cpu_s": 9.1,
    "plain_cpu_s": 6.5,
    "hook_wall_s": 9.8,
    "plain_wall_s": 7.0,
    "ratio_wall": 1.4,
    "ratios_cpu": [1.38, 1.41, 1.5],
}


def loaded(tmp_path, monkeypatch, records):
    path = tmp_path / "speed.yml"
    monkeypatch.setattr(editbench, "SPEED_FILE", path)
    monkeypatch.setattr(editbench, "ROOT", tmp_path)
    speedrecord.write(records)
    runs, problems = load_table("speed", path, "docs/data/speed.yml")
    assert problems == []
    return [r.model for r in runs]


def test_the_hook_cost_is_the_median_of_the_pairs_ratios(tmp_path, monkeypatch):
    [run] = loaded(tmp_path, monkeypatch, [hookbench.hook_record(HOOK, "cmd --write")])
    assert (run.what, run.unit, run.runs, run.median_s, run.min_s, run.max_s) == ("hook-cost", "x", 3, 1.41, 1.38, 1.5)
    assert run.target_s == 1.25 and run.command == "cmd --write"
    assert "9.10 s with the hook, 6.50 s plain" in run.note and "load average" in run.note


def test_the_weights_are_three_records_in_kilobytes(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "search").mkdir(parents=True)
    (site / "search" / "search_index.json").write_text("x" * 2500, "utf-8")
    runs = loaded(tmp_path, monkeypatch, speedrecord.weight_records(site, 353_000, 3_000_000, "w --write"))
    got = {r.what: (r.unit, r.median_s, r.target_s) for r in runs}
    assert got == {
        "content-page-weight": ("KB", 353.0, 150.0),
        "print-part-weight": ("KB", 3000.0, 1000.0),
        "search-index-weight": ("KB", 2.5, 400.0),
    }


def test_a_site_without_a_search_index_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no search index"):
        speedrecord.weight_records(tmp_path, 1, 1, "w")


def test_the_scale_ratio_is_the_large_wall_time_over_the_small(tmp_path, monkeypatch):
    record = speedrecord.scale_record({40: (72, 10.0, 12.0), 1000: (1000, 169.0, 200.0)}, "s --write")
    [run] = loaded(tmp_path, monkeypatch, [record])
    assert (run.what, run.unit, run.median_s, run.target_s) == ("scale-build", "x", 16.9, 25.0)
    assert "the smallest, 72 pages" in run.note and "1,000 pages, 169.0 s wall" in run.note


def test_a_scale_run_missing_a_size_is_refused():
    with pytest.raises(SystemExit, match=r"built only \[40\] pages"):
        speedrecord.scale_record({40: (72, 10.0, 12.0)}, "s")


def test_scale_write_is_refused_for_other_sizes(monkeypatch):
    import scalebench

    monkeypatch.setattr(scalebench, "run", lambda *a: pytest.fail("no build before the refusal"))
    with pytest.raises(SystemExit, match="expected --sizes 40,1000"):
        bench.bench_scale([40, 3000], 900, False, None, write=True)


def test_a_new_kind_replaces_only_its_own_last_run(tmp_path, monkeypatch):
    path = tmp_path / "speed.yml"
    path.write_text(yaml.safe_dump([{"id": "e", "what": "edit-to-reload"}, {"id": "h", "what": "hook-cost"}]))
    monkeypatch.setattr(editbench, "SPEED_FILE", path)
    monkeypatch.setattr(editbench, "ROOT", tmp_path)
    speedrecord.write([hookbench.hook_record(HOOK, "cmd")])
    assert [r["id"] for r in yaml.safe_load(path.read_text("utf-8"))][0] == "e"
    assert [r["what"] for r in yaml.safe_load(path.read_text("utf-8"))] == ["edit-to-reload", "hook-cost"]
