"""The project's own Python (library, hook, tests, benchmarks) passes ruff's lint and format checks,
and the library (scripts/kb) passes mypy --strict (configured in mypy.ini)."""

import subprocess
import sys

import pytest

from conftest import ROOT

PATHS = ["scripts", "tests", "benchmarks"]


def test_ruff_check():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *PATHS], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_strict():
    """mypy.ini names the files (scripts/kb) and sets strict, so a bare ``python -m mypy`` checks exactly that."""
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
