"""`mkdocs serve` survives a broken edit: it prints the problem and keeps serving the last good site."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request

import pytest

from buildtools import HANG_S
from conftest import ROOT, copy_project

# Hang guards: a first build or a rebuild of the real site under `mkdocs serve` takes 15-25 s alone
# and several times that on a loaded machine.
SERVE_S = 300


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


@pytest.mark.build
def test_a_broken_edit_keeps_the_last_good_site_up(tmp_path):
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 30) == 200, SERVE_S), log.read_text()[-2000:]
        glossary = root / "docs" / "data" / "glossary.yml"
        glossary.write_text(glossary.read_text() + "- {id: broken\n")
        assert _wait_for(lambda: "still serving the last good version" in log.read_text(), SERVE_S), log.read_text()[
            -2000:
        ]
        assert _get(base + "migrate/", HANG_S) == 200  # answered at once, not stuck
        assert "docs/data/glossary.yml:" in log.read_text() and "malformed YAML" in log.read_text()
        page = root / "docs" / "migrate" / "index.md"
        page.write_text(page.read_text() + "\n<!-- kb:claim no-such-claim -->\n")
        assert _wait_for(lambda: "unknown claims id 'no-such-claim'" in log.read_text(), SERVE_S), log.read_text()[
            -2000:
        ]
        assert _get(base + "migrate/", HANG_S) == 200
        assert "docs/migrate/index.md:" in log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=HANG_S)


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


@pytest.mark.build
def test_deleting_a_page_or_adding_one_before_the_nav_keeps_the_last_good_site_answering(tmp_path):
    """The time limits are hang guards: a stuck server would hold each request until it times out."""
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 30) == 200, SERVE_S), log.read_text()[-2000:]
        (root / "docs" / "migrate" / "serving.md").unlink()
        assert _wait_for(lambda: "still serving the last good version" in log.read_text(), SERVE_S), log.read_text()[
            -3000:
        ]
        assert _wait_for(lambda: _rebuilt(log, 1), SERVE_S), log.read_text()[-3000:]
        assert _get(base + "migrate/", HANG_S) == 200 and _get(base + "migrate/serving/", HANG_S) == 200, (
            log.read_text()[-3000:]
        )
        seen = log.read_text().count("rebuild failed")
        (root / "docs" / "migrate" / "new-page.md").write_text(
            "---\nreviewed: 2026-11-30\ntags: [training]\n---\n\n# New\n"
        )
        assert _wait_for(lambda: log.read_text().count("rebuild failed") > seen, SERVE_S), log.read_text()[-3000:]
        assert _get(base + "limits/", HANG_S) == 200 and _get(base + "migrate/serving/", HANG_S) == 200
    finally:
        server.terminate()
        server.wait(timeout=HANG_S)


@pytest.mark.build
def test_a_bad_shortcode_under_serve_is_reported_at_its_line_counting_the_blank_after_front_matter(tmp_path):
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 30) == 200, SERVE_S), log.read_text()[-2000:]
        page = root / "docs" / "migrate" / "index.md"
        text = page.read_text()
        assert "\n---\n\n#" in text  # a blank line after the front matter
        text += "\n<!-- kb:claim no-such-claim -->\n"
        page.write_text(text)
        line = text.count("\n")
        # reported twice: by the validation before the build, and as the page is rendered from the last good KB
        assert _wait_for(lambda: log.read_text().count("no-such-claim") >= 2, SERVE_S), log.read_text()[-2000:]
        assert f"docs/migrate/index.md:{line}:" in log.read_text(), log.read_text()[-2000:]
        assert f"docs/migrate/index.md:{line - 1}:" not in log.read_text(), log.read_text()[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=HANG_S)


MID_BUILD = '''
"""A test hook: makes a page go away, or a new one appear, after MkDocs has listed the files."""
from pathlib import Path

def on_files(files, config):
    docs = Path(config.docs_dir)
    trigger = docs / "mid-build.txt"
    if not trigger.exists():
        return files
    action, name = trigger.read_text().split()
    files.remove(files.get_file_from_path("mid-build.txt"))
    trigger.unlink()
    if action == "delete":
        (docs / name).unlink()  # listed, with a nav entry, and gone before it is read
    else:
        (docs / name).write_text("---\\nreviewed: 2026-11-30\\ntags: [training]\\n---\\n\\n# New\\n")
    return files
'''


@pytest.mark.build
def test_a_page_deleted_or_created_mid_build_keeps_the_last_good_site_answering(tmp_path):
    """The hook widens the race: the page changes after MkDocs listed the files, before it reads them."""
    root = copy_project(tmp_path / "p")
    (root / "mid_build_hook.py").write_text(MID_BUILD)
    config = root / "mkdocs.yml"
    config.write_text(
        config.read_text().replace("  - scripts/hooks.py\n", "  - scripts/hooks.py\n  - mid_build_hook.py\n")
    )
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 30) == 200, SERVE_S), log.read_text()[-2000:]
        (root / "docs" / "mid-build.txt").write_text("delete migrate/serving.md")
        assert _wait_for(lambda: "rebuild failed" in log.read_text(), SERVE_S), log.read_text()[-3000:]
        assert "docs/migrate/serving.md:1: No such file or directory" in log.read_text(), log.read_text()[-3000:]
        assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
        assert _get(base + "migrate/serving/", HANG_S) == 200 and _get(base + "limits/", HANG_S) == 200
        # the next rebuild (the deletion was seen) names the nav entry left without a page
        nav_line = config.read_text().splitlines().index("      - Serving: migrate/serving.md") + 1
        named = f"mkdocs.yml:{nav_line}: nav entry 'migrate/serving.md' names no page"
        assert _wait_for(lambda: named in log.read_text(), SERVE_S), log.read_text()[-3000:]
        (root / "docs" / "migrate" / "serving.md").write_text((ROOT / "docs" / "migrate" / "serving.md").read_text())
        (root / "docs" / "mid-build.txt").write_text("create migrate/new-page.md")
        named = "docs/migrate/new-page.md:1: page is not in the nav"
        assert _wait_for(lambda: named in log.read_text(), SERVE_S), log.read_text()[-3000:]
        assert _get(base + "migrate/serving/", HANG_S) == 200 and _get(base + "limits/", HANG_S) == 200
        assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    finally:
        server.terminate()
        server.wait(timeout=HANG_S)


def test_a_site_check_a_newer_build_overtook_ends_quietly_and_a_current_one_is_one_line(tmp_path, monkeypatch, capsys):
    """Under serve the check reads the site in the background while the next rebuild may rewrite
    it (seen as an IndexError in kb.site.sitecheck); that must never print a thread's traceback."""
    import kb.mkdocs.build
    import kb.site.sitecheck

    def overtaken(*args, **kwargs):
        build.generation += 1  # the next rebuild starts while the check reads the site
        raise IndexError("list index out of range")

    build = kb.mkdocs.build.Build(serving=True)
    build.project = types.SimpleNamespace(pages=[])
    monkeypatch.setattr(kb.mkdocs.build, "built_sources", lambda pages, urls: {})
    for raising in (overtaken, lambda *a, **k: [][0]):
        monkeypatch.setattr(kb.site.sitecheck, "check_site", raising)
        build.check_site(tmp_path, "site", True, {}, "/", print)
        for thread in [t for t in threading.enumerate() if t.name == "kb-check-site"]:
            thread.join(timeout=60)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Exception in thread" not in err, err
    assert err.count("the built-site check stopped") == 1, err  # the overtaken one said nothing
    assert "site:1: the built-site check stopped: IndexError: list index out of range" in err, err


@pytest.mark.build
def test_an_edit_that_breaks_a_link_into_it_from_an_unchanged_page_is_reported(tmp_path):
    """The unchanged page's conversion is reused under serve (kb/mkdocs/servecache.py); its link into
    the edited page is still checked against the page as edited."""
    root = copy_project(tmp_path / "p")
    server, log, base = _serve(root, tmp_path)
    try:
        assert _wait_for(lambda: _get(base, 30) == 200, SERVE_S), log.read_text()[-2000:]
        assert _wait_for(lambda: "page cache:" in log.read_text(), SERVE_S), log.read_text()[-2000:]
        page = root / "docs" / "migrate" / "quickstart.md"
        page.write_text(page.read_text("utf-8").replace("install-order", "install-sequence"), "utf-8")
        assert _wait_for(lambda: "install-order" in log.read_text(), SERVE_S), log.read_text()[-3000:]
        assert "docs/reference/faq.md:" in log.read_text(), log.read_text()[-3000:]  # faq.md was not edited
    finally:
        server.terminate()
        server.wait(timeout=HANG_S)
