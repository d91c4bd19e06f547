"""``python -m kb render --out DIR``: the handbook rendered into a project that plain MkDocs builds.

``DIR/docs`` holds every file of ``docs/``; each page's shortcodes, applies-to banner, out-of-date
note and glossary abbreviations are rendered into its Markdown (kb/mkdocs/build.py's ``page_markdown``,
which the hook uses too), the print pages carry their parts of the printable handbook as raw HTML, and
``kb.json``/``kb.schema.json`` sit beside the pages. ``DIR/mkdocs.yml`` is the project's
configuration without ``hooks:``; ``overrides/`` and ``snippets/`` are copied, so
``cd DIR && mkdocs build`` makes the same pages as a build with the hook. It is the baseline of the
hook's cost (benchmarks/hookbench.py) and a way out to another site generator.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import Problem
from ..render.printpage import PARTS

_HOOKS = re.compile(r"^hooks:[ \t]*\n(?:[ \t]+-.*\n|[ \t]*#.*\n)*", re.M)
_COPIED = ("overrides", "snippets")  # the theme's custom_dir and the snippet includes' base_path


def plain_config(text: str, environ: Mapping[str, str]) -> str:
    """``mkdocs.yml`` without its ``hooks:`` list, and with the Git host settings as the hook would
    leave them: read from the environment now; without a repository, no edit path either."""
    text = _HOOKS.sub("", text)
    repo = environ.get("HANDBOOK_REPO_URL")
    edit = environ.get("HANDBOOK_EDIT_URI") or "edit/main/docs/"
    text = _setting("repo_url").sub(f"repo_url: {json.dumps(repo)}" if repo else "", text)
    return _setting("edit_uri").sub(f"edit_uri: {json.dumps(edit)}" if repo else "", text)


def _setting(key: str) -> re.Pattern[str]:
    return re.compile(rf"^{key}:.*$", re.M)


def render_out(root: Path, out: Path) -> list[Problem]:
    """Validate the project and write it rendered into ``out`` (replaced); the problems, if any."""
    from .build import page_markdown
    from .export import export_project
    from .project import validate_project

    project = validate_project(root)
    if project.problems:
        return project.problems
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(root / "docs", out / "docs")
    for name in _COPIED:
        if (root / name).is_dir():
            shutil.copytree(root / name, out / name)
    (out / "mkdocs.yml").write_text(plain_config((root / "mkdocs.yml").read_text("utf-8"), os.environ), "utf-8")
    for uri, page in project.pages.items():
        front = page.text[: len(page.text) - len(page.body)]
        (out / "docs" / uri).write_text(front + page_markdown(project, uri, page.rendered, page.meta), "utf-8")
    export_project(project, root, out / "docs")
    for src, html in _printable(out, [p.src_uri for p in PARTS if p.src_uri in project.pages]).items():
        printed = out / "docs" / src
        printed.write_text(printed.read_text("utf-8") + "\n\n" + html.lstrip("\n") + "\n", "utf-8")
    return []


def _printable(out: Path, parts: list[str]) -> dict[str, str]:
    """The parts of the printable handbook, from the page content of a build of ``out`` (thrown away)."""
    if not parts:
        return {}
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.plugins import BasePlugin

    from .build import printable

    captured: dict[str, str] = {}

    class Capture(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
        def on_page_context(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
            if page.file.src_uri in parts:
                captured[page.file.src_uri] = printable(nav.pages, page.file.src_uri, page.url)[0]
            return context

    with tempfile.TemporaryDirectory() as site, _cwd(out):
        config = load_config(str(out / "mkdocs.yml"), site_dir=site)
        config.plugins["kb-render-capture"] = Capture()
        build(config)
    return captured


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    """pymdownx.snippets reads ``base_path`` from the working folder."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
