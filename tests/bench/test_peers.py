"""benchmarks/peers.py: what the bench reads from the runs it times (not the runs themselves)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import peers  # noqa: E402


def build_run(err: str) -> peers.Run:
    return peers.Run(seconds=20.0, peak_kib=1024, code=0, out="", err=err)


def test_the_hook_check_time_is_read_from_each_build_with_our_hook():
    hook = peers.Timing("build-hook", 1000)
    for took in ("0.412", "0.398", "0.455"):
        hook.add(
            build_run(f"INFO    -  Cleaning site directory\nINFO    -  built-site check took {took} s, 0 problem(s)\n")
        )
    check = peers.hook_check(hook)
    assert (check.tool, check.size) == ("hook-check", 1000)
    assert check.seconds == [0.412, 0.398, 0.455]
    assert check.median == 0.412


@pytest.mark.parametrize(
    "err", ["INFO    -  Documentation built in 20.00 seconds\n", "built-site check took 1 s\n" * 2]
)
def test_a_build_without_exactly_one_check_line_stops_the_bench(err):
    hook = peers.Timing("build-hook", 100)
    hook.add(build_run(err))
    with pytest.raises(SystemExit, match="built-site check took"):
        peers.hook_check(hook)


def test_the_htmlproofer_ratio_divides_its_added_time_by_the_hook_check():
    def timing(tool: str, seconds: float) -> peers.Timing:
        t = peers.Timing(tool, 1000)
        t.add(build_run(""), seconds)
        return t

    got = {
        r["id"]: r["value"]
        for r in peers.ratios(
            [timing("build-render", 20.0), timing("build-htmlproofer", 50.0), timing("hook-check", 0.5)], 1000, 5000
        )
    }
    assert got["htmlproofer-vs-hook"] == pytest.approx(60.0)


def test_the_lexbor_ratio_divides_the_check_by_lexbors_parse():
    def timing(tool: str, seconds: float) -> peers.Timing:
        t = peers.Timing(tool, 1000)
        t.add(build_run(""), seconds)
        return t

    got = {r["id"]: r for r in peers.ratios([timing("check-site", 1.5), timing("floor-lexbor", 0.5)], 1000, 5000)}
    assert got["check-vs-lexbor"]["value"] == pytest.approx(3.0)
    assert (got["check-vs-lexbor"]["target"], got["check-vs-lexbor"]["compare"]) == (2, "at-most")
    alone = {r["id"]: r["value"] for r in peers.ratios([timing("check-site", 1.5)], 1000, 5000)}
    assert alone["check-vs-lexbor"] is None


@pytest.mark.parametrize("processes", ["1", "2"])
def test_the_lexbor_floor_parses_every_html_file_once(tmp_path, processes):
    for i in range(7):
        (tmp_path / f"d{i % 3}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 3}" / f"p{i}.html").write_text(f"<p id=a{i}>page {i}", encoding="utf-8")
    (tmp_path / "style.css").write_text("p { color: red }", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", peers.FLOOR_LEXBOR, str(tmp_path), processes], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "7", "")


def test_a_run_record_with_the_lexbor_floor_is_a_valid_benchmark_that_gives_the_load(monkeypatch):
    from kb.core.schema import Benchmark

    monkeypatch.setattr(peers.os, "getloadavg", lambda: (3.456, 0.0, 0.0))
    args = argparse.Namespace(runs=1, slow_runs=1, slow_size=1000, ratio_size=1000, argv=["--sizes", "1000"])
    timings = []
    for tool, seconds in (("check-site", 1.5), ("floor", 0.1), ("floor-lexbor", 0.5)):
        t = peers.Timing(tool, 1000)
        t.add(build_run(""), seconds)
        timings.append(t)
    injected = [peers.Injected(f, "docs/x.md", 1, "x.md") for f in peers.FAULTS]
    checkers = ("kb-validate", "kb-check-site", "htmlproofer", "linkchecker", "linkchecker-anchors")
    found = {1000: {c: [] for c in checkers}}
    site = {1000: {"pages": 1000, "html_files": 1002, "html_mib": 76.0, "stopped": []}}
    rec = peers.record(args, timings, found, injected, site)
    run = Benchmark.model_validate(rec)
    assert [t.tool for t in run.timings] == ["check-site", "floor", "floor-lexbor"]
    assert run.note == "Load average over the last minute at the end of the run: 3.46."
