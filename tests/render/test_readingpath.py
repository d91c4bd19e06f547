"""The reading path (kb/render/readingpath.py): previous/next re-linked along extra.reading_path."""

from __future__ import annotations

from types import SimpleNamespace

from kb.core.errors import Problem
from kb.render.readingpath import link_reading_path

CONFIG = "site_name: x\nextra:\n  reading_path:\n    - a.md\n"


def nav(*uris: str) -> list[SimpleNamespace]:
    """Pages linked in nav order, as MkDocs leaves them before the hook."""
    pages = [SimpleNamespace(file=SimpleNamespace(src_uri=u), previous_page=None, next_page=None) for u in uris]
    for before, after in zip(pages, pages[1:], strict=False):
        before.next_page, after.previous_page = after, before
    return pages


def names(page: SimpleNamespace | None) -> str | None:
    return page.file.src_uri if page else None


def test_pages_on_the_path_link_in_its_order_and_the_rest_keep_the_nav():
    pages = nav("index.md", "migrate/index.md", "q.md", "scan.md", "port.md", "other.md")
    assert link_reading_path(pages, ["index.md", "q.md", "port.md", "scan.md"], CONFIG) == []
    by = {p.file.src_uri: p for p in pages}
    assert [names(by["index.md"].next_page), names(by["q.md"].next_page), names(by["port.md"].next_page)] == [
        "q.md",
        "port.md",
        "scan.md",
    ]
    assert [names(by["q.md"].previous_page), names(by["scan.md"].previous_page)] == ["index.md", "port.md"]
    assert names(by["scan.md"].next_page) == "port.md"  # the last on the path keeps the nav's next
    assert names(by["migrate/index.md"].next_page) == "q.md"  # off the path: unchanged


def test_no_setting_changes_nothing():
    pages = nav("a.md", "b.md")
    assert link_reading_path(pages, None) == []
    assert names(pages[0].next_page) == "b.md"


def test_a_page_not_in_the_nav_or_listed_twice_is_a_problem_at_the_setting_and_nothing_changes():
    pages = nav("a.md", "b.md", "c.md")
    problems = link_reading_path(pages, ["c.md", "nope.md", "a.md", "c.md"], CONFIG)
    assert problems == [
        Problem("mkdocs.yml", 3, "extra.reading_path: 'nope.md' is not a page in the nav"),
        Problem("mkdocs.yml", 3, "extra.reading_path: 'c.md' is listed twice"),
    ]
    assert names(pages[0].next_page) == "b.md"


def test_a_setting_that_is_not_a_list_of_pages_is_a_problem():
    assert link_reading_path(nav("a.md"), "a.md", CONFIG) == [
        Problem("mkdocs.yml", 3, "extra.reading_path: expected a list of docs pages such as migrate/quickstart.md")
    ]
