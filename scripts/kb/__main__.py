"""Command line: ``python -m kb validate`` (data and pages), ``check-site SITE``, ``check-wheel``,
``scan PATH...`` (what in PyTorch code ties it to CUDA, NCCL or PyTorch-XLA), ``review`` (what is due
for review), ``publish DIR`` (build the site, and replace DIR only when every check passed)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import Problem, format_problems

# Each command imports what it needs when it runs: check-site must not pay for pydantic, the
# wheel reader or the scanner before it reads a byte of HTML.


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kb", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project folder (holds docs/ and mkdocs.yml)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("validate", help="check the KB tables and every page (links, shortcodes, front matter, URLs)")
    site = sub.add_parser("check-site", help="check a built site: links, anchors, assets, external loads")
    site.add_argument("site", type=Path, help="the built site folder")
    site.add_argument("--flat-urls", action="store_true", help="the site was built with use_directory_urls: false")
    wheel = sub.add_parser(
        "check-wheel", help="hold every name, env var, locator and version range to the pinned wheel"
    )
    wheel.add_argument(
        "--wheel", type=Path, help="a local wheel file (default: the pinned one, downloaded once into .cache/wheels/)"
    )
    wheel.add_argument(
        "--against", type=Path, metavar="OLD.whl", help="list the names added and removed since an older wheel"
    )
    wheel.add_argument("--offline", action="store_true", help="never download: fail when the wheel is not cached")
    wheel.add_argument("--write-inventory", action="store_true", help="rewrite docs/data/package.json from the wheel")
    scan = sub.add_parser("scan", help="list what in Python code ties it to CUDA, NCCL or PyTorch-XLA")
    review = sub.add_parser(
        "review", help="list the pages and records due for review, and why (exit 1 when any is due)"
    )
    publish = sub.add_parser("publish", help="build the site beside DIR and replace DIR only when every check passed")
    if argv is None:
        argv = sys.argv[1:]
    if "scan" in argv:
        from .scanrun import add_arguments as add_scan_arguments

        add_scan_arguments(scan)
    if "review" in argv:
        from .review import add_arguments as add_review_arguments

        add_review_arguments(review)
    if "publish" in argv:
        from .publish import add_arguments as add_publish_arguments

        add_publish_arguments(publish)
    args = parser.parse_args(argv)
    if args.command == "publish":
        from .publish import run as run_publish

        return run_publish(args)
    if args.command == "review":
        from .review import run as run_review

        return run_review(args)
    if args.command == "scan":
        from .scanrun import run as run_scan

        return run_scan(args)
    if args.command == "check-wheel":
        return check_wheel(args)

    start = time.perf_counter()
    if args.command == "validate":
        from .project import validate_project

        project = validate_project(args.root)
        problems = project.problems
        records = sum(len(t) for t in project.kb.tables.values()) if project.kb else 0
        what = f"{records} records, {len(project.pages)} pages"
        for note in project.notes:
            print(note, file=sys.stderr)
    else:
        if not args.site.is_dir():
            print(f"{args.site}:1: no such folder (expected a built site; run the build first)", file=sys.stderr)
            return 2
        from .sitecheck import check_site, page_files
        from .urls import project_redirects, redirect_pages

        hints = page_files(args.root / "docs", not args.flat_urls)
        redirects = redirect_pages(project_redirects(args.root), not args.flat_urls)
        problems = check_site(args.site, hints, shown=str(args.site), redirects=redirects)
        what = f"site {args.site}"
    took = time.perf_counter() - start
    return _finish(problems, f"in {what} ({took:.2f} s)", f"ok: {what} ({took:.2f} s)")


def _finish(problems: list[Problem], where: str, ok: str) -> int:
    """Print every problem sorted, then a count; or the ok line. The exit status says which."""
    if problems:
        print(format_problems(problems), file=sys.stderr)
        print(f"{len(problems)} problem(s) {where}", file=sys.stderr)
        return 1
    print(ok)
    return 0


def check_wheel(args: argparse.Namespace) -> int:
    """``check-wheel``: fetch (once) and read the pinned wheel, then check the whole handbook."""
    from .package import (
        INVENTORY,
        PackageError,
        cached_wheel,
        diff,
        fetch_wheel,
        inventory,
        inventory_text,
        load_index,
        read_inventory,
        read_pin,
    )
    from .project import check_package, validate_project

    start = time.perf_counter()
    root: Path = args.root
    try:
        project_name, version = read_pin(root)
        path = args.wheel or cached_wheel(root)
        if path is None:
            if args.offline:
                print(
                    f"torch-tpu.pin:1: {project_name}=={version} is not in .cache/wheels/ and --offline was given "
                    "(expected a cached wheel, or --wheel PATH)",
                    file=sys.stderr,
                )
                return 2
            print(f"downloading {project_name}=={version} (no dependencies) into .cache/wheels/ ...", file=sys.stderr)
            path = fetch_wheel(root)
        if not path.is_file():
            print(f"{path}:1: no such file (expected a .whl)", file=sys.stderr)
            return 2
        index = load_index(path)
        if args.against is not None:
            if not args.against.is_file():
                print(f"{args.against}:1: no such file (expected an older .whl)", file=sys.stderr)
                return 2
            old = load_index(args.against)
            lines = diff(old, index)
            print(f"{old.project} {old.version} -> {index.project} {index.version}: {len(lines)} change(s)")
            print("\n".join(lines))
            return 0
    except PackageError as exc:
        print(exc.problem, file=sys.stderr)
        return 2
    problems: list[Problem] = []
    if (index.project, index.version) != (project_name.lower(), version):
        problems.append(
            Problem(
                "torch-tpu.pin",
                1,
                f"the wheel is {index.project} {index.version} (expected {project_name}=={version}, the pin)",
            )
        )
    if args.write_inventory:
        (root / INVENTORY).write_text(inventory_text(index), "utf-8")
        print(f"wrote {INVENTORY}")
    elif read_inventory(root) != inventory(index):
        problems.append(
            Problem(
                str(INVENTORY),
                1,
                f"does not match {path.name} (expected the inventory of the pinned "
                "wheel; run 'python -m kb check-wheel --write-inventory' and review the diff)",
            )
        )
    project = validate_project(root, package=False)
    if project.kb is None:
        problems += project.problems
    else:
        problems += check_package(project, index=index)
    took = time.perf_counter() - start
    ok = f"ok: the handbook matches {index.project} {index.version} ({path.name}, {took:.2f} s)"
    return _finish(problems, f"against {path.name} ({took:.2f} s)", ok)


if __name__ == "__main__":
    sys.exit(main())
