"""Command line: ``python -m kb validate`` (data and pages), ``python -m kb check-site SITE``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import format_problems
from .project import built_sources, validate_project
from .sitecheck import check_site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kb", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project folder (holds docs/ and mkdocs.yml)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("validate", help="check the KB tables and every page (links, shortcodes, front matter, URLs)")
    site = sub.add_parser("check-site", help="check a built site: links, anchors, assets, external loads")
    site.add_argument("site", type=Path, help="the built site folder")
    site.add_argument("--flat-urls", action="store_true", help="the site was built with use_directory_urls: false")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    if args.command == "validate":
        project = validate_project(args.root)
        problems = project.problems
        records = sum(len(t) for t in project.kb.tables.values()) if project.kb else 0
        what = f"{records} records, {len(project.pages)} pages"
    else:
        if not args.site.is_dir():
            print(f"{args.site}:1: no such folder (expected a built site; run the build first)", file=sys.stderr)
            return 2
        project = validate_project(args.root) if (args.root / "docs").is_dir() else None
        hints = built_sources(project.pages, not args.flat_urls) if project else {}
        problems = check_site(args.site, hints)
        what = f"site {args.site}"
    took = time.perf_counter() - start
    if problems:
        print(format_problems(problems), file=sys.stderr)
        print(f"{len(problems)} problem(s) in {what} ({took:.2f} s)", file=sys.stderr)
        return 1
    print(f"ok: {what} ({took:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
