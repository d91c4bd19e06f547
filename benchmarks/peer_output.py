"""Read what each checker printed into findings, and decide which injected faults it caught.

A finding is one complaint: the page it is on (a docs-relative ``.md`` path, or ``None`` when the
tool names no page) and its text. A fault counts as caught when a finding on the page it was
injected into (any page, for the fault injected into data) contains the fault's needle, a string
that only that fault puts into the project (or, on its own page, a word that names that kind of
fault). Findings that report no fault are other findings: false positives. The printable page
repeats every page, so findings there are neither (peer_site.REPEATS).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from peer_site import FAULTS, REPEATS, Injected


@dataclass(frozen=True)
class Finding:
    page: str | None
    text: str


_KB_LINE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+): (?P<msg>.*)$")
_KB_FROM = re.compile(r"\[from docs/(?P<src>[^\]:]+\.md)(?::\d+)?\]$")
_PROOFER = re.compile(r"htmlproofer: invalid url - (?P<url>.*) \[(?P<status>\d+)\] \[(?P<src>[^\]]+)\]\s*$")


def page_of_built(path: str) -> str:
    """The source page of a built HTML path or URL path: ``a/b/index.html`` or ``/a/b/`` -> ``a/b.md``."""
    path = path.strip("/")
    path = path.removesuffix("index.html").strip("/")
    if path.endswith(".html"):
        path = path.removesuffix(".html")
    return f"{path}.md" if path else "index.md"


def parse_kb(output: str, site_prefix: str = "") -> list[Finding]:
    """``python -m kb validate`` or ``check-site`` output: one ``path:line: message`` per problem."""
    found = []
    for line in output.splitlines():
        m = _KB_LINE.match(line)
        if not m:
            continue
        path = m.group("path")
        src = _KB_FROM.search(line)
        if src:
            page: str | None = src.group("src")
        elif path.startswith("docs/") and path.endswith(".md"):
            page = path.removeprefix("docs/")
        elif site_prefix and path.startswith(site_prefix) and path.endswith(".html"):
            page = page_of_built(path.removeprefix(site_prefix))
        else:
            page = None
        found.append(Finding(page, m.group("msg")))
    return found


def parse_htmlproofer(output: str) -> list[Finding]:
    """mkdocs-htmlproofer-plugin's ``invalid url - URL [STATUS] [SRC]`` lines in the build log."""
    return [
        Finding(m.group("src"), f"{m.group('url')} [{m.group('status')}]")
        for m in map(_PROOFER.search, output.splitlines())
        if m
    ]


def parse_linkchecker(output: str) -> list[Finding]:
    """linkchecker's ``-o csv`` report: every row that is invalid or carries a warning."""
    # Its comments start with '# '; a row may start with '#' too (a link to '#anchor' on the same page).
    rows = [line for line in output.splitlines() if line and line != "#" and not line.startswith("# ")]
    found = []
    for row in csv.DictReader(io.StringIO("\n".join(rows)), delimiter=";"):
        valid = row.get("valid", "") == "True"
        warning = (row.get("warningstring") or "").strip()
        if valid and not warning:
            continue
        parent = row.get("parentname") or ""
        page = page_of_built(urlsplit(parent).path) if parent else None
        text = " ".join(x for x in (row.get("urlname"), row.get("url"), row.get("result"), warning) if x)
        found.append(Finding(page, text))
    return found


def names(f: Finding, inj: Injected) -> bool:
    """Whether finding ``f`` reports the injected fault ``inj``."""
    fault = inj.fault
    if not fault.markdown:  # injected into data: it shows on every page that renders that record
        return fault.needle in f.text
    return f.page == inj.page and (fault.needle in f.text or any(word in f.text for word in fault.also))


def caught(findings: list[Finding], injected: list[Injected]) -> list[str]:
    """The ids of the injected faults that some finding reports, in FAULTS order."""
    got = {inj.fault.id for inj in injected if any(names(f, inj) for f in findings)}
    return [f.id for f in FAULTS if f.id in got]


def others(findings: list[Finding], injected: list[Injected]) -> int:
    """How many findings report none of the faults (false positives), leaving out pages that repeat others."""
    return sum(1 for f in findings if f.page not in REPEATS and not any(names(f, inj) for inj in injected))
