"""``python -m kb render --out DIR``: plain MkDocs, with no hook, builds the rendered folder into the
same pages as a build with the hook (main content compared; kb/render/postprocess.py's theme fixes and
kb/render/slim.py's lighter markup apply to both, as they are the hook's post-processing of the built HTML)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from kb.mkdocs.renderout import plain_config
from kb.render.postprocess import fix_html
from kb.render.slim import slim_html
from wikisite import plain_site

ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
PAGES = ["index.html", "migrate/index.html", "reference/glossary/index.html", "about/print/part-3/index.html"]


def test_plain_config_drops_the_hooks_and_resolves_the_git_host():
    text = "site_name: x\nrepo_url: !ENV HANDBOOK_REPO_URL\nedit_uri: !ENV [HANDBOOK_EDIT_URI, e/]\nhooks:\n  - scripts/hooks.py\nplugins: []\n"
    assert plain_config(text, {}) == "site_name: x\n\n\nplugins: []\n"
    with_repo = plain_config(text, {"HANDBOOK_REPO_URL": "https://git.example/a/b"})
    assert 'repo_url: "https://git.example/a/b"\nedit_uri: "edit/main/docs/"\n' in with_repo
    assert "hooks" not in with_repo


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("render")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts"), "NO_MKDOCS_2_WARNING": "1"}
    env.pop("HANDBOOK_REPO_URL", None)
    out = tmp / "rendered"
    done = subprocess.run(
        [sys.executable, "-m", "kb", "render", "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hooks" not in (out / "mkdocs.yml").read_text()
    plain = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp / "plain")],
        cwd=out,
        env={**env, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
    )
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    return out, tmp / "plain", plain_site()  # the real project built with its hook, once per session


@pytest.mark.build
def test_every_file_of_docs_is_in_the_rendered_folder(sites):
    out = sites[0]
    for path in (ROOT / "docs").rglob("*"):
        assert (out / "docs" / path.relative_to(ROOT / "docs")).exists(), path
    assert "<!-- kb:" not in (out / "docs" / "migrate" / "index.md").read_text()


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_plain_build_of_the_rendered_folder_makes_the_same_pages(sites, page):
    _, plain, hook = sites
    ours = ARTICLE.search(_blank(slim_html(fix_html((hook / page).read_text("utf-8")))))
    theirs = ARTICLE.search(_blank(slim_html(fix_html((plain / page).read_text("utf-8")))))
    assert ours and theirs
    assert ours.group(1) == theirs.group(1)


def _blank(html: str) -> str:
    """Lines of nothing but spaces as empty lines: Python-Markdown drops the indentation of the
    blank lines in a raw HTML block (the printable handbook is one in the rendered folder), which
    changes no text a reader sees."""
    return re.sub(r"(?m)^[ \t]+$", "", html)
