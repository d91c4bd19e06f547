"""Every built page in Chromium: nothing from another origin, no failed asset, no console error,
no accessibility violation of any impact (axe-core). One visit per page feeds all four.

This file visits every other page, from the first; test_every_other_page.py visits the rest with
the same tests, so that the two halves can run in two test processes."""

from __future__ import annotations

from collections import Counter

from .crawl import PRINT_PARTS, half_of_the_pages
from .support import report

visited, crawl = half_of_the_pages(0)  # this file's pages: every other one, from the first


def test_every_built_page_was_visited(crawl, visited):
    assert [v.path for v in crawl] == visited
    broken = [f"/{v.path}: {v.error or f'HTTP {v.status}'}" for v in crawl if v.error or v.status != 200]
    assert not broken, "pages that did not load:\n" + "\n".join(broken)
    assert len(crawl) >= 2
    assert all(v.requests for v in crawl), "requests were not recorded: the checks below are void"
    assert all(v.dark for v in crawl if not v.path.startswith(PRINT_PARTS)), "a page was not checked dark"


def test_zero_requests_outside_the_sites_origin(crawl, origin):
    clean = [v for v in crawl if not v.external]
    report(
        "requests",
        f"{len(clean)}/{len(crawl)} pages made zero requests outside {origin} (data:, blob: and about: allowed)",
    )
    offenders = [f"/{v.path}: {url}" for v in crawl for url in v.external]
    assert not offenders, "requests outside the site's own origin:\n" + "\n".join(offenders)


def test_no_failed_request_and_no_console_error(crawl):
    problems = [f"/{v.path}: {what}" for v in crawl for what in (*v.failed, *v.console)]
    assert not problems, "failed requests or console errors:\n" + "\n".join(problems)


def test_no_accessibility_violation(crawl):
    # Grouped by rule: (rule, impact, scheme) -> the pages, and the rule's help and first targets.
    rules: dict[tuple, dict] = {}
    for v in crawl:
        for item in v.violations:
            key = (item["id"], item["impact"], item["scheme"])
            entry = rules.setdefault(key, {"help": item["help"], "targets": item["targets"], "pages": []})
            entry["pages"].append(f"/{v.path}")
    impacts = Counter(impact for (_, impact, _), e in rules.items() for _ in e["pages"])
    report(
        "accessibility",
        f"axe-core on {len(crawl)} pages (all rules light, colour rules dark "
        "too; the print parts without the colour rules): "
        + (", ".join(f"{n} {impact}" for impact, n in sorted(impacts.items())) or "no violations")
        + " (rule-page pairs)",
    )
    for (rule, impact, scheme), entry in sorted(rules.items()):
        report("accessibility", f"  {rule} ({impact}, {scheme}): on {len(entry['pages'])} page(s)")
    found = [
        f"{rule} ({impact}, {scheme} scheme) on {len(e['pages'])} page(s): {e['help']}\n"
        f"    targets: {'; '.join(e['targets'])}\n"
        f"    pages: {', '.join(e['pages'][:8])}{' ...' if len(e['pages']) > 8 else ''}"
        for (rule, impact, scheme), e in sorted(rules.items())
    ]
    assert not found, "axe-core violations (any impact: minor and moderate count too):\n" + "\n".join(found)
