"""Stable URLs (kb/wiki/urls.py): the redirect map, the published-URL list and the redirect stubs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from kb.core.config import read_config
from kb.wiki.urls import check_urls, project_redirects, redirect_pages, url_of

PAGES = {"index.md": {"home"}, "a/new.md": {"new", "part"}, "a/index.md": {"a"}}
SHOWN = {uri: f"docs/{uri}" for uri in PAGES}
NAV = "nav:\n  - index.md\n  - a/index.md\n  - New: a/new.md\n"
LISTED = "# every URL\n/\n/a/\n/a/new/\n/old/\n"


def project(tmp_path: Path, redirects: str = "old.md: a/new.md", listed: str = LISTED, nav: str = NAV) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    maps = textwrap.indent(redirects, " " * 8) if redirects else "        {}"
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: t\nplugins:\n  - search\n  - redirects:\n      redirect_maps:\n{maps}\n{nav}", encoding="utf-8"
    )
    if listed is not None:
        (tmp_path / "docs" / "data").mkdir(parents=True)
        (tmp_path / "docs" / "data" / "published-urls.txt").write_text(listed, encoding="utf-8")
    return tmp_path


def problems(root: Path) -> list[str]:
    found, notes = check_urls(read_config(root), PAGES, SHOWN)
    assert notes == []
    return [str(p) for p in found]


def test_url_of_pages():
    assert [url_of(u) for u in ("index.md", "a/index.md", "a/b.md", "b.md")] == ["/", "/a/", "/a/b/", "/b/"]


def test_a_good_map_and_list_pass(tmp_path):
    assert problems(project(tmp_path)) == []
    assert problems(project(tmp_path / "x", "old.md: a/new.md#part")) == []


@pytest.mark.parametrize(
    ("redirects", "message"),
    [
        (
            "Old.md: a/new.md",
            "redirect 'Old.md' -> 'a/new.md': the old page is not a docs-relative .md path "
            "(expected e.g. 'section/old-name.md')",
        ),
        (
            "old.md: https://example.org/",
            "redirect 'old.md' -> 'https://example.org/': the new page is not a docs-relative .md path "
            "(expected e.g. 'section/new-name.md', optionally #anchor)",
        ),
        (
            "old.md: a/gone.md",
            "redirect 'old.md' -> 'a/gone.md': docs/a/gone.md does not exist (expected the page that replaced it)",
        ),
        (
            "old.md: a/new.md#nope",
            "redirect 'old.md' -> 'a/new.md#nope': docs/a/new.md has no anchor '#nope' "
            "(expected a heading or id with that name)",
        ),
    ],
)
def test_bad_entries_name_their_line(tmp_path, redirects, message):
    found = problems(project(tmp_path, redirects))
    assert [p for p in found if p.startswith("mkdocs.yml")] == [f"mkdocs.yml:6: {message}"]


def test_an_old_page_that_still_exists_or_shares_a_url(tmp_path):
    # a.md would be served at /a/, where a/index.md is
    root = project(tmp_path, "old.md: a/new.md\na.md: a/new.md", LISTED)
    assert problems(root) == [
        "mkdocs.yml:7: redirect 'a.md' -> 'a/new.md': docs/a/index.md is a page at that URL "
        "(expected the old page to be gone; remove the redirect)"
    ]
    root = project(tmp_path / "x", "old.md: a/new.md\nold/index.md: a/new.md", LISTED)
    assert problems(root) == [
        "mkdocs.yml:7: redirect 'old/index.md' -> 'a/new.md': 'old.md' already redirects from the same URL "
        "(expected one redirect per old URL)"
    ]


def test_chains_and_loops(tmp_path):
    root = project(tmp_path, "older.md: old.md\nold.md: a/new.md", LISTED + "/older/\n")
    assert problems(root) == [
        "mkdocs.yml:6: redirect 'older.md' -> 'old.md': 'old.md' is itself redirected "
        "(expected no chains: point at 'a/new.md' directly)"
    ]
    root = project(tmp_path / "x", "b.md: c.md\nc.md: b.md", LISTED.replace("/old/\n", "/b/\n/c/\n"))
    assert problems(root) == [
        "mkdocs.yml:6: redirect 'b.md' -> 'c.md': 'c.md' is itself redirected, and the redirects loop "
        "(expected no chains or loops)",
        "mkdocs.yml:7: redirect 'c.md' -> 'b.md': 'b.md' is itself redirected, and the redirects loop "
        "(expected no chains or loops)",
    ]


def test_a_published_url_that_leads_nowhere(tmp_path):
    root = project(tmp_path, listed=LISTED + "/gone/\n")
    assert problems(root) == [
        "docs/data/published-urls.txt:6: '/gone/' was published but is no page in the nav, no redirect and not "
        "marked removed (expected it to keep working: add a redirect from the old page to the new one under "
        "plugins: redirects: redirect_maps: in mkdocs.yml and mkdocs.offline.yml, or write 'removed: WHY' after the URL)"
    ]


def test_removed_entries_need_a_reason_and_must_be_gone(tmp_path):
    assert problems(project(tmp_path, listed=LISTED + "/gone/  removed: merged into /a/new/\n")) == []
    assert problems(project(tmp_path / "x", listed=LISTED + "/gone/ removed:\n")) == [
        "docs/data/published-urls.txt:6: '/gone/ removed:' is not an entry (expected a URL path such as "
        "/migrate/quickstart/, optionally followed by 'removed: WHY')"
    ]
    assert problems(project(tmp_path / "y", listed=LISTED.replace("/a/new/", "/a/new/ removed: no"))) == [
        "docs/data/published-urls.txt:4: '/a/new/' is marked removed but is docs/a/new.md (expected one or the other)"
    ]


def test_a_nav_page_or_redirect_missing_from_the_list(tmp_path):
    root = project(tmp_path, listed="/\n/a/\n")
    assert problems(root) == [
        "docs/a/new.md:1: the page's URL '/a/new/' is not in docs/data/published-urls.txt (expected a line "
        "'/a/new/' there: add it with the page, and never delete a line)",
        "mkdocs.yml:6: the redirect's old URL '/old/' is not in docs/data/published-urls.txt "
        "(expected a line '/old/' there)",
    ]


def test_bad_and_duplicate_lines(tmp_path):
    root = project(tmp_path, listed=LISTED + "/a/\nmigrate/x\n")
    assert problems(root) == [
        "docs/data/published-urls.txt:6: '/a/' is listed twice (expected once; first on line 3)",
        "docs/data/published-urls.txt:7: 'migrate/x' is not an entry (expected a URL path such as "
        "/migrate/quickstart/, optionally followed by 'removed: WHY')",
    ]


def test_a_missing_list(tmp_path):
    root = project(tmp_path, listed=None)
    assert problems(root) == [
        "docs/data/published-urls.txt:1: missing (expected the list of every published URL path, one per line)"
    ]


def test_a_project_without_the_plugin_or_list_is_skipped_with_a_note(tmp_path):
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\n{NAV}", encoding="utf-8")
    assert check_urls(read_config(tmp_path), PAGES, SHOWN) == (
        [],
        ["stable URL check skipped: no redirects plugin in mkdocs.yml and no docs/data/published-urls.txt"],
    )


def test_redirect_pages_are_the_plugins_own_stubs():
    stubs = redirect_pages({"scan.md": "migrate/scan-your-code.md#how", "bad.md": "https://x.org/"})
    assert list(stubs) == ["scan/index.html"]
    assert '<a href="../migrate/scan-your-code/#how">' in stubs["scan/index.html"]
    assert '<meta http-equiv="refresh" content="0; url=../migrate/scan-your-code/#how">' in stubs["scan/index.html"]
    flat = redirect_pages({"scan.md": "migrate/scan-your-code.md"}, use_directory_urls=False)
    assert list(flat) == ["scan.html"] and 'href="migrate/scan-your-code.html"' in flat["scan.html"]


def test_the_real_project_has_a_redirect_and_both_configs_agree():
    assert project_redirects(read_config(ROOT)) == {"scan.md": "migrate/scan-your-code.md"}
    import yaml

    offline = (ROOT / "mkdocs.offline.yml").read_text(encoding="utf-8")
    plugins = yaml.load(offline.split("plugins:", 1)[1].join(["plugins:", ""]), Loader=yaml.SafeLoader)["plugins"]
    maps = next(p["redirects"]["redirect_maps"] for p in plugins if isinstance(p, dict) and "redirects" in p)
    assert maps == project_redirects(read_config(ROOT))


@pytest.mark.build
def test_the_built_stub_is_the_plugins_and_passes_the_site_check(tmp_path):
    import shutil
    import subprocess
    import sys

    from wikisite import plain_site

    site = plain_site()
    stub = (site / "scan" / "index.html").read_text(encoding="utf-8")
    assert stub == redirect_pages(project_redirects(read_config(ROOT)))["scan/index.html"]
    env = {"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"}
    check = [sys.executable, "-m", "kb", "check-site"]
    result = subprocess.run([*check, str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    (copy / "scan" / "index.html").write_text(stub.replace("new destination", "new place"), encoding="utf-8")
    result = subprocess.run([*check, str(copy)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert f"{copy}/scan/index.html:1: redirect page differs from the one the redirects plugin writes" in result.stderr


def test_redirect_stubs_follow_the_plugins_own_path_rules():
    # redirect_pages computes paths itself (so the site check doesn't import MkDocs); the plugin's
    # helpers are the reference.
    from mkdocs.structure.files import File
    from mkdocs_redirects import plugin

    maps = {
        "scan.md": "migrate/scan-your-code.md#how",
        "old/deep/page.md": "index.md",
        "a/index.md": "b/c.md",
        "x.md": "migrate/index.md#top",
    }
    for directory_urls in (True, False):
        ours = redirect_pages(maps, directory_urls)
        theirs = {}
        for old, new in maps.items():
            target, hash_, anchor = new.partition("#")
            url = File(target, "", "", directory_urls).url
            dest = plugin.get_relative_html_path(old, url + hash_ + anchor, directory_urls)
            theirs[plugin.get_html_path(old, directory_urls)] = plugin.HTML_TEMPLATE.format(url=dest)
        assert ours == theirs, directory_urls
