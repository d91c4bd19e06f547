"""Instant navigation and the 404 page, in Chromium on the served site (built with a site address)."""

from __future__ import annotations

import re

from .support import allowed_request


def test_a_link_loads_the_next_page_without_reloading_the_document(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/migrate/", wait_until="networkidle")  # sitemap.xml read: instant knows the links
    page.evaluate("window.__sameDocument = true")
    # with instant navigation on, Material makes every link absolute once the page has loaded
    page.locator(f"article a[href^='{origin}/migrate/quickstart/']").first.click()
    page.wait_for_url(re.compile(re.escape(f"{origin}/migrate/quickstart/") + "(#.*)?$"))
    page.wait_for_function("document.querySelector('article h1').textContent.includes('first training step')")
    assert page.evaluate("window.__sameDocument === true"), "the link reloaded the document: instant is off"


def test_the_404_page_at_any_depth_offers_search_and_the_sections(new_context, site, origin):
    body = (site / "404.html").read_text(encoding="utf-8")
    deep = f"{origin}/no/such/deep/page/"
    ctx = new_context()
    external: list[str] = []
    ctx.on("request", lambda r: None if allowed_request(r.url, origin) else external.append(r.url))
    page = ctx.new_page()
    errors: list[str] = []
    # the document's own 404 status is logged as an error: any other error counts
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and m.location["url"] != deep else None)
    # the test server has no 404 handler: answer one deep missing address as a server would
    page.route(deep, lambda route: route.fulfill(status=404, body=body, content_type="text/html"))
    page.goto(deep)
    assert page.locator("article h1").inner_text() == "Page not found"
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") != "static"  # CSS loaded
    page.locator("article label[for=__search]").click()
    assert page.evaluate("document.getElementById('__search').checked")
    box = page.locator("input[data-md-component=search-query]")
    box.fill("precision")
    # Material reads the box on a key (keyup) or when its worker says ready: a fill alone, after a
    # ready that came first (the worker starts from the page head), is never searched.
    box.press("End")
    page.locator(".md-search-result__item").first.wait_for()
    page.keyboard.press("Escape")
    links = page.locator("ul.kb-404-sections a")
    assert links.count() >= 6
    hrefs = [links.nth(i).evaluate("a => a.href") for i in range(links.count())]
    for href in hrefs:
        assert page.request.get(href).status == 200, href
    links.filter(has_text="Migrate").click()
    page.wait_for_url(f"{origin}/migrate/")
    assert not external and not errors, (external, errors)


def test_code_block_navs_are_named_after_an_instant_navigation(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/migrate/", wait_until="networkidle")
    page.evaluate("window.__sameDocument = true")
    page.locator(f"article a[href^='{origin}/migrate/quickstart/']").first.click()
    page.wait_for_function("document.querySelector('article h1').textContent.includes('first training step')")
    page.wait_for_function("document.querySelectorAll('.md-code__nav').length > 1")
    labels = page.eval_on_selector_all(".md-code__nav", "navs => navs.map(n => n.getAttribute('aria-label'))")
    assert page.evaluate("window.__sameDocument === true")
    assert labels == [f"Code block {i} actions" for i in range(1, len(labels) + 1)], labels
