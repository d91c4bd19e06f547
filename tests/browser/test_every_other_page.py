"""The other half of the built pages, visited and checked as test_every_page.py checks the first:
the same tests, here with this file's fixtures (pytest looks a test's fixtures up where it is
collected), so that the two halves can run in two test processes."""

from __future__ import annotations

from .crawl import half_of_the_pages
from .test_every_page import (  # noqa: F401  (collected here too, with the fixtures below)
    test_every_built_page_was_visited,
    test_no_accessibility_violation,
    test_no_failed_request_and_no_console_error,
    test_zero_requests_outside_the_sites_origin,
)

visited, crawl = half_of_the_pages(1)  # the pages test_every_page.py leaves
