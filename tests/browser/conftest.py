"""Browser tests: the real site, built once, served on 127.0.0.1 and driven in Debian's Chromium.

Every test in this folder is marked ``browser`` and runs with the rest of the suite
(``./dev test``); ``./dev test tests/browser`` runs only these, ``-m "not browser"`` leaves them
out. When Chromium is missing they are skipped with the reason, and the terminal summary says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from .support import (
    HANG_MS,
    LAUNCH_ARGS,
    VIEWPORT,
    SiteServer,
    allowed_request,
    build_site,
    find_chromium,
    free_port,
    page_paths,
    report,
    write_artifact,
)

HERE = Path(__file__).parent
_PORT = free_port()
SKIP_REASON = (
    "Chromium not found at /usr/bin/chromium: browser tests skipped "
    "(./dev test installs Debian's chromium when it runs as root)"
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)


# ---- The built site ----


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The real project built strictly, once, into a temporary folder."""
    dest = tmp_path_factory.mktemp("browser-site") / "site"
    start = time.perf_counter()
    # With a site address, as a team wiki is deployed: a full sitemap, which instant navigation needs
    # (Material loads through it only the links the sitemap lists, mapped onto the origin it runs on).
    # Material maps the sitemap's URLs onto the page's protocol and host name but not its port, so
    # the address is the test server's own: its port is chosen here, before the build.
    result = build_site(dest, extra_env={"HANDBOOK_SITE_URL": f"http://127.0.0.1:{_PORT}/"})
    assert result.returncode == 0, f"strict build failed:\n{result.stdout}{result.stderr}"
    report("build", f"site built in {time.perf_counter() - start:.1f} s: {len(page_paths(dest))} pages")
    return dest


@pytest.fixture(scope="session")
def server(site):
    with SiteServer(site, _PORT) as running:
        yield running


@pytest.fixture(scope="session")
def origin(server) -> str:
    return server.origin


@pytest.fixture(scope="session")
def offline_site(tmp_path_factory) -> Path:
    """The file:// bundle (mkdocs.offline.yml), built strictly into a temporary folder."""
    dest = tmp_path_factory.mktemp("browser-offline") / "site-offline"
    result = build_site(dest, "mkdocs.offline.yml")
    assert result.returncode == 0, f"offline build failed:\n{result.stdout}{result.stderr}"
    return dest


# ---- The browser ----


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        report("skipped", SKIP_REASON)
        pytest.skip(SKIP_REASON)
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    """One headless Chromium for the whole session (Playwright gives it a fresh temporary profile;
    the flags keep it from calling home)."""
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium_path, args=LAUNCH_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def new_context(browser):
    """Factory for isolated contexts (own localStorage), closed at the end of the test."""
    made = []

    def make(**options):
        ctx = browser.new_context(**{"viewport": VIEWPORT, "color_scheme": "light", **options})
        ctx.set_default_timeout(HANG_MS)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.close()


# ---- One visit of every page (shared by the request, console and accessibility tests) ----


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


# axe-core reports each passing node too, with a unique selector built for it: half of its time on the
# printable handbook's parts (28,000 nodes). The tests read only the violations, which stay in full.
ONLY_VIOLATIONS = {"resultTypes": ["violations"]}

# axe-core's colour rules again with the dark (slate) scheme applied to the loaded page.
DARK_CONTRAST = """async () => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { transition: none !important; }";
  document.head.append(style);
  document.body.setAttribute("data-md-color-scheme", "slate");
  return await axe.run(document, {
    runOnly: {type: "rule", values: ["color-contrast", "link-in-text-block"]},
    resultTypes: ["violations"]});
}"""


@pytest.fixture(scope="session")
def crawl(browser, site, origin) -> list[Visit]:
    """Visit every built HTML page once: record requests, failures, console errors and axe-core's
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
    for path in page_paths(site):
        visit = Visit(path)
        current.append(visit)
        try:
            response = page.goto(f"{origin}/{path}", wait_until="load")
            visit.status = response.status if response else None
            results = axe.run(page, options=ONLY_VIOLATIONS)
            visit.violations = [_summary(v, "light") for v in results.response["violations"]]
            # The dark scheme, as the palette toggle sets it (transitions off so colours settle).
            dark = page.evaluate(DARK_CONTRAST)
            visit.violations += [_summary(v, "dark") for v in dark["violations"]]
            page.wait_for_load_state("networkidle")
        except PlaywrightError as exc:
            visit.error = str(exc).splitlines()[0]
        visits.append(visit)
    current.clear()
    page.close()
    ctx.close()
    took = time.perf_counter() - start
    report("pages", f"{len(visits)} pages visited in {took:.1f} s, {sum(v.requests for v in visits)} requests")
    write_artifact("browser-pages.json", [v.__dict__ for v in visits])
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
