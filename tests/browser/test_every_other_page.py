"""The other half of the built pages, visited and checked as test_every_page.py checks the first:
the same tests, here with this file's fixtures (pytest looks a test's fixtures up where it is
collected), so that the two halves can run in two test processes."""

from __future__ import annotations

import pytest

from .crawl import crawl_pages
from .support import page_paths
from .test_every_page import (  # noqa: F401  (collected here too, with the fixtures below)
    test_every_built_page_was_visited,
    test_no_accessibility_violation,
    test_no_failed_request_and_no_console_error,
    test_zero_requests_outside_the_sites_origin,
)

HALF = 1


@pytest.fixture(scope="module")
def visited(site) -> list[str]:
    return page_paths(site)[HALF::2]


@pytest.fixture(scope="module")
def crawl(browser, origin, visited):
    return crawl_pages(browser, origin, visited, f"half {HALF + 1} of 2")
