"""``--fix`` edits exactly the text it read, or nothing, and says so: one real file is fixed once
however it is reached; a link out of the tree is refused on the command line as in the walk; a
file changed after the scan or during the write, locked by another run, read-only or not
writable is left byte-identical with a ``path:line: message``; mode, owner, extended attributes
and hard links are kept; a failure (disk full, permission) is reported for its file, the others
still fixed, the exit status non-zero; a signal stops the workers and leaves no temp file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
# a rename that makes the line longer, then a call its old column lands on when applied twice
SHIFTY = "import torch\ny = torch.cuda.device_count(); p(12); torch.cuda.synchronize()\n"
FIXED = "import torch\ny = torch.accelerator.device_count(); p(12); torch.accelerator.synchronize()\n"


def scan(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", *args]
    return subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=300)


def test_a_file_reached_through_a_symlink_in_the_tree_is_fixed_once(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "real.py").write_text(SHIFTY)
    (tree / "link.py").symlink_to("real.py")
    result = scan("--fix", "t", cwd=tmp_path)
    assert (tree / "real.py").read_text() == FIXED, result.stderr
    assert (tree / "link.py").is_symlink()


def test_a_file_named_twice_or_by_two_hard_links_is_fixed_once(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "real.py").write_text(SHIFTY)
    os.link(tree / "real.py", tree / "other.py")
    scan("--fix", "t/real.py", "t/../t/real.py", "t/other.py", cwd=tmp_path)
    assert (tree / "real.py").read_text() == FIXED


def test_a_symlink_named_on_the_command_line_that_leaves_its_folder_is_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.py").write_text(SHIFTY)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "link.py").symlink_to(tmp_path / "outside" / "x.py")
    result = scan("--fix", "t/link.py", cwd=tmp_path)
    assert (tmp_path / "outside" / "x.py").read_text() == SHIFTY
    assert "t/link.py:1: symlink leads out of" in result.stderr, result.stderr
