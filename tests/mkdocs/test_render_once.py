"""Each page is rendered once per build: validation renders every page's shortcodes once (the page
that shows the review queue too: the queue is made from the pages' sources first), and the build's
page step reuses that rendering."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import kb.mkdocs.build as build_module
import kb.mkdocs.project as project_module
from kb.mkdocs.build import Build
from kb.mkdocs.project import validate_project

QUEUE_PAGE = "---\nreviewed: 2026-11-01\ndescription: Test page 17.\n---\n# Queue\n\n<!-- kb:review-queue -->\n"


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each page (by its shown path) was rendered, wherever the build renders."""
    counts: Counter[str] = Counter()
    real = project_module.render_markdown

    def counting(markdown: str, ctx: object, shown: str, line: int = 1):  # type: ignore[no-untyped-def]
        counts[shown] += 1
        return real(markdown, ctx, shown, line)  # type: ignore[arg-type]

    monkeypatch.setattr(project_module, "render_markdown", counting)
    monkeypatch.setattr(build_module, "render_markdown", counting)
    return counts


def test_validation_renders_each_page_once_with_the_queue(mini: Path, renders: Counter[str], monkeypatch):
    monkeypatch.setenv("KB_TODAY", "2026-12-01")
    (mini / "docs" / "queue.md").write_text(QUEUE_PAGE, encoding="utf-8")
    project = validate_project(mini, package=False)
    assert [p for p in project.problems if p.path.startswith("docs/")] == []
    assert renders == Counter({"docs/index.md": 1, "docs/sub/page.md": 1, "docs/queue.md": 1})
    assert project.review is not None
    assert "Due:" in project.pages["queue.md"].rendered  # rendered with the queue, not the placeholder


def test_the_build_reuses_what_validation_rendered(mini: Path, renders: Counter[str]):
    project = validate_project(mini, package=False)
    build = Build(project=project)
    renders.clear()
    for uri, page in project.pages.items():
        build.page(page.body, uri, page.meta, str(mini / page.shown))
    assert renders == Counter()
