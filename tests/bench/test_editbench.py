"""benchmarks/editbench.py --write: the run it records loads as a valid speed record, and a new
run replaces the last one of its kind only."""

from __future__ import annotations

import datetime
import sys

import pytest
import yaml

from conftest import ROOT
from kb.core.load import load_table

sys.path.insert(0, str(ROOT / "benchmarks"))
import editbench  # noqa: E402

RESULT = {
    "edit_to_reload_median_s": 1.3,
    "edit_to_reload_max_s": 1.7,
    "edits": 3,
    "per_page_s": {"a.md": [1.2, 1.7], "b.md": [1.3]},
    "load_average_1m": 0.4,
}
DAY = datetime.date(2026, 12, 6)


def test_the_recorded_run_loads_as_a_speed_record(tmp_path):
    path = tmp_path / "speed.yml"
    editbench.write_run(path, editbench.speed_record(RESULT, "python benchmarks/editbench.py --write", DAY))
    assert path.read_text("utf-8").startswith("# Written by benchmarks/editbench.py --write")
    records, problems = load_table("speed", path, "docs/data/speed.yml")
    assert problems == []
    run = records[0].model
    assert (run.median_s, run.min_s, run.max_s, run.runs) == (1.3, 1.2, 1.7, 3)
    assert (run.target_s, run.floor_s) == (1.0, 1.5)


def test_a_new_run_replaces_the_last_of_its_kind_and_keeps_the_rest(tmp_path):
    path = tmp_path / "speed.yml"
    other = {"id": "x", "what": "clean-build", "median_s": 9}
    path.write_text(yaml.safe_dump([other, {"id": "old", "what": "edit-to-reload"}]), "utf-8")
    editbench.write_run(path, editbench.speed_record(RESULT, "cmd", DAY))
    data = yaml.safe_load(path.read_text("utf-8"))
    assert [r["id"] for r in data] == ["x", "edit-to-reload-2026-12-06"]


def test_a_broken_file_is_left_as_it_is_and_named_with_its_line(tmp_path, capsys):
    path = tmp_path / "speed.yml"
    path.write_text("- id: x\n  what: [unclosed\n", "utf-8")
    with pytest.raises(SystemExit) as stop:
        editbench.write_run(path, editbench.speed_record(RESULT, "cmd", DAY))
    assert str(stop.value).startswith(f"{path}:3: not valid YAML")
    assert path.read_text("utf-8") == "- id: x\n  what: [unclosed\n"
