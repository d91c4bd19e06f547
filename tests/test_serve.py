"""`mkdocs serve` survives a broken edit: it prints the problem and keeps serving the last good site."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

from conftest import copy_project


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 10) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except OSError:
        return 0


def _wait_for(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def test_a_broken_edit_keeps_the_last_good_site_up(tmp_path):
    root = copy_project(tmp_path / "p")
    port = _free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(root / "scripts")}
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", f"127.0.0.1:{port}"]
    with log.open("w") as out:
        server = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}/"
        assert _wait_for(lambda: _get(base, 2) == 200, 90), log.read_text()[-2000:]
        glossary = root / "docs" / "data" / "glossary.yml"
        glossary.write_text(glossary.read_text() + "- {id: broken\n")
        assert _wait_for(lambda: "still serving the last good version" in log.read_text(), 60), log.read_text()[-2000:]
        assert _get(base + "migrate/", 10) == 200  # answered at once, not stuck
        assert "docs/data/glossary.yml:" in log.read_text() and "malformed YAML" in log.read_text()
        page = root / "docs" / "migrate" / "index.md"
        page.write_text(page.read_text() + "\n<!-- kb:claim no-such-claim -->\n")
        assert _wait_for(lambda: "unknown claims id 'no-such-claim'" in log.read_text(), 60), log.read_text()[-2000:]
        assert _get(base + "migrate/", 10) == 200
        assert "docs/migrate/index.md:" in log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=20)
