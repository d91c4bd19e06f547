"""The whole pipeline for one project folder: load -> validate -> render -> check."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import KBError, Problem
from .load import KB, load_kb
from .namecheck import check_names
from .package import PIN_FILE, PackageError, cached_wheel, load_index, pin_text
from .pages import Page, check_nav, check_pages, load_pages
from .validate import validate_kb
from .wheel import WheelIndex


@dataclass
class Project:
    root: Path
    kb: KB | None = None
    pages: dict[str, Page] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def docs(self) -> Path:
        return self.root / "docs"


def validate_project(root: Path, wheel: Path | None = None, package: bool = True) -> Project:
    """Load and validate the KB, render every page and check its links; collect all problems.

    With ``package`` (the default), the handbook is also held to the pinned wheel when it is
    cached (or given as ``wheel``); when it is not, a note says the package check was skipped.
    """
    project = Project(root)
    try:
        kb = load_kb(project.docs / "data", shown_root=root)
    except KBError as exc:
        project.problems = exc.problems
        return project
    project.kb = kb
    project.problems += validate_kb(kb)
    if project.problems:  # a gate: pages render only from a KB whose references resolve
        project.problems = sorted(set(project.problems))
        return project
    pages, problems = load_pages(project.docs, kb, root)
    project.problems += problems
    project.problems += check_pages(pages, project.docs, kb)
    project.problems += check_nav(root, pages)
    project.pages = {p.src_uri: p for p in pages}
    if package:
        project.problems += check_package(project, wheel)
    project.problems = sorted(set(project.problems))
    return project


def check_package(project: Project, wheel: Path | None = None, index: WheelIndex | None = None) -> list[Problem]:
    """Hold the KB, pages and samples to the pinned wheel, or say why that was skipped."""
    assert project.kb is not None
    if not (project.root / PIN_FILE).is_file() and index is None and wheel is None:
        project.notes.append(f"package check skipped: no {PIN_FILE} in {project.root}")
        return []
    try:
        pin = pin_text(project.root)
        if index is None:
            wheel = wheel or cached_wheel(project.root)
            if wheel is None:
                project.notes.append(
                    f"package check skipped: no cached {pin} wheel in .cache/wheels/ "
                    "(run './dev check-wheel' once to download it; the build never downloads)"
                )
                return []
            index = load_index(wheel)
    except PackageError as exc:
        return [exc.problem]
    problems = check_names(project.kb, project.pages.values(), project.root / "snippets", index, pin, project.root)
    project.notes.append(f"package check: held to {pin} ({Path(index.path).name})")
    return problems


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
