"""The Frameworks pages: their GPU -> TPU diffs stay current and their launch commands run as written.

snippets/frameworks/*.diff are the diffs of each GPU script and its TPU form, shown on the pages.
Rewrite them after editing a script with: KB_UPDATE_DIFF=1 ./dev test tests/content/test_frameworks.py
"""

from __future__ import annotations

import difflib
import os
import shutil

import pytest

from conftest import ROOT
from pagecmds import marked_blocks, run_block

SNIPPETS = ROOT / "snippets" / "frameworks"
DIFFS = {
    "trainer.diff": ("trainer_gpu.py", "trainer_tpu.py", "frameworks/transformers.md"),
    "accelerate.diff": ("accelerate_gpu.py", "accelerate_tpu.py", "frameworks/accelerate.md"),
}


def unified(gpu: str, tpu: str) -> str:
    a, b = (SNIPPETS / gpu).read_text().splitlines(), (SNIPPETS / tpu).read_text().splitlines()
    return "\n".join(difflib.unified_diff(a, b, gpu, tpu, n=2, lineterm="")) + "\n"


@pytest.mark.parametrize("name", sorted(DIFFS))
def test_each_diff_is_the_diff_of_its_two_scripts(name):
    gpu, tpu, _ = DIFFS[name]
    expected, path = unified(gpu, tpu), SNIPPETS / name
    if os.environ.get("KB_UPDATE_DIFF") == "1":
        path.write_text(expected)
    assert path.read_text() == expected, (
        f"snippets/frameworks/{name} is stale: run KB_UPDATE_DIFF=1 ./dev test {__file__}"
    )


@pytest.mark.parametrize("name", sorted(DIFFS))
def test_each_page_shows_its_diff_and_both_scripts(name):
    gpu, tpu, page = DIFFS[name]
    text = (ROOT / "docs" / page).read_text()
    for sample in (name, gpu, tpu):
        assert f'--8<-- "frameworks/{sample}"' in text, f"docs/{page} should include frameworks/{sample}"


@pytest.mark.slow
def test_the_accelerate_launch_command_runs_as_the_page_gives_it(tmp_path):
    """The page's TPU launch script (the block marked data-run), run with bash from a copy of its
    folder (PATH finds this venv's python): on a host with no accelerator it trains two steps on
    the CPU and saves state."""
    (block,) = marked_blocks(ROOT / "docs" / "frameworks" / "accelerate.md")
    assert block.cwd == "snippets/frameworks" and block.command == (SNIPPETS / "accelerate_launch_tpu.sh").read_text()
    shutil.copy(SNIPPETS / "accelerate_tpu.py", tmp_path / "accelerate_tpu.py")
    done = run_block(block, tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "step 1: loss" in done.stdout
    assert (tmp_path / "checkpoint" / "model.safetensors").is_file(), sorted(p.name for p in tmp_path.rglob("*"))
