"""The small commands of ``python -m kb``: validate, check-site and render. (check-wheel, scan,
review and publish are modules of their own: wheelcmd, scanrun, reviewcmd, publish.)

Each imports what it needs when it runs: check-site must not pay for pydantic, the wheel reader or
the scanner before it reads a byte of HTML.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..core.errors import finish


def add_check_site(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("site", type=Path, help="the built site folder")
    parser.add_argument("--flat-urls", action="store_true", help="the site was built with use_directory_urls: false")


def add_render(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="the folder to write (replaced): docs/ and mkdocs.yml")


def validate(args: argparse.Namespace) -> int:
    """``validate``: the KB tables and every page, without MkDocs."""
    from ..mkdocs.project import validate_project

    start = time.perf_counter()
    project = validate_project(args.root)
    records = sum(len(t) for t in project.kb.tables.values()) if project.kb else 0
    what = f"{records} records, {len(project.pages)} pages"
    for note in project.notes:
        print(note, file=sys.stderr)
    took = time.perf_counter() - start
    return finish(project.problems, f"in {what} ({took:.2f} s)", f"ok: {what} ({took:.2f} s)")


def check_site(args: argparse.Namespace) -> int:
    """``check-site SITE``: links, anchors, assets and external loads of a built site."""
    if not args.site.is_dir():
        print(f"{args.site}:1: no such folder (expected a built site; run the build first)", file=sys.stderr)
        return 2
    from ..core.config import read_config
    from ..site.sitecheck import check_site, page_files
    from ..wiki.urls import project_redirects, redirect_pages

    start = time.perf_counter()
    hints = page_files(args.root / "docs", not args.flat_urls)
    redirects = redirect_pages(project_redirects(read_config(args.root)), not args.flat_urls)
    problems = check_site(args.site, hints, shown=str(args.site), redirects=redirects)
    what = f"site {args.site}"
    took = time.perf_counter() - start
    return finish(problems, f"in {what} ({took:.2f} s)", f"ok: {what} ({took:.2f} s)")


def render(args: argparse.Namespace) -> int:
    """``render --out DIR``: the pages rendered into a project plain MkDocs builds (kb/mkdocs/renderout.py)."""
    from ..mkdocs.renderout import render_out

    problems = render_out(args.root, args.out)
    return finish(
        problems, "in the project: nothing rendered", f"ok: rendered into {args.out} (cd there; mkdocs build)"
    )
