"""kb.wheel.fwwheels: framework records are held to their own wheels, line by line."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

from conftest import MINI_TABLES, write_tables
from kb.core.load import load_kb
from kb.wheel import fwwheels

CODE = "def setup():\n    if is_torch_tpu_available():\n        device = 'tpu:0'\n    return device\n"
SOURCE = """\
    - id: whl-demo
      title: demo 1.0 (wheel)
      publisher: Demo, via PyPI
      url: https://pypi.org/project/demo/1.0/
      accessed: 2026-12-01
      kind: primary
      language: en
      wheel: demo==1.0
      verified: 2026-12-01
      checked_against: demo==1.0
"""


def project(tmp_path: Path, locator: str, against: str = "demo==1.0", pin: str = "demo==1.0") -> Path:
    claims = f"""\
        - id: fw
          topic: frameworks
          statement: Demo picks the TPU by itself.
          status: confirmed
          sources:
            - {{id: whl-demo, locator: "{locator}"}}
          verified: 2026-12-01
          checked_against: {against}
        """
    write_tables(
        tmp_path / "docs" / "data",
        sources=textwrap.dedent(MINI_TABLES["sources"]) + textwrap.dedent(SOURCE),
        claims=textwrap.dedent(MINI_TABLES["claims"]) + textwrap.dedent(claims),
    )
    (tmp_path / "frameworks.pin").write_text(f"# pins\n{pin}\n", "utf-8")
    wheels = tmp_path / ".cache" / "wheels"
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "demo-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("demo/core.py", CODE)
    return tmp_path


def problems(root: Path) -> list[str]:
    notes: list[str] = []
    kb = load_kb(root / "docs" / "data", root)
    return [str(p) for p in fwwheels.check(kb, root, notes)]


def test_a_locator_whose_tokens_are_on_its_lines_passes(tmp_path):
    assert problems(project(tmp_path, "demo/core.py:2-3 `is_torch_tpu_available` `'tpu:0'`")) == []


def test_a_token_the_lines_do_not_hold_fails_at_the_locator(tmp_path):
    found = problems(project(tmp_path, "demo/core.py:1 `is_torch_tpu_available`"))
    assert len(found) == 1
    assert "claims[2].sources[0].locator: `is_torch_tpu_available` is not on demo/core.py:1-1 in demo==1.0" in found[0]


def test_a_file_the_wheel_lacks_and_a_line_past_its_end_fail(tmp_path):
    assert "demo/gone.py is not in the demo==1.0 wheel" in problems(project(tmp_path, "demo/gone.py:1 `x`"))[0]
    found = problems(project(tmp_path / "b", "demo/core.py:9 `x`"))
    assert "demo/core.py has 4 lines in demo==1.0, not 9" in found[0]


def test_free_text_is_not_a_wheel_locator(tmp_path):
    found = problems(project(tmp_path, "training_args.py, the device setup"))
    assert "is not a wheel locator (expected FILE:LINE[-LINE] `token`" in found[0]


def test_checked_against_a_framework_needs_its_wheel_cited(tmp_path):
    root = project(tmp_path, "demo/core.py:2 `is_torch_tpu_available`", pin="demo==1.0\nother==2.0")
    (root / "docs" / "data" / "claims.yml").write_text(
        (root / "docs" / "data" / "claims.yml")
        .read_text("utf-8")
        .replace("checked_against: demo==1.0", "checked_against: other==2.0"),
        "utf-8",
    )
    found = problems(root)
    assert any("'other==2.0' but no source is that wheel" in p for p in found), found


def test_a_wheel_source_names_a_pinned_release(tmp_path):
    found = problems(project(tmp_path, "demo/core.py:2 `is_torch_tpu_available`", pin="demo==1.1"))
    assert any("sources[2].wheel: 'demo==1.0' is not a line of frameworks.pin" in p for p in found), found


def test_a_missing_wheel_is_a_note_never_a_download(tmp_path):
    root = project(tmp_path, "demo/core.py:1 `nothing-here`")
    (root / ".cache" / "wheels" / "demo-1.0-py3-none-any.whl").unlink()
    notes: list[str] = []
    found = fwwheels.check(load_kb(root / "docs" / "data", root), root, notes)
    assert found == [] and "framework wheel check skipped for demo==1.0" in notes[0]


def test_a_bad_pin_line_is_a_problem_at_its_line(tmp_path):
    root = project(tmp_path, "demo/core.py:2 `is_torch_tpu_available`")
    (root / "frameworks.pin").write_text("demo==1.0\ndemo>=2\n", "utf-8")
    assert problems(root) == ["frameworks.pin:2: 'demo>=2' is not a pin (expected NAME==VERSION)"]
