"""The Git host settings (kb/editlinks.py) and the edit actions they give every page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.editlinks import check_edit_uri, check_environment, check_repo_url
from wikisite import REPO, ROOT, build, plain_site, wiki_site

GOOD_URLS = [
    "https://github.com/team/handbook",
    "https://gitlab.internal:8443/group/sub/handbook/",
    "https://h.example",
]
BAD_URLS = [
    "http://github.com/team/handbook",
    "github.com/team/handbook",
    "javascript:alert(1)",
    'https://x.org/"onmouseover="alert(1)',
    "https://x.org/a b",
    "https://x.org/<script>",
    "https://user:pw@x.org/repo",
    "https://x.org/repo?x=1",
    "https://x.org/repo#top",
    "https:///path",
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_good_repository_urls(url):
    assert check_repo_url(url) == []


@pytest.mark.parametrize("url", BAD_URLS)
def test_bad_repository_urls_name_the_variable(url):
    assert [str(p) for p in check_repo_url(url, 9)] == [
        f"mkdocs.yml:9: repo_url (from HANDBOOK_REPO_URL) {url!r} is not an absolute https URL of a repository "
        "(expected https://HOST/GROUP/PROJECT, without a user name, query or fragment, spaces, quotes, < > or `; "
        "unset it for a site without edit links)"
    ]


@pytest.mark.parametrize("uri", ["edit/main/docs/", "-/edit/main/docs/", "src/branch/main/docs/", "?path=/docs/"])
def test_good_edit_uris(uri):
    assert check_edit_uri(uri) == []


@pytest.mark.parametrize("uri", ["//evil.org/", "https://evil.org/", "edit/../../x/", 'edit/"x/', "edit/<b>/"])
def test_bad_edit_uris_name_the_variable(uri):
    assert [p.message for p in check_edit_uri(uri)] == [
        f"edit_uri (from HANDBOOK_EDIT_URI) {uri!r} is not a path inside the repository (expected something like "
        "'edit/main/docs/' or '-/edit/main/docs/': letters, digits and . _ ~ / ? = % + -, no scheme, no '//' "
        "and no '..')"
    ]


def test_check_environment_points_at_the_keys_in_mkdocs_yml():
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\n")
    repo_line = next(n for n, line in enumerate(lines, 1) if line.startswith("repo_url:"))
    edit_line = next(n for n, line in enumerate(lines, 1) if line.startswith("edit_uri:"))
    found = check_environment({"HANDBOOK_REPO_URL": "ftp://x.org/r", "HANDBOOK_EDIT_URI": "//x/"}, ROOT)
    assert [(p.path, p.line) for p in found] == [("mkdocs.yml", repo_line), ("mkdocs.yml", edit_line)]
    assert check_environment({}, ROOT) == []


def test_a_bad_variable_fails_the_build_with_its_name(tmp_path):
    result = build(tmp_path / "site", HANDBOOK_REPO_URL="https://x.org/a b")
    assert result.returncode != 0
    assert "repo_url (from HANDBOOK_REPO_URL) 'https://x.org/a b' is not an absolute https URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_a_repository_no_action_and_no_repository_link():
    html = (plain_site() / "migrate" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert 'rel="edit"' not in html and "md-content__button" not in html
    assert "md-source" not in html


def test_with_a_repository_every_page_has_edit_and_view_links():
    site = wiki_site()
    html = (site / "migrate" / "quickstart" / "index.html").read_text(encoding="utf-8")
    edit = re.search(r'<a href="([^"]+)" title="Edit this page"[^>]*rel="edit"', html)
    view = re.search(r'<a href="([^"]+)" title="View source of this page"', html)
    assert edit and edit.group(1) == f"{REPO}/edit/main/docs/migrate/quickstart.md"
    assert view and view.group(1) == f"{REPO}/raw/main/docs/migrate/quickstart.md"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{REPO}/edit/main/docs/index.md"' in home


def test_the_repository_link_is_plain_so_material_fetches_no_source_facts():
    # Material's JavaScript fetches stars, forks and the release for [data-md-component=source]
    bundle = next(
        (ROOT / ".venv/lib/python3.11/site-packages/material/templates/assets/javascripts").glob("bundle.*.js")
    )
    assert "api.github.com" in bundle.read_text(encoding="utf-8")  # the fetch the override avoids
    for page in wiki_site().rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert 'data-md-component="source"' not in html, page
    html = (wiki_site() / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{REPO}" title="Go to repository" class="md-source">' in html


def test_overrides_escape_what_they_print():
    for name in ("source.html", "actions.html"):
        text = (ROOT / "overrides" / "partials" / name).read_text(encoding="utf-8")
        printed = re.findall(r"\{\{(.*?)\}\}", text)
        assert printed and all(expr.strip().endswith("| e") for expr in printed), (name, printed)


def test_the_offline_bundle_inherits_the_settings():
    text = (ROOT / "mkdocs.offline.yml").read_text(encoding="utf-8")
    assert text.startswith("#") and "INHERIT: mkdocs.yml" in text
    assert not re.search(r"^(repo_url|edit_uri|theme):", text, re.M)  # inherited, not repeated
    assert Path(ROOT / "overrides" / "partials" / "source.html").is_file()
