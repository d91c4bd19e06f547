"""The Git host settings (kb/wiki/editlinks.py) and the edit actions they give every page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.core.config import read_config
from kb.wiki.editlinks import check_edit_uri, check_environment, check_repo_url, check_site_url
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


@pytest.mark.parametrize(
    "uri",
    [
        "//evil.org/",
        "https://evil.org/",
        "edit/../../x/",
        'edit/"x/',
        "edit/<b>/",
        "edit/%2e%2e/%2E%2E/x/",  # percent-encoded dot segments are decoded before the '..' check
        "edit/%2E./x/",
        "edit/.%2e/x/",
        "edit/..%2fx/",  # an encoded slash makes a '..' segment too
        "%2f%2fevil.org/",
    ],
)
def test_bad_edit_uris_name_the_variable(uri):
    assert [p.message for p in check_edit_uri(uri)] == [
        f"edit_uri (from HANDBOOK_EDIT_URI) {uri!r} is not a path inside the repository (expected something like "
        "'edit/main/docs/' or '-/edit/main/docs/': letters, digits and . _ ~ / ? = % + -, no scheme, no '//' "
        "and no '..' segment, percent-encoded or not)"
    ]


def test_check_environment_points_at_the_keys_in_mkdocs_yml(monkeypatch):
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\n")
    repo_line = next(n for n, line in enumerate(lines, 1) if line.startswith("repo_url:"))
    edit_line = next(n for n, line in enumerate(lines, 1) if line.startswith("edit_uri:"))
    monkeypatch.setenv("HANDBOOK_REPO_URL", "ftp://x.org/r")
    monkeypatch.setenv("HANDBOOK_EDIT_URI", "//x/")
    found = check_environment(read_config(ROOT))
    assert [(p.path, p.line) for p in found] == [("mkdocs.yml", repo_line), ("mkdocs.yml", edit_line)]
    monkeypatch.delenv("HANDBOOK_REPO_URL")
    monkeypatch.delenv("HANDBOOK_EDIT_URI")
    assert check_environment(read_config(ROOT)) == []


def config_root(tmp_path: Path, text: str, offline: str = "") -> Path:
    (tmp_path / "mkdocs.yml").write_text(text, encoding="utf-8")
    if offline:
        (tmp_path / "mkdocs.offline.yml").write_text(offline, encoding="utf-8")
    return tmp_path


SETTINGS = (
    "site_name: S\n# the host\nrepo_url: !ENV HANDBOOK_REPO_URL\nedit_uri: !ENV [HANDBOOK_EDIT_URI, edit/main/docs/]\n"
)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("null", "null"),
        ("~", "null"),
        ("true", "a boolean"),
        ("off", "a boolean"),
        ("42", "a number"),
        ("4.5", "a number"),
        ("2026-01-01", "a date"),
    ],
)
def test_a_variable_is_checked_as_the_yaml_value_mkdocs_reads(tmp_path, monkeypatch, raw, kind):
    """MkDocs parses an !ENV value as YAML: 'null' is no URL at all and 'true' a boolean, so each
    is refused with the variable's name at its line, not passed as text or left to MkDocs."""
    root = config_root(tmp_path, SETTINGS)
    monkeypatch.setenv("HANDBOOK_REPO_URL", raw)
    assert [str(p) for p in check_environment(read_config(root))] == [
        f"mkdocs.yml:3: repo_url (from HANDBOOK_REPO_URL) {raw!r} reads as {kind}, as MkDocs parses it as YAML "
        "(expected https://HOST/GROUP/PROJECT as text, or HANDBOOK_REPO_URL unset for the default)"
    ]
    monkeypatch.delenv("HANDBOOK_REPO_URL")
    monkeypatch.setenv("HANDBOOK_EDIT_URI", raw)
    assert [
        (p.line, f"edit_uri (from HANDBOOK_EDIT_URI) {raw!r} reads as {kind}" in p.message)
        for p in check_environment(read_config(root))
    ] == [(4, True)]


def test_an_empty_variable_is_unset_and_a_good_one_passes(tmp_path, monkeypatch):
    root = config_root(tmp_path, SETTINGS)
    monkeypatch.setenv("HANDBOOK_REPO_URL", "")
    monkeypatch.setenv("HANDBOOK_EDIT_URI", "-/edit/main/docs/")
    assert check_environment(read_config(root)) == []
    monkeypatch.setenv("HANDBOOK_REPO_URL", "https://git.example/team/handbook")
    assert check_environment(read_config(root)) == []


def test_a_bad_default_and_an_unchecked_env_setting_are_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("HANDBOOK_EDIT_URI", raising=False)
    monkeypatch.delenv("SITE", raising=False)
    text = "site_name: S\nedit_uri: !ENV [HANDBOOK_EDIT_URI, 7]\nextra:\n  analytics:\n    property: !ENV SITE\n"
    offline = "INHERIT: mkdocs.yml\nrepo_url: !ENV [OFFLINE_REPO, 'http://x.org/r']\n"
    found = [str(p) for p in check_environment(read_config(config_root(tmp_path, text, offline)))]
    assert found == [
        "mkdocs.yml:2: edit_uri (its default in mkdocs.yml) 7 reads as a number, as MkDocs parses it as YAML "
        "(expected a path such as 'edit/main/docs/' as text, or the variable unset for the default)",
        "mkdocs.yml:5: 'extra.analytics.property' is read from the environment (!ENV SITE), which nothing checks "
        "(expected !ENV only on repo_url, edit_uri, site_url; add a check in scripts/kb/wiki/editlinks.py)",
        "mkdocs.offline.yml:2: repo_url (its default in mkdocs.offline.yml) 'http://x.org/r' is not an absolute "
        "https URL of a repository (expected https://HOST/GROUP/PROJECT, without a user name, query or fragment, "
        "spaces, quotes, < > or `; unset it for a site without edit links)",
    ]


def test_a_python_tag_in_an_env_default_is_never_constructed(tmp_path, monkeypatch):
    monkeypatch.delenv("HANDBOOK_REPO_URL", raising=False)
    marker = tmp_path / "ran"
    text = f"repo_url: !ENV [HANDBOOK_REPO_URL, !!python/object/apply:os.system ['touch {marker}']]\n"
    found = [str(p) for p in check_environment(read_config(config_root(tmp_path, text)))]
    assert found == ["mkdocs.yml:1: 'repo_url': a !!python tag (expected plain YAML)"]
    assert not marker.exists()


@pytest.mark.build
def test_a_bad_variable_fails_the_build_with_its_name(tmp_path):
    result = build(tmp_path / "site", HANDBOOK_REPO_URL="https://x.org/a b")
    assert result.returncode != 0
    assert "repo_url (from HANDBOOK_REPO_URL) 'https://x.org/a b' is not an absolute https URL" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.build
def test_without_a_repository_no_action_and_no_repository_link():
    html = (plain_site() / "migrate" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert 'rel="edit"' not in html and "md-content__button" not in html
    assert "md-source" not in html


@pytest.mark.build
def test_with_a_repository_every_page_has_edit_and_view_links():
    site = wiki_site()
    html = (site / "migrate" / "quickstart" / "index.html").read_text(encoding="utf-8")
    edit = re.search(r'<a href="([^"]+)" title="Edit this page"[^>]*rel="edit"', html)
    view = re.search(r'<a href="([^"]+)" title="View source of this page"', html)
    assert edit and edit.group(1) == f"{REPO}/edit/main/docs/migrate/quickstart.md"
    assert view and view.group(1) == f"{REPO}/raw/main/docs/migrate/quickstart.md"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{REPO}/edit/main/docs/index.md"' in home


@pytest.mark.build
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


def test_an_env_tag_on_a_mapping_is_refused_in_words_not_a_traceback(tmp_path):
    found = [str(p) for p in check_environment(read_config(config_root(tmp_path, "repo_url: !ENV {a: b}\n")))]
    assert len(found) == 1 and found[0].startswith("mkdocs.yml:1: 'repo_url': ")
    assert found[0].endswith("(expected !ENV NAME or !ENV [NAME, ..., DEFAULT])")


def test_a_config_past_the_limits_is_left_to_the_nav_check(tmp_path):
    deep = "repo_url: !ENV [X, " + "[" * 5000 + "]" * 5000 + "]\n"
    assert check_environment(read_config(config_root(tmp_path, deep))) == []


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


@pytest.mark.build
def test_a_bad_site_url_fails_validate_and_the_build(tmp_path, monkeypatch):
    lines = (ROOT / "mkdocs.yml").read_text("utf-8").split("\n")
    line = next(n for n, text in enumerate(lines, 1) if text.startswith("site_url:"))
    monkeypatch.setenv("HANDBOOK_SITE_URL", "wiki/")
    found = check_environment(read_config(ROOT))
    assert line == 9  # the build's message below names it
    assert [(p.path, p.line) for p in found] == [("mkdocs.yml", line)]
    # MkDocs itself refuses a URL without a scheme or host (in its own words): this one it takes
    result = build(tmp_path / "site", HANDBOOK_SITE_URL='https://x.org/"onload="alert(1)')
    assert result.returncode != 0
    assert "mkdocs.yml:9: site_url (from HANDBOOK_SITE_URL) 'https://x.org/\"onload" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.build
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


@pytest.mark.build
def test_without_a_site_url_no_sitemap_entry_and_no_canonical_link():
    site = plain_site()
    assert "<loc>" not in (site / "sitemap.xml").read_text("utf-8")
    pages = [p.read_text("utf-8") for p in site.rglob("*.html")]
    stubs = [html for html in pages if 'http-equiv="refresh"' in html]  # mkdocs-redirects links its target
    assert stubs and not [html for html in pages if 'rel="canonical"' in html and html not in stubs]


@pytest.mark.build
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


@pytest.mark.build
def test_the_404_page_links_under_the_sites_path():
    html = (wiki_site() / "404.html").read_text("utf-8")
    assert 'href="/handbook/migrate/"' in html and 'for="__search"' in html
    html = (plain_site() / "404.html").read_text("utf-8")
    assert 'href="/migrate/"' in html and 'href="/reference/environment-variables/"' in html
