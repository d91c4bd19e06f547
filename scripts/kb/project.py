"""The whole pipeline for one project folder: load -> validate -> render -> check."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import KBError, Problem
from .load import KB, load_kb
from .pages import Page, check_nav, check_pages, load_pages
from .validate import validate_kb


@dataclass
class Project:
    root: Path
    kb: KB | None = None
    pages: dict[str, Page] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def docs(self) -> Path:
        return self.root / "docs"


def validate_project(root: Path) -> Project:
    """Load and validate the KB, render every page and check its links; collect all problems."""
    project = Project(root)
    try:
        kb = load_kb(project.docs / "data", shown_root=root)
    except KBError as exc:
        project.problems = exc.problems
        return project
    project.kb = kb
    project.problems += validate_kb(kb)
    pages, problems = load_pages(project.docs, kb, root)
    project.problems += problems
    project.problems += check_pages(pages, project.docs, kb)
    project.problems += check_nav(root, pages)
    project.pages = {p.src_uri: p for p in pages}
    project.problems = sorted(set(project.problems))
    return project


def built_sources(pages: dict[str, Page], directory_urls: bool = True) -> dict[str, str]:
    """Map a built HTML file (site-relative) to the page it came from, for error hints."""
    out = {}
    for uri, page in pages.items():
        stem = uri[:-3]
        if not directory_urls or stem == "index" or stem.endswith("/index"):
            html = stem + ".html"
        else:
            html = stem + "/index.html"
        out[html] = page.shown
    return out
