"""The Git host settings (kb/editlinks.py) and the edit actions they give every page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.editlinks import check_edit_uri, check_environment, check_repo_url, check_site_url
from wikisite import REPO, ROOT, SITE, build, plain_site, wiki_site

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


@pytest.mark.parametrize("url", ["https://wiki.example.com/handbook/", "http://wiki.corp:8080/", "https://h.example"])
def test_good_site_urls(url):
    assert check_site_url(url) == []


@pytest.mark.parametrize(
    "url", ["ftp://x.org/", "wiki.example.com/", "https://x.org/a b", 'https://x.org/"x', "https://u@x.org/"]
)
def test_bad_site_urls_name_the_variable(url):
    assert [str(p) for p in check_site_url(url, 7)] == [
        f"mkdocs.yml:7: site_url (from HANDBOOK_SITE_URL) {url!r} is not the absolute URL the site is served at "
        "(expected https://HOST/PATH/, without a user name, query or fragment, spaces, quotes, < > or `; "
        "unset it for a site without a sitemap or canonical links)"
    ]


def test_a_bad_site_url_fails_validate_and_the_build(tmp_path):
    lines = (ROOT / "mkdocs.yml").read_text("utf-8").split("\n")
    line = next(n for n, text in enumerate(lines, 1) if text.startswith("site_url:"))
    found = check_environment({"HANDBOOK_SITE_URL": "wiki/"}, ROOT)
    assert line == 9  # the build's message below names it
    assert [(p.path, p.line) for p in found] == [("mkdocs.yml", line)]
    # MkDocs itself refuses a URL without a scheme or host (in its own words): this one it takes
    result = build(tmp_path / "site", HANDBOOK_SITE_URL='https://x.org/"onload="alert(1)')
    assert result.returncode != 0
    assert "mkdocs.yml:9: site_url (from HANDBOOK_SITE_URL) 'https://x.org/\"onload" in result.stderr
    assert "Traceback" not in result.stderr


def test_with_a_site_url_a_full_sitemap_and_a_canonical_link_on_every_page():
    site = wiki_site()
    pages = sorted(p for p in site.rglob("index.html") if 'http-equiv="refresh"' not in p.read_text("utf-8"))
    locs = re.findall(r"<loc>([^<]+)</loc>", (site / "sitemap.xml").read_text("utf-8"))
    assert len(pages) >= 30 and len(locs) == len(pages)
    for page in pages:
        path = page.parent.relative_to(site).as_posix()
        url = SITE + ("" if path == "." else path + "/")
        assert url in locs, url
        assert f'<link rel="canonical" href="{url}">' in page.read_text("utf-8"), page


def test_without_a_site_url_no_sitemap_entry_and_no_canonical_link():
    site = plain_site()
    assert "<loc>" not in (site / "sitemap.xml").read_text("utf-8")
    pages = [p.read_text("utf-8") for p in site.rglob("*.html")]
    stubs = [html for html in pages if 'http-equiv="refresh"' in html]  # mkdocs-redirects links its target
    assert stubs and not [html for html in pages if 'rel="canonical"' in html and html not in stubs]


def test_every_page_has_its_own_meta_description():
    seen: dict[str, str] = {}
    for page in sorted(plain_site().rglob("index.html")):
        html = page.read_text("utf-8")
        if 'http-equiv="refresh"' in html:
            continue  # a redirect stub
        m = re.search(r'<meta name="description" content="([^"]+)">', html)
        assert m, page
        assert m.group(1) not in seen, (page, seen.get(m.group(1)))
        seen[m.group(1)] = str(page)
    assert len(seen) >= 30


def test_the_404_page_links_under_the_sites_path():
    html = (wiki_site() / "404.html").read_text("utf-8")
    assert 'href="/handbook/migrate/"' in html and 'for="__search"' in html
    html = (plain_site() / "404.html").read_text("utf-8")
    assert 'href="/migrate/"' in html and 'href="/reference/environment-variables/"' in html
