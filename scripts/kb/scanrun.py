"""``python -m kb scan PATH...``: find the files, scan them on every core, print one report.

Exit status: 0 when no finding must change, 1 when one does, 2 on a usage error (a path that
doesn't exist, a bad option, a rules table with problems), always with a plain message. Files that
can't be read, aren't UTF-8 or don't parse are listed on stderr (``path:line: reason``) and skipped;
they don't change the status.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from .errors import KBError, Problem, format_problems
from .scan import scan_file
from .scannames import Finding
from .scanreport import json_report, sarif_report, text_report
from .scanrules import RuleSet, load_rules, rule_files
from .scanwalk import UsageError, collect

PARALLEL_FROM = 64  # fewer files than this are scanned in this process (starting workers costs more)
PROGRESS_FROM = 500
_RULES: RuleSet | None = None  # set once per worker process


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files and folders to scan (.py files)")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="report format")
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB", help="skip paths matching this gitignore pattern"
    )
    parser.add_argument("--jobs", type=int, default=0, metavar="N", help="worker processes (default: one per core)")
    parser.add_argument(
        "--rules",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a migration_rules table file (default: docs/data/migration_rules*.yml under --root)",
    )


def run(args: argparse.Namespace) -> int:
    root: Path = args.root
    if args.jobs < 0:
        return _usage(f"--jobs {args.jobs}: expected 0 (one per core) or more")
    files = args.rules or rule_files(root)
    if not files:
        return _usage(f"{root / 'docs/data/migration_rules.yml'}: no rules table (expected it, or --rules FILE)")
    try:
        rules = load_rules(files, root)
        walk = collect(args.paths, args.exclude)
    except KBError as exc:
        print(format_problems(exc.problems), file=sys.stderr)
        return _usage(f"the rules table has {len(exc.problems)} problem(s)")
    except UsageError as exc:
        return _usage(str(exc))
    jobs = args.jobs or len(os.sched_getaffinity(0))
    findings, problems = scan_all(walk.files, rules, jobs)
    problems = sorted(set(problems + walk.problems))
    if args.format == "json":
        print(json_report(findings, problems, len(walk.files)))
    elif args.format == "sarif":
        print(sarif_report(findings, problems, rules.rules))
    else:
        print(text_report(findings, problems, len(walk.files)))
    if problems:
        print(format_problems(problems), file=sys.stderr)
    return 1 if any(f.severity == "must-change" for f in findings) else 0


def _usage(message: str) -> int:
    print(f"python -m kb scan: {message}", file=sys.stderr)
    return 2


def scan_all(files: list[tuple[str, str]], rules: RuleSet, jobs: int) -> tuple[list[Finding], list[Problem]]:
    """Scan every file, in worker processes over chunks when there are many; sorted findings."""
    findings: list[Finding] = []
    problems: list[Problem] = []
    _fewer_collections()
    progress = sys.stderr.isatty() and len(files) >= PROGRESS_FROM
    if jobs <= 1 or len(files) < PARALLEL_FROM:
        for i, (path, shown) in enumerate(files):
            f, p = scan_file(Path(path), shown, rules)
            findings += f
            problems += p
            if progress and i % 100 == 0:
                _progress(i, len(files))
    else:
        size = max(8, min(250, len(files) // (jobs * 8) + 1))
        chunks = [files[i : i + size] for i in range(0, len(files), size)]
        done = 0
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork"), initializer=_init, initargs=(rules,)) as pool:
            for f, p in pool.map(_scan_chunk, chunks):
                findings += f
                problems += p
                done += size
                if progress:
                    _progress(min(done, len(files)), len(files))
    if progress:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)
    return sorted(findings), problems  # already in order (files sorted, each file's findings sorted): O(n)


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    bar = "#" * filled + "-" * (width - filled)
    print(f"\rscanning [{bar}] {done}/{total} files", end="", file=sys.stderr, flush=True)


def _fewer_collections() -> None:
    """Parsing allocates many small objects, each counted toward the cyclic collector's next run;
    the trees hold no cycles, so reference counting frees them and the collector can run rarely."""
    gc.set_threshold(100_000, 50, 100)


def _init(rules: RuleSet) -> None:
    global _RULES
    _RULES = rules
    _fewer_collections()


def _scan_chunk(chunk: list[tuple[str, str]]) -> tuple[list[Finding], list[Problem]]:
    assert _RULES is not None, "the worker was started without rules"
    findings: list[Finding] = []
    problems: list[Problem] = []
    for path, shown in chunk:
        f, p = scan_file(Path(path), shown, _RULES)
        findings += f
        problems += p
    return findings, problems
