"""Shared fixtures: a tiny valid project written into a temporary folder, and the real project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from browser.support import REPORT

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

MINI_TABLES = {
    "sources": """\
        - id: prim
          title: Primary doc
          publisher: Vendor
          url: https://example.org/doc
          published: 2026-10
          accessed: 2026-11-01
          kind: primary
          language: en
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        - id: news
          title: A news report
          publisher: Press
          file: seeds/x.txt
          accessed: 2026-11-01
          kind: news
          language: id
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "claims": """\
        - id: dev
          topic: device
          statement: "The device is `tpu`."
          status: confirmed
          sources:
            - {id: prim, locator: intro}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        - id: wrong
          topic: device
          statement: The device is tpu, not xla.
          status: corrected
          sources:
            - {id: prim, locator: intro}
            - {id: news, locator: para 2}
          conflicts:
            - {source: news, says: the device is xla}
          corrects: The report says xla.
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "figures": """\
        - id: tput
          metric: Throughput
          value: 25700
          unit: tokens/s
          conditions: {model: M, hardware: TPU v7, chips: 1, seq_len: 5120, workload: inference}
          measured_by: vendor
          claimed_by: Vendor
          topic: throughput
          status: reported
          sources:
            - {id: news, locator: para 3}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "modes": "[]\n",
    "limits": "[]\n",
    "env_vars": "[]\n",
    "api_map": "[]\n",
    "hardware": """\
        - id: v7
          name: TPU v7
          hbm_gib: 192
          bf16_tflops: 2307
          devices_per_chip: 2
          status: confirmed
          sources:
            - {id: prim, locator: table}
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
    "integrations": "[]\n",
    "frameworks": "[]\n",
    "migration_rules": "[]\n",
    "errors": "[]\n",
    "internal_messages": "[]\n",
    "benchmarks": "[]\n",
    "speed": "[]\n",
    "diagrams": "[]\n",
    "glossary": """\
        - id: hbm
          term: HBM
          expansion: High Bandwidth Memory
          definition: Memory next to the chip.
          verified: 2026-11-01
          checked_against: torch-tpu==0.2.0
        """,
}


def write_tables(data_dir: Path, **overrides: str) -> Path:
    """Write the mini KB (with some tables replaced) into ``data_dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for name, text in {**MINI_TABLES, **overrides}.items():
        (data_dir / f"{name}.yml").write_text(textwrap.dedent(text), encoding="utf-8")
    return data_dir


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A tiny valid project: docs/data tables and two pages."""
    write_tables(tmp_path / "docs" / "data")
    (tmp_path / "docs" / "index.md").write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 15.\n---\n# Home\n\nSee [the page](sub/page.md#details).\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "sub").mkdir()
    (tmp_path / "docs" / "sub" / "page.md").write_text(
        "---\nreviewed: 2026-11-01\ndescription: Test page 16.\n---\n# Page\n\n## Details\n\n<!-- kb:figure tput -->\n",
        encoding="utf-8",
    )
    return tmp_path


def copy_project(dest: Path) -> Path:
    """Copy the real project (sources only, no venv or site) to ``dest``."""
    for name in ("docs", "scripts", "snippets", "overrides"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("mkdocs.yml", "mkdocs.offline.yml", "torch-tpu.pin", "frameworks.pin"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    return dest


SCAN_RULES = Path(__file__).parent / "scan_rules.yml"


def scan_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m kb scan --rules tests/scan_rules.yml ARGS`` in ``cwd``, as a user would run it."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-m", "kb", "--root", str(root), "scan", "--rules", str(SCAN_RULES), *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(root / "scripts")},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def real_wheels() -> Path:
    """The pinned torch-tpu wheel, and the framework wheels of frameworks.pin beside it in
    .cache/wheels: downloaded from the package index the first time (``pip download --no-deps``),
    read offline after. A test that needs them asks for this, whatever ran before it."""
    from kb.wheel import fwwheels
    from kb.wheel.package import PackageError, cached_wheel, fetch_wheel

    try:
        path = cached_wheel(ROOT) or fetch_wheel(ROOT)
    except PackageError as exc:  # pragma: no cover - only without the package index
        pytest.fail(f"could not download the pinned wheel: {exc}")
    failed = fwwheels.fetch(ROOT, sorted(fwwheels.read_pins(ROOT)))
    assert failed == [], "could not download the framework wheels: " + "; ".join(map(str, failed))
    return path


# ---- The browser tests' figures, printed at the end of the run ----
# ./dev test runs the suite in several processes (pytest-xdist): each sends the lines its tests
# reported (browser/support.py's REPORT) to the process that prints the summary.
WORKER_REPORT = "kb_browser_report"


def pytest_sessionfinish(session):
    sent = getattr(session.config, "workeroutput", None)  # set in an xdist worker only
    if sent is not None:
        sent[WORKER_REPORT] = json.dumps(REPORT)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    for title, lines in json.loads(getattr(node, "workeroutput", {}).get(WORKER_REPORT, "{}")).items():
        REPORT.setdefault(title, []).extend(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not REPORT:
        return
    terminalreporter.section("browser tests")
    for title, lines in REPORT.items():
        terminalreporter.write_line(f"{title}:")
        for line in lines:
            terminalreporter.write_line(f"  {line}")
