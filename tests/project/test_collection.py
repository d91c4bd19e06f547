"""The suite collects the same tests, in the same order, in every process: pytest-xdist (./dev test)
refuses to run when its workers disagree. A test id built from a time stamp (gzip's header) or
from the order of a set (string hashes differ from one process to the next) would break that."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT


def _collected(seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_two_processes_collect_the_same_tests_in_the_same_order():
    first = _collected("1")
    time.sleep(1.1)  # a second later: a time stamp in an id would differ
    second = _collected("2")
    assert len(first) > 1000
    changed = [(a, b) for a, b in zip(first, second, strict=False) if a != b]
    assert len(first) == len(second) and not changed, changed[:3]
