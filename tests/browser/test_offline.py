"""The file:// bundle (mkdocs.offline.yml, `./dev offline`): opened from a folder, it browses and
searches with nothing loaded from another origin."""

from __future__ import annotations

import os
import re

from .support import HANG_MS, ROOT, check_site, report


def load(config: str):
    from mkdocs.config import load_config

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    return load_config(str(ROOT / config))


def test_offline_config_repeats_the_sites_search_settings():
    site, offline = load("mkdocs.yml"), load("mkdocs.offline.yml")
    # MkDocs replaces lists on INHERIT, so mkdocs.offline.yml repeats the plugins: keep them equal.
    for name, plugin in site.plugins.items():
        if hasattr(plugin, "config"):
            assert name in offline.plugins, f"mkdocs.offline.yml lacks the {name} plugin"
            assert dict(offline.plugins[name].config) == dict(plugin.config), (
                f"{name}: mkdocs.offline.yml's settings differ from mkdocs.yml's"
            )
    assert "material/offline" in offline.plugins
    assert offline.use_directory_urls is False
    shims = offline.extra.get("polyfills", [])
    assert shims and all(not re.match(r"^[a-z]+:|^//", s) for s in shims), shims
    for shim in shims:
        assert (ROOT / "docs" / shim).is_file(), f"polyfill {shim} is not vendored in docs/"


def test_offline_bundle_passes_the_site_check(offline_site):
    result = check_site(offline_site, "--flat-urls")
    assert result.returncode == 0, result.stdout + result.stderr
    html = (offline_site / "index.html").read_text(encoding="utf-8")
    assert "unpkg.com" not in html and "iframe-worker/shim.js" in html
    assert (offline_site / "search" / "search_index.js").is_file()


def test_offline_bundle_browses_and_searches_from_file_urls(new_context, offline_site):
    ctx = new_context()
    seen: list[str] = []
    ctx.on("request", lambda request: seen.append(request.url))
    # Anything not file:// (or in-browser) is aborted: recorded above, and it fails the test.
    ctx.route(re.compile(r"^(?!file:|data:|blob:|about:)"), lambda route: route.abort())
    errors: list[str] = []
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto((offline_site / "index.html").as_uri())
    assert page.locator("article h1").first.is_visible()
    # Click through to another page, as a reader would: the first link in the navigation tabs
    # or sidebar that leads to a page other than this one.
    link = (
        page.locator("a.md-tabs__link[href$='.html'], a.md-nav__link[href$='.html']").filter(has_not_text="Home").first
    )
    href = link.get_attribute("href")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.startswith("file://") and page.url.endswith(href.split("/")[-1]), page.url
    assert page.url != (offline_site / "index.html").as_uri()
    assert page.locator("article h1").first.is_visible()

    page.locator("input.md-search__input").click()
    page.keyboard.type("TPU")
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=HANG_MS)
    first = results.first.locator("a.md-search-result__link").first.get_attribute("href")
    assert first.startswith("file://"), first
    report(
        "offline",
        f"file:// bundle: browsed to {href}, search 'TPU' -> {results.count()} "
        f"results, {len(seen)} requests, all file:// or in-browser",
    )

    outside = [u for u in seen if not u.startswith(("file:", "data:", "blob:", "about:"))]
    assert not outside, "requests that left file://:\n" + "\n".join(outside)
    assert not errors, errors
