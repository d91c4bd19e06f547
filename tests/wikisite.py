"""The real site built once per test session with the team-wiki settings: a Git host for the edit
actions (HANDBOOK_REPO_URL), a site address (HANDBOOK_SITE_URL) and a build date far ahead
(KB_TODAY), so every page is due for review.
Shared by test_editlinks.py, test_review.py and test_urls.py (the browser tests build their own)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO = "https://git.example.com/team/handbook"
SITE = "https://wiki.example.com/handbook/"  # served under a path, as a team wiki often is
FUTURE = "2100-01-01"


def build(dest: Path, **env: str) -> subprocess.CompletedProcess:
    """A strict build of the real project into ``dest`` with extra environment variables."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HANDBOOK_REPO_URL", "HANDBOOK_EDIT_URI", "HANDBOOK_SITE_URL", "KB_TODAY")
    }
    full = {**base, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", "PYTHONPATH": str(ROOT / "scripts")}
    args = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(dest)]
    return subprocess.run(args, cwd=ROOT, env={**full, **env}, capture_output=True, text=True, timeout=600)


def _folder(prefix: str) -> Path:
    """A temporary folder removed when the test session ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, True)
    return Path(folder) / "site"


@functools.cache
def wiki_site() -> Path:
    dest = _folder("wiki-site-")
    result = build(dest, HANDBOOK_REPO_URL=REPO, HANDBOOK_SITE_URL=SITE, KB_TODAY=FUTURE)
    assert result.returncode == 0, result.stdout + result.stderr
    return dest


@functools.cache
def plain_build() -> tuple[Path, str]:
    """The real project built once per session with no site settings, and the build's output
    (shared by test_build.py, test_renderout.py, test_editlinks.py and test_urls.py)."""
    dest = _folder("plain-site-")
    result = build(dest)
    assert result.returncode == 0, result.stdout + result.stderr
    return dest, result.stdout + result.stderr


def plain_site() -> Path:
    return plain_build()[0]
