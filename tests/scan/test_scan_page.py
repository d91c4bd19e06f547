"""Scan your code (docs/migrate/scan-your-code.md): the sample report on the page is what the
scanner prints for the sample, and the install and pre-commit commands work as written (no
placeholder to fill in, the command and options the package really has)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "migrate" / "scan-your-code.md"
SAMPLE = ROOT / "snippets" / "scan" / "train.py"
FENCE = re.compile(r"^(\s*)```(\w+)([^\n]*)\n(.*?)^\1```\s*$", re.M | re.S)


def blocks(lang: str) -> list[tuple[str, str]]:
    """(info string, body) of each fenced block of ``lang`` on the page, dedented."""
    found = []
    for m in FENCE.finditer(PAGE.read_text(encoding="utf-8")):
        if m[2] == lang:
            indent = len(m[1])
            found.append((m[3].strip(), "".join(line[indent:] for line in m[4].splitlines(True))))
    return found


def scan(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The scanner as `./dev scan` runs it, with no site address from the environment."""
    env = {k: v for k, v in os.environ.items() if k != "TORCHTPU_SCAN_SITE_URL"}
    env["PYTHONPATH"] = str(ROOT / "scripts")
    command = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_sample_report_is_what_the_scanner_prints(tmp_path):
    assert '--8<-- "scan/train.py"' in PAGE.read_text(encoding="utf-8")
    shutil.copy(SAMPLE, tmp_path / "train.py")
    run = scan(tmp_path, "train.py")
    assert run.returncode == 1, run.stderr  # must-change findings
    (shown,) = [body for info, body in blocks("text") if "torchtpu-scan train.py" in info]
    assert shown.rstrip("\n") == run.stdout.rstrip("\n"), "the page's sample report is stale: paste the output again"
    assert "must-change" in shown and "[fixable]" in shown


def test_no_command_on_the_page_has_a_placeholder():
    for lang in ("bash", "yaml", "toml"):
        for _, body in blocks(lang):
            assert not re.search(r"<[^>\n]+>", body), f"a {lang} block on the page has a placeholder:\n{body}"


def test_the_install_command_installs_the_scanner_from_the_checkout():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installs = [line for _, body in blocks("bash") for line in body.splitlines() if "pip install" in line]
    assert installs and installs[0].split("#")[0].split() == ["python", "-m", "pip", "install", "."]
    assert "torchtpu-scan" in project["scripts"], "the page tells readers to run a command the package lacks"


def test_the_pre_commit_example_is_a_local_hook_that_runs_the_installed_command(tmp_path):
    (config,) = [yaml.safe_load(body) for _, body in blocks("yaml")]
    (repo,) = config["repos"]
    (hook,) = repo["hooks"]
    assert repo["repo"] == "local" and hook["language"] == "system" and hook["types"] == ["python"]
    command, *options = shlex.split(hook["entry"])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert command in project["scripts"]
    shutil.copy(SAMPLE, tmp_path / "train.py")
    run = scan(tmp_path, *options, "train.py")  # pre-commit appends the staged files
    assert run.returncode == 1 and re.match(r"train\.py:\d+:\d+: TPU\d+ ", run.stdout), run.stdout + run.stderr


def test_the_pages_settings_example_is_read_as_written(tmp_path):
    ((_, settings),) = blocks("toml")
    (tmp_path / "pyproject.toml").write_text(settings, encoding="utf-8")
    shutil.copy(SAMPLE, tmp_path / "train.py")
    run = scan(tmp_path, "train.py")
    assert run.returncode == 1 and "pyproject.toml" not in run.stderr, run.stderr  # read, and fail-on applies
    assert "TPU102" in run.stdout and "TPU8" not in run.stdout
