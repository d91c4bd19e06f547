"""benchmarks/peer_output.py: each checker's real output (captured from a 100-page run, in
tests/peer_outputs/) is read into findings, and the faults it caught are decided from them."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_output import (  # noqa: E402
    Finding,
    caught,
    others,
    page_of_built,
    parse_htmlproofer,
    parse_kb,
    parse_linkchecker,
)
from peer_site import FAULTS, Injected  # noqa: E402

OUT = ROOT / "tests" / "peer_outputs"
ALL = [f.id for f in FAULTS]


def injected() -> list[Injected]:
    """Where a 100-page faulty project puts each fault (as peer_site.inject does)."""
    out = []
    for k, fault in enumerate(FAULTS, start=1):
        if fault.markdown:
            page = f"bench/s00/page-{k:04d}.md"
            out.append(Injected(fault, f"docs/{page}", 54, page))
        else:
            out.append(Injected(fault, "docs/data/migration_rules.yml", 10, "reference/scanner-rules.md"))
    return out


def read(name: str) -> str:
    return (OUT / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "page"),
    [
        ("bench/s00/page-0003/index.html", "bench/s00/page-0003.md"),
        ("/bench/s00/page-0003/", "bench/s00/page-0003.md"),
        ("index.html", "index.md"),
        ("/", "index.md"),
        ("404.html", "404.md"),
    ],
)
def test_page_of_built(path, page):
    assert page_of_built(path) == page


def test_kb_validate_catches_every_fault_before_the_build():
    found = parse_kb(read("kb_validate.txt"))
    assert found[0] == Finding(
        "bench/s00/page-0001.md",
        "link to missing page 'fault-missing-page.md' (expected docs/bench/s00/fault-missing-page.md to exist)",
    )
    assert found[-1].page is None  # a data file: no page
    assert len(found) == 10  # the 'package check skipped' note and the count line are not findings
    assert caught(found, injected()) == ALL
    assert others(found, injected()) == 0


def test_kb_check_site_catches_every_built_fault():
    found = parse_kb(read("kb_check_site.txt"), site_prefix="site/")
    assert (
        Finding(
            "bench/s00/page-0007.md",
            "shortcode left unrendered (expected the hook to replace every '<!-- kb:' comment) "
            "[from docs/bench/s00/page-0007.md]",
        )
        in found
    )
    assert caught(found, injected()) == ALL
    assert others(found, injected()) == 0  # the print page repeats the faults: neither caught nor other


def test_htmlproofer_misses_external_loads_javascript_and_shortcodes():
    found = parse_htmlproofer(read("htmlproofer.txt"))
    assert Finding("bench/s00/page-0003.md", "../s00/page-0000.md [404]") in found
    assert caught(found, injected()) == [
        "missing-page",
        "missing-anchor",
        "raw-md-link",
        "missing-image",
        "raw-missing-anchor",
        "table-broken-link",
    ]
    assert others(found, injected()) == 0


def test_linkchecker_without_anchors_sees_only_missing_files():
    found = parse_linkchecker(read("linkchecker.csv"))
    assert len(found) == 3
    assert found[0].page == "bench/s00/page-0003.md"
    assert caught(found, injected()) == ["missing-page", "raw-md-link", "missing-image"]


def test_linkchecker_anchor_warnings_count():
    found = parse_linkchecker(read("linkchecker_anchors.csv"))
    assert caught(found, injected()) == [
        "missing-page",
        "missing-anchor",
        "raw-md-link",
        "missing-image",
        "raw-missing-anchor",
        "table-broken-link",
    ]


def test_a_finding_on_another_page_is_no_catch_but_an_other_finding():
    stray = [Finding("bench/s00/page-0040.md", "missing anchor '#fault-missing-anchor'")]
    assert caught(stray, injected()) == []
    assert others(stray, injected()) == 1


def test_a_word_for_the_fault_counts_only_on_its_own_page():
    word = [Finding("bench/s00/page-0007.md", "shortcode left unrendered")]
    elsewhere = [Finding("bench/s00/page-0006.md", "shortcode left unrendered")]
    assert caught(word, injected()) == ["unrendered-shortcode"]
    assert caught(elsewhere, injected()) == []
