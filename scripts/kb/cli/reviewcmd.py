"""``python -m kb review``: print what is due for review (kb/wiki/review.py builds the queue)."""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys

from ..wiki.review import DEFAULT_MAX_AGE, Release, parse_today, release_of, review_queue


def _date_arg(value: str) -> dt.date:
    try:
        return parse_today(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _days_arg(value: str) -> int:
    if not re.fullmatch(r"\d{1,5}", value) or int(value) < 1:
        raise argparse.ArgumentTypeError(f"'{value}' is not a number of days (expected a whole number from 1)")
    return int(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-age",
        type=_days_arg,
        default=DEFAULT_MAX_AGE,
        metavar="DAYS",
        help=f"due when last reviewed more than DAYS days ago (default {DEFAULT_MAX_AGE})",
    )
    parser.add_argument(
        "--today", type=_date_arg, default=None, metavar="YYYY-MM-DD", help="the date to review as of (default: today)"
    )


def run(args: argparse.Namespace) -> int:
    """Print ``path:line: due for review: why``, one line per item. Exit status: 0 when nothing is
    due, 1 when something is, 2 when the handbook doesn't validate (no queue without a valid KB)."""
    from ..mkdocs.project import validate_project
    from ..wheel.package import PackageError, read_pin

    project = validate_project(args.root, package=False)
    if project.kb is None or project.problems:
        for problem in project.problems:
            print(problem, file=sys.stderr)
        print(f"{len(project.problems)} problem(s): fix them first (python -m kb validate)", file=sys.stderr)
        return 2
    try:
        release: Release | None = release_of(project.kb, *read_pin(args.root))
    except PackageError as exc:
        print(f"{exc.problem} (the release check is skipped)", file=sys.stderr)
        release = None
    today = args.today or dt.date.today()
    items = review_queue(project.kb, project.pages.values(), today, args.max_age, release)
    for due in items:
        print(due)
    if release is not None and release.date is None:
        print(f"note: no dated source for {release.spec}'s PyPI page, so the release check is skipped", file=sys.stderr)
    print(f"{len(items)} item(s) due for review as of {today} (max age {args.max_age} days)", file=sys.stderr)
    return 1 if items else 0
