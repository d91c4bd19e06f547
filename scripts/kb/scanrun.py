"""``python -m kb scan PATH...`` and ``torchtpu-scan PATH...``: find the files, scan them on every
core, print one report; with ``--diff`` show the mechanical fixes, with ``--fix`` make them.

Exit status: 0 when no finding reaches ``--fail-on`` (default must-change), 1 when one does (after
``--fix``: one that is left), 2 on a usage error (a path that doesn't exist, a bad option, a rules
table or pyproject.toml with problems), always with a plain message. Files that can't be read,
aren't UTF-8, don't parse or can't be fixed are listed on stderr (``path:line: reason``) and skipped;
they don't change the status. ``# noqa`` or ``# noqa: TPU101`` on a line silences findings there.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from .errors import KBError, Problem, format_problems
from .scan import read_source, scan_file_flows, scan_source
from .scanconfig import CODE, FAIL_ON, ConfigError, ScanConfig, find_config, read_config, selected
from .scanflow import Flows, join
from .scannames import Finding
from .scanreport import concise_report, json_report, safe, sarif_report, text_report
from .scanrules import RuleSet, load_rules, rule_files
from .scanwalk import UsageError, collect

PARALLEL_FROM = 64  # fewer files than this are scanned in this process (starting workers costs more)
FIX_PARALLEL_FROM = 4  # files to fix: each costs a LibCST parse, far more than starting a worker
PROGRESS_FROM = 500
SITE_URL_ENV = "TORCHTPU_SCAN_SITE_URL"
_RULES: RuleSet | None = None  # set once per worker process
_RANK = {"info": 0, "review": 1, "must-change": 2}
_PROG = "python -m kb scan"  # how usage errors name the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files and folders to scan (.py files)")
    parser.add_argument("--format", choices=("text", "concise", "json", "sarif"), default="text", help="report format")
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB", help="skip paths matching this gitignore pattern"
    )
    parser.add_argument("--select", metavar="CODES", help="only these rule codes or prefixes (TPU1,TPU301)")
    parser.add_argument("--ignore", metavar="CODES", help="leave out these rule codes or prefixes ('' for none)")
    parser.add_argument(
        "--fail-on", choices=FAIL_ON, default=None, help="least severity that exits 1 (default must-change)"
    )
    fixing = parser.add_mutually_exclusive_group()
    fixing.add_argument(
        "--diff", action="store_true", help="print the mechanical fixes as a unified diff; write nothing"
    )
    fixing.add_argument(
        "--fix", action="store_true", help="make the mechanical fixes in place, then report what is left"
    )
    parser.add_argument("--config", type=Path, metavar="PYPROJECT", help="read [tool.torchtpu-scan] from this file")
    parser.add_argument("--site-url", metavar="URL", help=f"link findings to the handbook here (or ${SITE_URL_ENV})")
    parser.add_argument("--jobs", type=int, default=0, metavar="N", help="worker processes (default: one per core)")
    parser.add_argument(
        "--rules",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a migration_rules table file (default: docs/data/migration_rules*.yml under --root)",
    )


def main(argv: list[str] | None = None) -> int:
    """``torchtpu-scan``: the same scan, with the rules packaged beside the code."""
    parser = argparse.ArgumentParser(
        prog="torchtpu-scan",
        description="Find what ties PyTorch code to CUDA, NCCL or PyTorch/XLA, and fix the mechanical part.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.root = None
    args.prog = "torchtpu-scan"
    return run(args)


def run(args: argparse.Namespace) -> int:
    global _PROG
    _PROG = getattr(args, "prog", _PROG)
    try:
        return _run(args)
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        sys.stderr.close()
        return 0


def _settings(args: argparse.Namespace) -> ScanConfig:
    path = args.config or find_config(Path(args.paths[0]))
    if args.config is not None and not args.config.is_file():
        raise ConfigError([Problem(safe(str(args.config)), 1, "no such file (expected a pyproject.toml for --config)")])
    config = read_config(path, safe(str(path))) if path is not None else ScanConfig()
    for name, value in (("select", args.select), ("ignore", args.ignore)):
        if value is not None:  # given on the command line: it replaces the file's list
            codes = [c.strip() for c in value.split(",") if c.strip()]
            bad = [c for c in codes if not CODE.match(c)]
            if bad:
                raise UsageError(f"--{name} '{safe(bad[0])}': not a rule code (expected TPU and up to 3 digits)")
            setattr(config, name, codes)
    config.exclude += args.exclude
    config.fail_on = args.fail_on or config.fail_on
    config.site_url = args.site_url or os.environ.get(SITE_URL_ENV) or config.site_url
    return config


def _run(args: argparse.Namespace) -> int:
    root: Path | None = args.root
    if args.jobs < 0:
        return _usage(f"--jobs {args.jobs}: expected 0 (one per core) or more")
    files = args.rules or rule_files(root)
    if not files:
        where = root / "docs/data/migration_rules.yml" if root else "the installed package"
        return _usage(f"{where}: no rules table (expected it, or --rules FILE)")
    try:
        config = _settings(args)
        if config.site_url is not None and not config.site_url.startswith("https://"):
            return _usage(f"site URL '{safe(config.site_url)}': expected an https:// URL")
        every = load_rules(files, root or files[0].parent, config.site_url)
        rules = RuleSet.of([r for r in every.rules if selected(r.code, config.select, config.ignore)])
        walk = collect(args.paths, config.exclude)
    except ConfigError as exc:
        print(format_problems(exc.problems), file=sys.stderr)
        return _usage(f"the settings have {len(exc.problems)} problem(s)")
    except KBError as exc:
        print(format_problems(exc.problems), file=sys.stderr)
        return _usage(f"the rules table has {len(exc.problems)} problem(s)")
    except UsageError as exc:
        return _usage(str(exc))
    jobs = args.jobs or len(os.sched_getaffinity(0))
    findings, problems = scan_all(walk.files, rules, jobs)
    if args.diff or args.fix:
        findings, more = fix_all(walk.files, findings, rules, write=args.fix, jobs=jobs)
        problems += more
    problems = sorted(set(problems + walk.problems))
    fixable = frozenset(r.id for r in rules.rules if r.fix is not None) if not args.fix else frozenset()
    if args.format == "json":
        print(json_report(findings, problems, len(walk.files), fixable))
    elif args.format == "sarif":
        print(sarif_report(findings, problems, rules.rules))
    elif args.format == "concise":
        if findings:
            print(concise_report(findings))
    elif not args.diff:
        print(text_report(findings, problems, len(walk.files), fixable))
    if problems:
        print(format_problems([Problem(safe(p.path), p.line, safe(p.message)) for p in problems]), file=sys.stderr)
    if config.fail_on == "never":
        return 0
    return 1 if any(_RANK[f.severity] >= _RANK[config.fail_on] for f in findings) else 0


def _usage(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2


def fix_all(
    files: list[tuple[str, str]], findings: list[Finding], rules: RuleSet, write: bool, jobs: int = 1
) -> tuple[list[Finding], list[Problem]]:
    """Fix (or, with ``write`` False, print the diff of) every file with a fixable finding; the
    findings left afterwards. Only files with something to fix are parsed with LibCST, in worker
    processes when there are several."""
    by_id = rules.by_id()
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    todo = {
        p: found for p, found in by_path.items() if any(by_id[f.rule].fix is not None and not f.manual for f in found)
    }
    if not todo:
        return findings, []
    real = {shown: path for path, shown in files}
    work = [(real[shown], shown, found, write) for shown, found in sorted(todo.items())]
    if jobs <= 1 or len(work) < FIX_PARALLEL_FROM:
        results = [_fix_one(item, rules) for item in work]
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork"), initializer=_init, initargs=(rules,)) as pool:
            results = list(pool.map(_fix_worker, work, chunksize=4))
    left = [f for p, found in by_path.items() if p not in todo for f in found]
    problems: list[Problem] = []
    for diff, after, trouble in results:
        sys.stdout.write(diff)
        left += after
        problems += trouble
    return sorted(left), problems


FixWork = tuple[str, str, list[Finding], bool]  # path to read, path shown, its findings, write or diff


def _fix_worker(item: FixWork) -> tuple[str, list[Finding], list[Problem]]:
    assert _RULES is not None, "the worker was started without rules"
    return _fix_one(item, _RULES)


def _fix_one(item: FixWork, rules: RuleSet) -> tuple[str, list[Finding], list[Problem]]:
    """One file: its diff (empty when writing or unchanged), the findings left, and problems."""
    from .scanfix import FixError, fix_text, fixes_for

    real, shown, found, write = item
    path = Path(real)
    raw, text, problem = read_source(path, shown)
    if text is None:
        return "", found, problem
    try:
        fixed, count = fix_text(text, fixes_for(found, rules.by_id()))
    except FixError as exc:
        return "", found, [Problem(shown, exc.line, exc.message)]
    if not count:
        return "", found, []
    if not write:
        return _diff(text, fixed, shown), found, []
    _write(path, raw, fixed)
    return "", scan_source(fixed, shown, rules), []


def _diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "a/" + shown.lstrip("/"),
        "b/" + shown.lstrip("/"),
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _write(path: Path, raw: bytes, text: str) -> None:
    """Replace the file in one step (a temporary file beside it, then rename), keeping its BOM and mode."""
    path = Path(os.path.realpath(path))  # a symlink inside the tree keeps pointing at its file
    data = ("\ufeff" if raw.startswith(b"\xef\xbb\xbf") else "") + text
    mode = path.stat().st_mode & 0o7777
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".fix", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(data)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def scan_all(files: list[tuple[str, str]], rules: RuleSet, jobs: int) -> tuple[list[Finding], list[Problem]]:
    """Scan every file, in worker processes over chunks when there are many; sorted findings, each
    device value's finding with the uses other scanned files make of it (kb.scanflow)."""
    findings: list[Finding] = []
    problems: list[Problem] = []
    flows: list[Flows] = []
    _fewer_collections()
    progress = sys.stderr.isatty() and len(files) >= PROGRESS_FROM
    if jobs <= 1 or len(files) < PARALLEL_FROM:
        for i, (path, shown) in enumerate(files):
            f, p, fl = scan_file_flows(Path(path), shown, rules)
            findings += f
            problems += p
            flows.append(fl)
            if progress and i % 100 == 0:
                _progress(i, len(files))
    else:
        size = max(8, min(250, len(files) // (jobs * 8) + 1))
        chunks = [files[i : i + size] for i in range(0, len(files), size)]
        done = 0
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork"), initializer=_init, initargs=(rules,)) as pool:
            for f, p, chunk_flows in pool.map(_scan_chunk, chunks):
                findings += f
                problems += p
                flows += chunk_flows
                done += size
                if progress:
                    _progress(min(done, len(files)), len(files))
    if progress:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)
    return join(sorted(findings), flows), problems  # sorted: already in order (files sorted, each file's too)


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


def _scan_chunk(chunk: list[tuple[str, str]]) -> tuple[list[Finding], list[Problem], list[Flows]]:
    """One worker's files. The cyclic collector is off while they are read (a parsed tree holds no
    cycle: reference counting frees it), then runs once over what they allocated."""
    assert _RULES is not None, "the worker was started without rules"
    findings: list[Finding] = []
    problems: list[Problem] = []
    flows: list[Flows] = []
    gc.disable()
    try:
        for path, shown in chunk:
            f, p, fl = scan_file_flows(Path(path), shown, _RULES)
            findings += f
            problems += p
            flows.append(fl)
    finally:
        gc.enable()
        gc.collect(0)  # what the chunk allocated and left alive is all in the youngest generation
    return findings, problems, flows
