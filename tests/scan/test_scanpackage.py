"""The scanner as a package of its own (pyproject.toml, setup.py, .pre-commit-hooks.yaml): a wheel
built from a copy of the checkout ships kb.core and kb.scan.scan alone, with exactly the dependencies they
import, and installed into a fresh venv its ``torchtpu-scan`` command works from any folder."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from buildtools import HANG_S
from conftest import ROOT

pytestmark = pytest.mark.slow  # builds a wheel and a venv, and installs the wheel's dependencies with pip

DISTRIBUTION = {"yaml": "PyYAML"}  # import name -> distribution, where they differ
CLEAN = {"PATH": "/usr/bin:/bin"}  # no PYTHONPATH: ./dev test puts the checkout's scripts/ on it


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "scripts" / "kb", src / "scripts" / "kb", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "docs" / "data").mkdir(parents=True)
    for table in (ROOT / "docs" / "data").glob("migration_rules*.yml"):
        shutil.copy(table, src / "docs" / "data" / table.name)
    wheels = tmp_path_factory.mktemp("wheels")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(src)],
        capture_output=True,
        text=True,
        timeout=HANG_S * 5,
    )
    assert build.returncode == 0, build.stderr
    (built,) = wheels.glob("torchtpu_scan-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment (no system packages) with the wheel and its declared dependencies."""
    env = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=HANG_S * 5)
    install = subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=HANG_S * 10,
    )
    assert install.returncode == 0, install.stderr
    return env


def shipped_imports(names: list[str], z: zipfile.ZipFile) -> set[str]:
    """The top-level modules outside the standard library and kb that the wheel's modules import."""
    found: set[str] = set()
    for name in names:
        if name.endswith(".py"):
            for node in ast.walk(ast.parse(z.read(name))):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "kb"}


def test_the_wheel_ships_core_and_scan_with_exactly_their_dependencies(wheel: Path):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        imported = shipped_imports(names, z)
    packages = {n.rsplit("/", 1)[0] for n in names if n.endswith(".py")}
    assert packages == {"kb", "kb/core", "kb/scan"}
    assert "kb/scan/rules/migration_rules.yml" in names
    assert "torchtpu-scan = kb.scan.scanrun:main" in entry
    required = {line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")}
    assert {r.split("==")[0] for r in required} == {DISTRIBUTION.get(m, m) for m in imported}
    pins = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert all(r.split()[0] in pins for r in required), "the package's pins differ from requirements.txt"


def test_the_installed_command_scans_from_another_folder(venv: Path, tmp_path: Path):
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "pyproject.toml").write_text('[tool.torchtpu-scan]\nsite-url = "https://wiki.example.com/tpu/"\n')
    run = subprocess.run(
        [str(venv / "bin" / "torchtpu-scan"), "--format", "json", "."],
        cwd=tmp_path,
        env=CLEAN,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert run.returncode == 1, run.stderr
    (finding,) = json.loads(run.stdout)["findings"]
    assert finding["code"] == "TPU109"
    assert finding["link"] == "https://wiki.example.com/tpu/migrate/device-code/#legacy-device-apis"
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import kb; print(kb.__file__)"],
        cwd=tmp_path,
        env=CLEAN,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(venv))  # not the checkout's copy


def test_a_handbook_command_in_the_scanner_package_says_what_it_needs(venv: Path, tmp_path: Path):
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "kb", "validate"], cwd=tmp_path, env=CLEAN, capture_output=True, text=True
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "needs the handbook's checkout" in run.stderr and "torchtpu-scan PATH" in run.stderr


def test_the_pre_commit_hook_runs_the_command():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "torchtpu-scan" and hook["entry"] == "torchtpu-scan"
    assert hook["language"] == "python" and hook["types"] == ["python"]
