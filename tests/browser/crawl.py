"""One visit of each page, shared by the request, console and accessibility tests of
test_every_page.py and test_every_other_page.py (each visits half the pages, so that the two
halves can run in two test processes)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Error as PlaywrightError

from .support import HANG_MS, VIEWPORT, allowed_request, page_paths, report, write_artifact


@dataclass
class Visit:
    path: str
    status: int | None = None
    requests: int = 0
    external: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    violations: list[dict] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    dark: bool = False  # whether the colour rules ran with the dark scheme too


# axe-core reports each passing node too, with a unique selector built for it: half of its time on the
# printable handbook's parts (28,000 nodes). The tests read only the violations, which stay in full.
ONLY_VIOLATIONS = {"resultTypes": ["violations"]}

# The printable handbook's parts hold the other pages' content, each page of which this crawl checks
# for colour contrast, light and dark. Those colour rules took half of the crawl on the parts (40 s of
# one half's 100 s for part 4's 15,000 nodes, dark alone), for nothing the pages' own checks do not
# cover: the parts get every other rule (ids, headings, landmarks, names), light only.
PRINT_PARTS = "about/print/"
COLOUR_RULES = ("color-contrast", "link-in-text-block")
WITHOUT_COLOUR = {**ONLY_VIOLATIONS, "rules": {rule: {"enabled": False} for rule in COLOUR_RULES}}

# axe-core's colour rules again with the dark (slate) scheme applied to the loaded page.
DARK_CONTRAST = """async () => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { transition: none !important; }";
  document.head.append(style);
  document.body.setAttribute("data-md-color-scheme", "slate");
  return await axe.run(document, {
    runOnly: {type: "rule", values: %s},
    resultTypes: ["violations"]});
}""" % json.dumps(list(COLOUR_RULES))


def crawl_pages(browser, origin: str, paths: list[str], name: str) -> list[Visit]:
    """Visit each of ``paths`` once: record requests, failures, console errors and axe-core's
    violations (all rules with the light scheme, the colour rules again with the dark one)."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    ctx.set_default_timeout(HANG_MS)
    current: list[Visit] = []

    def on_request(request):
        if current:
            current[-1].requests += 1
            if not allowed_request(request.url, origin):
                current[-1].external.append(request.url)

    def on_failed(request):
        if current and allowed_request(request.url, origin) and not request.url.startswith("data:"):
            current[-1].failed.append(f"{request.url} ({request.failure})")

    def on_response(response):
        if current and response.status >= 400 and allowed_request(response.url, origin):
            current[-1].failed.append(f"{response.url} (HTTP {response.status})")

    ctx.on("request", on_request)
    ctx.on("requestfailed", on_failed)
    ctx.on("response", on_response)
    # Nothing may leave the machine: abort anything not on the site's own origin (it is recorded).
    ctx.route(lambda url: not allowed_request(url, origin), lambda route: route.abort())
    page = ctx.new_page()

    def on_console(message):
        if current and message.type == "error":
            where = f"{message.location.get('url', '')}:{message.location.get('lineNumber', '')}"
            current[-1].console.append(f"console.error: {message.text} ({where})")

    def on_page_error(error):
        if current:
            current[-1].console.append(f"uncaught: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)

    visits = []
    start = time.perf_counter()
    for path in paths:
        visit = Visit(path)
        current.append(visit)
        began = time.perf_counter()
        try:
            response = page.goto(f"{origin}/{path}", wait_until="load")
            visit.status = response.status if response else None
            printed = path.startswith(PRINT_PARTS)
            results = axe.run(page, options=WITHOUT_COLOUR if printed else ONLY_VIOLATIONS)
            visit.violations = [_summary(v, "light") for v in results.response["violations"]]
            if not printed:  # the dark scheme, as the palette toggle sets it
                dark = page.evaluate(DARK_CONTRAST)
                visit.violations += [_summary(v, "dark") for v in dark["violations"]]
                visit.dark = True
            page.wait_for_load_state("networkidle")
        except PlaywrightError as exc:
            visit.error = str(exc).splitlines()[0]
        visit.seconds = round(time.perf_counter() - began, 2)
        visits.append(visit)
    current.clear()
    page.close()
    ctx.close()
    took = time.perf_counter() - start
    report("pages", f"{name}: {len(visits)} pages visited in {took:.1f} s, {sum(v.requests for v in visits)} requests")
    slow = sorted(visits, key=lambda v: -v.seconds)[:3]
    report("pages", f"{name}, slowest: " + ", ".join(f"{v.path or '/'} {v.seconds:.1f} s" for v in slow))
    write_artifact(f"browser-pages-{name.replace(' ', '-')}.json", [v.__dict__ for v in visits])
    return visits


def _summary(violation: dict, scheme: str) -> dict:
    """An axe violation without the page's HTML: rule, impact, help and the nodes' selectors."""
    return {
        "id": violation.get("id"),
        "scheme": scheme,
        "impact": violation.get("impact"),
        "help": violation.get("help"),
        "nodes": len(violation.get("nodes", [])),
        "targets": [" ".join(map(str, n.get("target", []))) for n in violation["nodes"][:5]],
        "summary": (violation.get("nodes") or [{}])[0].get("failureSummary", ""),
    }


def half_of_the_pages(half: int):
    """The module fixtures of one test file of the crawl: ``visited``, every other built page from
    page ``half`` (0 or 1), and ``crawl``, their visits."""

    @pytest.fixture(scope="module")
    def visited(site) -> list[str]:
        return page_paths(site)[half::2]

    @pytest.fixture(scope="module")
    def crawl(browser, origin, visited) -> list[Visit]:
        return crawl_pages(browser, origin, visited, f"half {half + 1} of 2")

    return visited, crawl
