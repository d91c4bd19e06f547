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
    server, log, base = _serve(root, tmp_path)
    try:
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


def _serve(root, tmp_path):
    port = _free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(root / "scripts")}
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", f"127.0.0.1:{port}"]
    with log.open("w") as out:
        server = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    return server, log, f"http://127.0.0.1:{port}/"


def _rebuilt(log, count: int) -> bool:
    text = log.read_text()
    return text.count("Reloading browsers") + text.count("rebuild failed") >= count


def test_deleting_a_page_or_adding_one_before_the_nav_keeps_the_last_good_site_answering(tmp_path):
    """The time limits are hang guards: a stuck server would hold each request until it times out."""
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 2) == 200, 90), log.read_text()[-2000:]
        (root / "docs" / "migrate" / "serving.md").unlink()
        assert _wait_for(lambda: "still serving the last good version" in log.read_text(), 90), log.read_text()[-3000:]
        assert _wait_for(lambda: _rebuilt(log, 1), 90), log.read_text()[-3000:]
        assert _get(base + "migrate/", 30) == 200 and _get(base + "migrate/serving/", 30) == 200, log.read_text()[
            -3000:
        ]
        seen = log.read_text().count("rebuild failed")
        (root / "docs" / "migrate" / "new-page.md").write_text(
            "---\nreviewed: 2026-11-30\ntags: [training]\n---\n\n# New\n"
        )
        assert _wait_for(lambda: log.read_text().count("rebuild failed") > seen, 90), log.read_text()[-3000:]
        assert _get(base + "limits/", 30) == 200 and _get(base + "migrate/serving/", 30) == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_bad_shortcode_under_serve_is_reported_at_its_line_counting_the_blank_after_front_matter(tmp_path):
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 2) == 200, 90), log.read_text()[-2000:]
        page = root / "docs" / "migrate" / "index.md"
        text = page.read_text()
        assert "\n---\n\n#" in text  # a blank line after the front matter
        text += "\n<!-- kb:claim no-such-claim -->\n"
        page.write_text(text)
        line = text.count("\n")
        # reported twice: by the validation before the build, and as the page is rendered from the last good KB
        assert _wait_for(lambda: log.read_text().count("no-such-claim") >= 2, 90), log.read_text()[-2000:]
        assert f"docs/migrate/index.md:{line}:" in log.read_text(), log.read_text()[-2000:]
        assert f"docs/migrate/index.md:{line - 1}:" not in log.read_text(), log.read_text()[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_an_edit_that_breaks_a_link_into_it_from_an_unchanged_page_is_reported(tmp_path):
    """The unchanged page's conversion is reused under serve (kb/servecache.py); its link into
    the edited page is still checked against the page as edited."""
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 2) == 200, 90), log.read_text()[-2000:]
        assert _wait_for(lambda: "page cache:" in log.read_text(), 60), log.read_text()[-2000:]
        page = root / "docs" / "migrate" / "quickstart.md"
        page.write_text(page.read_text("utf-8").replace("install-order", "install-sequence"), "utf-8")
        assert _wait_for(lambda: "install-order" in log.read_text(), 90), log.read_text()[-3000:]
        assert "docs/reference/faq.md:" in log.read_text(), log.read_text()[-3000:]  # faq.md was not edited
    finally:
        server.terminate()
        server.wait(timeout=30)
