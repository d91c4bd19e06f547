"""benchmarks/peers.py: what the bench reads from the runs it times (not the runs themselves)."""

from __future__ import annotations

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
