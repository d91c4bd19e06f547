"""benchmarks/bench.py scale: a size whose build fails is reported with how long it took, and the
bench goes on to the next size; a failed build elsewhere still ends the bench with its message."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path
from tempfile import TemporaryDirectory
from types import SimpleNamespace

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import scalebench  # noqa: E402


def test_a_failed_build_gives_its_times_and_ends_the_bench_when_not_caught(tmp_path, monkeypatch):
    failed = subprocess.CompletedProcess([], 1, "", "ERROR   -  file is 33,554,433 bytes\n")
    monkeypatch.setattr(scalebench.subprocess, "run", lambda *a, **kw: failed)
    with pytest.raises(SystemExit) as stopped:
        scalebench._build(tmp_path, 60, None)
    assert isinstance(stopped.value, scalebench.BuildFailed)
    assert stopped.value.wall >= 0 and stopped.value.cpu >= 0
    assert f"the build of {tmp_path} failed after" in str(stopped.value.code)
    assert str(stopped.value.code).endswith("file is 33,554,433 bytes\n")


def test_the_scale_bench_reports_a_failed_size_and_goes_on(tmp_path, monkeypatch, capsys):
    size_of: dict[Path, int] = {}

    def generate(dest: Path, pages: int, as_published: bool) -> SimpleNamespace:
        (dest / "site").mkdir(parents=True)
        (dest / "site" / "index.html").write_text("<p>x", encoding="utf-8")
        size_of[dest] = pages
        return SimpleNamespace(root=dest, pages=pages)

    def build(project: Path, limit: float, profile: Path | None) -> tuple[float, float]:
        if size_of[project] == 3000:
            raise scalebench.BuildFailed(project, 355.0, 350.5, "INFO    -  one\nERROR   -  part-1 is 32 MiB\n")
        return 4.0, 3.5

    monkeypatch.setattr(scalebench, "generate", generate)
    monkeypatch.setattr(scalebench, "_build", build)
    monkeypatch.setattr(scalebench.tempfile, "TemporaryDirectory", partial(TemporaryDirectory, dir=tmp_path))
    scalebench.run([40, 3000, 1000], 900, False, None)
    out = capsys.readouterr().out
    assert (
        "3000 pages: the build failed after 355.0 s wall, 350.5 s CPU:\nINFO    -  one\nERROR   -  part-1 is 32" in out
    )
    assert "1000 pages: build 4.0 s wall, 3.5 s CPU (1.0x the first size)" in out
