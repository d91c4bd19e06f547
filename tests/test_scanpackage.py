"""The scanner as a package of its own (pyproject.toml, setup.py, .pre-commit-hooks.yaml): a wheel
built from a copy of the checkout holds the rules table and a ``torchtpu-scan`` command that works
from any folder, with no handbook checkout beside it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("torchtpu_scan-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "kb/scan/rules/migration_rules.yml" in names
    assert "torchtpu-scan = kb.scan.scanrun:main" in entry
    target = tmp_path_factory.mktemp("site-packages")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    return target


def test_the_installed_command_scans_with_its_packaged_rules(installed, tmp_path):
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "pyproject.toml").write_text('[tool.torchtpu-scan]\nsite-url = "https://wiki.example.com/tpu/"\n')
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from kb.scan.scanrun import main; sys.exit(main())",
            "--format",
            "json",
            ".",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stderr
    (finding,) = json.loads(run.stdout)["findings"]
    assert finding["code"] == "TPU109"
    assert finding["link"] == "https://wiki.example.com/tpu/migrate/device-code/#legacy-device-apis"
    imported = subprocess.run(
        [sys.executable, "-c", "import kb; print(kb.__file__)"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
    )
    assert imported.stdout.startswith(str(installed))  # not the checkout's copy


def test_the_pre_commit_hook_runs_the_command():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "torchtpu-scan" and hook["entry"] == "torchtpu-scan"
    assert hook["language"] == "python" and hook["types"] == ["python"]
