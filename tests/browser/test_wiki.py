"""Team-wiki features in the browser: the edit actions (with a Git host configured, and still no
request to another origin), the "may be out of date" note, and a redirect from an old URL."""

from __future__ import annotations

import re

import pytest

from .support import SiteServer, allowed_request, build_site, report

REPO = "https://gitlab.example.com/team/handbook"  # a GitLab host: Material would call its API
VISIT = ["", "migrate/quickstart/", "reference/sources/", "about/review-queue/"]


@pytest.fixture(scope="session")
def wiki_origin(tmp_path_factory):
    """The site built with a Git host (HANDBOOK_REPO_URL) and a build date far ahead (KB_TODAY),
    served on its own port."""
    dest = tmp_path_factory.mktemp("browser-wiki") / "site"
    result = build_site(dest, extra_env={"HANDBOOK_REPO_URL": REPO, "KB_TODAY": "2100-01-01"})
    assert result.returncode == 0, f"strict build failed:\n{result.stdout}{result.stderr}"
    with SiteServer(dest) as running:
        yield running.origin


def test_edit_links_point_at_the_repository_and_nothing_leaves_the_origin(new_context, wiki_origin):
    ctx = new_context()
    seen: list[str] = []
    ctx.on("request", lambda request: seen.append(request.url))
    ctx.route(lambda url: not allowed_request(url, wiki_origin), lambda route: route.abort())
    page = ctx.new_page()
    for path in VISIT:
        page.goto(f"{wiki_origin}/{path}", wait_until="load")
        page.wait_for_load_state("networkidle")
        src = "index.md" if path == "" else path.rstrip("/") + ".md"
        edit = page.locator('a[rel="edit"]')
        assert edit.get_attribute("href") == f"{REPO}/edit/main/docs/{src}", path
        assert edit.is_visible()
        assert page.locator("a.md-source").first.get_attribute("href") == REPO
    page.wait_for_timeout(500)  # Material fetches the source facts after load, when it does
    outside = [url for url in seen if not allowed_request(url, wiki_origin)]
    report("wiki", f"{len(VISIT)} pages with edit links: {len(seen)} requests, {len(outside)} outside the origin")
    assert seen and outside == [], outside


def test_a_due_page_shows_the_out_of_date_note(new_context, wiki_origin):
    page = new_context().new_page()
    page.goto(f"{wiki_origin}/migrate/quickstart/")
    note = page.locator("article .admonition.warning").first
    assert note.is_visible()
    assert note.locator(".admonition-title").inner_text() == "This page may be out of date"
    assert re.search(r"Last reviewed \d{4}-\d{2}-\d{2}\. Due for review: last reviewed", note.inner_text())
    # it sits right under the title and its applies-to banner
    after = "() => document.querySelector('article h1').nextElementSibling.nextElementSibling.className"
    assert page.evaluate(after) == "admonition warning"


def test_an_old_url_lands_on_the_new_page(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/scan/")
    page.wait_for_url(f"{origin}/migrate/scan-your-code/")
    assert page.locator("article h1").first.is_visible()
    page.goto(f"{origin}/scan/#verify")
    page.wait_for_url(f"{origin}/migrate/scan-your-code/#verify")
