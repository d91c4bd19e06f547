"""The reading path: previous and next links that follow the README's order, not the nav's.

``extra.reading_path`` in mkdocs.yml lists docs-relative pages in the order the README's "Where to
start reading" gives (tests/browser/test_reader_path.py holds the two to each other). Each page on
the path gets the one before it as "previous" and the one after it as "next"; pages off the path
keep the nav's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import Problem

CONFIG = "mkdocs.yml"


def setting_line(config_text: str) -> int:
    """The line of ``reading_path:`` in mkdocs.yml (1 when it is not found)."""
    for number, line in enumerate(config_text.splitlines(), 1):
        if line.strip().startswith("reading_path:"):
            return number
    return 1


def link_reading_path(pages: Sequence[Any], path: object, config_text: str = "") -> list[Problem]:
    """Re-link ``pages`` (MkDocs nav pages: ``file.src_uri``, ``previous_page``, ``next_page``)
    along ``path``; a problem, and no change, when the setting is malformed or names a page
    that is not in the nav."""
    if path is None:
        return []
    line = setting_line(config_text)
    if not isinstance(path, list) or not all(isinstance(p, str) for p in path):
        return [
            Problem(CONFIG, line, "extra.reading_path: expected a list of docs pages such as migrate/quickstart.md")
        ]
    by_uri = {p.file.src_uri: p for p in pages}
    missing = [uri for uri in path if uri not in by_uri]
    repeated = sorted({uri for uri in path if path.count(uri) > 1})
    problems = [Problem(CONFIG, line, f"extra.reading_path: {uri!r} is not a page in the nav") for uri in missing]
    problems += [Problem(CONFIG, line, f"extra.reading_path: {uri!r} is listed twice") for uri in repeated]
    if problems:
        return problems
    for before, after in zip(path, path[1:], strict=False):
        by_uri[before].next_page = by_uri[after]
        by_uri[after].previous_page = by_uri[before]
    return []
