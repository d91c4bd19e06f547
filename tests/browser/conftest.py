"""Browser tests: the real site, built once, served on 127.0.0.1 and driven in Debian's Chromium.

Every test in this folder is marked ``browser`` and runs with the rest of the suite
(``./dev test``); ``./dev test tests/browser`` runs only these, ``-m "not browser"`` leaves them
out. When Chromium is missing they are skipped with the reason, and the terminal summary says so.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from .support import (
    HANG_MS,
    LAUNCH_ARGS,
    VIEWPORT,
    SiteServer,
    build_site,
    find_chromium,
    free_port,
    page_paths,
    report,
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
