"""``python -m kb scan PATH...`` and ``torchtpu-scan PATH...``: find the files, scan them on every
core, print one report; with ``--diff`` show the mechanical fixes, with ``--fix`` make them.

Exit status: 0 when no finding reaches ``--fail-on`` (default must-change), 1 when one does (after
``--fix``: one that is left, or a file that could not be fixed), 2 on a usage error (a path that
doesn't exist, a bad option, a rules table or pyproject.toml with problems), 128 + N when stopped
by signal N, always with a plain message. Files that can't be read, aren't UTF-8, don't parse or
can't be fixed are listed on stderr (``path:line: reason``) and skipped; with ``--fix`` a file left
unfixed makes the status at least 1. ``# noqa`` or ``# noqa: TPU101`` on a line silences findings
there. How ``--fix`` writes is ``kb.scan.fixwrite``. Worker processes end with the command: SIGTERM and
SIGINT stop them (their temporary files are removed), and each is sent SIGTERM if the command dies.
A fix worker killed by SIGKILL fails the files not done, with a message; the temporary files such
a kill leaves are removed once the workers are gone, and by the next ``--fix`` (``kb.scan.fixtemp``).
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import get_context
from multiprocessing.pool import Pool
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

from ..core.errors import KBError, Problem, escape_text, format_problems
from ..core.stopping import Stopped, die_with_parent, signal_name, stoppable
from . import fixtemp, fixwrite
from .rulecache import cached_rules
from .scan import scan_file_flows, scan_source
from .scanconfig import CODE, FAIL_ON, ConfigError, ScanConfig, find_config, read_config, selected
from .scanext import report_extensions
from .scanflow import (
    Flows,
    device_module_calls,
    imported_elsewhere,
    join,
    local_modules,
    module_names,
    own_package_imports,
)
from .scannames import Finding
from .scanreport import concise_report, json_report, sarif_report, text_report
from .scanrules import RuleSet, load_rules, rule_files
from .scansettings import read_elsewhere
from .scanwalk import UsageError, collect

PARALLEL_FROM = 64  # fewer files than this are scanned in this process (starting workers costs more)
FIX_PARALLEL_FROM = 4  # files to fix: each costs a LibCST parse, far more than starting a worker
PROGRESS_FROM = 500
SITE_URL_ENV = "TORCHTPU_SCAN_SITE_URL"
_RULES: RuleSet | None = None  # set once per worker process
_NAMES: frozenset[tuple[str, ...]] | None = None  # the scanned files' module names, set with _RULES
_IN_FILE = False  # in a fix worker: fixing a file (a signal unwinds it) or not (a signal exits)
_STOPPING = False  # in a fix worker: a signal is unwinding the file
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
        with stoppable():
            return _run(args)
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        sys.stderr.close()
        return 0
    except (Stopped, KeyboardInterrupt) as exc:
        signum, name = signal_name(exc)
        print(f"{_PROG}: stopped by {name}; a file is either fixed or as it was", file=sys.stderr)
        return 128 + signum


def _settings(args: argparse.Namespace) -> ScanConfig:
    path = args.config or find_config(Path(args.paths[0]))
    if args.config is not None and not args.config.is_file():
        raise ConfigError(
            [Problem(escape_text(str(args.config)), 1, "no such file (expected a pyproject.toml for --config)")]
        )
    config = read_config(path, escape_text(str(path))) if path is not None else ScanConfig()
    for name, value in (("select", args.select), ("ignore", args.ignore)):
        if value is not None:  # given on the command line: it replaces the file's list
            codes = [c.strip() for c in value.split(",") if c.strip()]
            bad = [c for c in codes if not CODE.match(c)]
            if bad:
                raise UsageError(f"--{name} '{escape_text(bad[0])}': not a rule code (expected TPU and up to 3 digits)")
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
            return _usage(f"site URL '{escape_text(config.site_url)}': expected an https:// URL")
        if root is not None and not args.rules:  # the project's own table: kept checked in its .cache
            every = cached_rules(files, root, config.site_url, root / ".cache")
        else:
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
    digests: dict[str, str] = {}
    findings, problems = scan_all(walk.files, rules, jobs, digests)
    not_fixed = False
    if args.diff or args.fix:
        findings, more = fix_all(walk.files, findings, rules, write=args.fix, jobs=jobs, digests=digests)
        problems += more
        not_fixed = args.fix and bool(more)
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
        print(format_problems(problems), file=sys.stderr)  # each line escaped by Problem
    if config.fail_on == "never":
        return int(not_fixed)
    return 1 if not_fixed or any(_RANK[f.severity] >= _RANK[config.fail_on] for f in findings) else 0


def _usage(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2


def fix_all(
    files: list[tuple[str, str]],
    findings: list[Finding],
    rules: RuleSet,
    write: bool,
    jobs: int = 1,
    digests: dict[str, str] | None = None,
) -> tuple[list[Finding], list[Problem]]:
    """Fix (or, with ``write`` False, print the diff of) every file with a fixable finding; the
    findings left afterwards. Only files with something to fix are parsed with LibCST, in worker
    processes when there are several; a file is fixed only if its bytes are still those scanned
    (``digests``, by path)."""
    by_id = rules.by_id()
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    todo = {
        p: found for p, found in by_path.items() if any(by_id[f.rule].fix is not None and not f.manual for f in found)
    }
    folders = {Path(path).parent for path, _ in files} if write else set()
    fixtemp.sweep(folders)  # what a killed --fix left
    if not todo:
        return findings, []
    real = {shown: path for path, shown in files}
    sums = digests or {}
    work = [(real[shown], shown, found, write, sums.get(real[shown], "")) for shown, found in sorted(todo.items())]
    try:
        if jobs <= 1 or len(work) < FIX_PARALLEL_FROM:
            results = [_fix_one(item, rules) for item in work]
        else:
            results = _fix_in_workers(work, rules, jobs)
    finally:
        fixtemp.sweep(folders)  # the workers are gone: what one killed by SIGKILL left
    left = [f for p, found in by_path.items() if p not in todo for f in found]
    problems: list[Problem] = []
    for diff, after, trouble in results:
        sys.stdout.write(diff)
        left += after
        problems += trouble
    return sorted(left), problems


FixWork = tuple[str, str, list[Finding], bool, str]  # path, path shown, findings, write or diff, scanned SHA-256
FixResult = tuple[str, list[Finding], list[Problem]]  # the diff, the findings left, the problems
KILLED = "its worker process was killed; fixed or left as it was (run the scan again)"


def _fix_in_workers(work: list[FixWork], rules: RuleSet, jobs: int) -> list[FixResult]:
    """Each file in a worker process. A worker that dies (SIGKILL, out of memory) fails its file
    and the ones not done yet, each with a message, instead of leaving the command waiting. Done,
    the workers are told to exit; stopped (a signal, an error), they are sent SIGTERM."""
    context = get_context("fork")
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_fixer, initargs=(rules, os.getpid()))
    try:
        futures = [pool.submit(_fix_worker, item) for item in work]
        results = [_result(future, item) for future, item in zip(futures, work, strict=True)]
    except BaseException:
        processes = list((pool._processes or {}).values())
        for process in processes:
            process.terminate()  # a worker in a file unwinds its finally blocks; an idle one exits
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
                process.join()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def _result(future: Future[FixResult], item: FixWork) -> FixResult:
    try:
        return future.result()
    except BrokenProcessPool:
        return "", item[2], [Problem(item[1], 1, KILLED)]


def _fix_worker(item: FixWork) -> FixResult:
    global _IN_FILE
    assert _RULES is not None, "the worker was started without rules"
    try:
        _IN_FILE = True
        return _fix_one(item, _RULES)
    except SystemExit as stop:  # a signal: the file's finally blocks have run; the pool would take the next
        os._exit(stop.code if isinstance(stop.code, int) else 1)
    finally:
        _IN_FILE = False


def _init_fixer(rules: RuleSet, parent: int) -> None:
    _init(rules, parent)
    signal.signal(signal.SIGTERM, _exit_fixer)
    signal.signal(signal.SIGHUP, _exit_fixer)


def _exit_fixer(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP in a fix worker. In a file it unwinds it (its temporary file is removed),
    once: a second signal can't cut the ``finally`` blocks short. Anywhere else (the pool's own
    code, which would take an exception for a task's result and wait for the next) it exits now."""
    global _STOPPING
    if not _IN_FILE:
        os._exit(128 + signum)
    if not _STOPPING:
        _STOPPING = True
        raise SystemExit(128 + signum)


def _fix_one(item: FixWork, rules: RuleSet) -> tuple[str, list[Finding], list[Problem]]:
    """One file: its diff (empty when writing or unchanged), the findings left, and problems. The
    file is locked, and fixed only from the bytes the scan read (kb.scan.fixwrite)."""
    from .scanfix import FixError

    real, shown, found, write, scanned = item
    try:
        with fixwrite.locked(Path(real)) as fd:
            return _fix_locked(Path(real), fd, shown, found, write, scanned, rules)
    except FixError as exc:
        return "", found, [Problem(shown, exc.line, exc.message)]
    except fixwrite.Refused as exc:
        return "", found, [Problem(shown, 1, str(exc))]
    except OSError as exc:
        return "", found, [Problem(shown, 1, f"can't be read again ({exc.strerror or exc}); not fixed")]
    except (RecursionError, MemoryError):
        return "", found, [Problem(shown, 1, "nested too deeply to fix; not fixed")]


def _fix_locked(
    path: Path, fd: int, shown: str, found: list[Finding], write: bool, scanned: str, rules: RuleSet
) -> tuple[str, list[Finding], list[Problem]]:
    from .scanfix import fix_text, fixes_for

    raw = fixwrite.read_all(fd)
    if fixwrite.digest(raw) != scanned:
        raise fixwrite.Refused(fixwrite.CHANGED)
    text = raw.decode("utf-8-sig")  # as the scan read these bytes
    fixed, count = fix_text(text, fixes_for(found, rules.by_id()))
    if not count:
        return "", found, []
    if not write:
        return _diff(text, fixed, shown), found, []
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    fixwrite.replace(path, fd, raw, (bom + fixed).encode("utf-8"))
    return "", scan_source(fixed, shown, rules, before=text), []


def _diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        _git_lines(before),
        _git_lines(after),
        "a/" + shown.lstrip("/"),
        "b/" + shown.lstrip("/"),
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _git_lines(text: str) -> list[str]:
    """The lines as git reads them: split after each \\n only (not at \\r, \\f or \\u2028)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def scan_all(
    files: list[tuple[str, str]], rules: RuleSet, jobs: int, digests: dict[str, str] | None = None
) -> tuple[list[Finding], list[Problem]]:
    """Scan every file, in worker processes over chunks when there are many; sorted findings, each
    device value's finding with the uses other scanned files make of it (kb.scan.scanflow). ``digests``
    gets the SHA-256 of each file read, by path."""
    sums = digests if digests is not None else {}
    findings: list[Finding] = []
    problems: list[Problem] = []
    flows: list[Flows] = []
    _fewer_collections()
    progress = sys.stderr.isatty() and len(files) >= PROGRESS_FROM
    names = module_names([shown for _, shown in files])  # what a file's flows may name (kb.scan.scanflow)
    if jobs <= 1 or len(files) < PARALLEL_FROM:
        for i, (path, shown) in enumerate(files):
            f, p, fl, sums[path] = scan_file_flows(Path(path), shown, rules, names)
            findings += f
            problems += p
            flows.append(fl)
            if progress and i % 100 == 0:
                _progress(i, len(files))
    else:
        size = max(8, min(250, len(files) // (jobs * 32) + 1))  # small chunks: no worker idles long at the end
        chunks = [files[i : i + size] for i in range(0, len(files), size)]
        done = 0
        with _workers(jobs, rules, names) as pool, _collector_off():
            for f, p, chunk_flows, chunk_sums in pool.imap(_scan_chunk, chunks):
                findings += f
                problems += p
                flows += chunk_flows
                sums.update(chunk_sums)
                done += size
                if progress:
                    _progress(min(done, len(files)), len(files))
    if progress:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)
    findings, flows = report_extensions(sorted(findings), flows, rules)
    findings = device_module_calls(own_package_imports(findings, flows, rules), flows, rules)
    findings = read_elsewhere(findings, [(fl.path, fl.settings, fl.reads) for fl in flows])
    findings = imported_elsewhere(local_modules(join(findings, flows, rules), flows, rules), flows)
    return findings, problems  # sorted: files sorted, each file's too


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    bar = "#" * filled + "-" * (width - filled)
    print(f"\rscanning [{bar}] {done}/{total} files", end="", file=sys.stderr, flush=True)


def _fewer_collections() -> None:
    """Parsing allocates many small objects, each counted toward the cyclic collector's next run;
    the trees hold no cycles, so reference counting frees them and the collector can run rarely."""
    gc.set_threshold(100_000, 50, 100)


@contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic collector off while the workers' results come in, and what came then moved out
    of its reach (gc.freeze): unpickled, the results are hundreds of thousands of tuples that hold
    no cycle and live until the report is printed, and one collection would walk them all."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


@contextmanager
def _workers(jobs: int, rules: RuleSet, names: frozenset[tuple[str, ...]] | None = None) -> Iterator[Pool]:
    """Worker processes. When the block ends normally they are closed and exit on their own, with
    no signal: twice under load a scan that had its results hung for good, its parent waiting for a
    worker that sat on a futex after the closing SIGTERM (a lock of the task queue, most likely).
    An exception or a signal in this process terminates them (SIGTERM, which they turn into
    SystemExit so their ``finally`` blocks run)."""
    pool = get_context("fork").Pool(jobs, initializer=_init, initargs=(rules, os.getpid(), names))
    try:
        yield pool
    except BaseException:
        _terminate(pool)
        raise
    pool.close()
    _join(pool)


_EXIT_S = 30.0  # how long workers whose results are all in get to exit on their own


def _join(pool: Pool) -> None:
    """Wait for the closed pool's workers to exit; one still there after ``_EXIT_S`` is killed: its
    results are in, and a worker that sat on a futex as it exited (once more in the tests, in a
    process with no other thread) left the scan waiting for good. ``_pool`` is the pool's list of
    processes, which it has no public name for."""
    deadline = time.monotonic() + _EXIT_S
    for worker in list(getattr(pool, "_pool", ())):
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
    pool.join()


def _terminate(pool: Pool) -> None:
    """Terminate the pool's workers (SIGTERM) and wait for them; one still there after ``_EXIT_S`` is
    killed. A SIGTERM that lands just before a worker blocks on the task queue's lock (which the
    pool holds while it terminates) wakes nothing, and the worker waited for good (seen once in the
    tests): the pool's own join has no time limit, so a timer kills the stragglers."""
    workers = list(getattr(pool, "_pool", ()))
    timer = threading.Timer(_EXIT_S, _kill, args=(workers,))
    timer.daemon = True
    timer.start()
    try:
        pool.terminate()
        pool.join()
    finally:
        timer.cancel()


def _kill(workers: list[BaseProcess]) -> None:
    for worker in workers:
        if worker.exitcode is None:
            worker.kill()


def _init(rules: RuleSet, parent: int, names: frozenset[tuple[str, ...]] | None = None) -> None:
    global _RULES, _NAMES
    _RULES, _NAMES = rules, names
    _fewer_collections()
    signal.signal(signal.SIGTERM, _exit_worker)
    signal.signal(signal.SIGHUP, _exit_worker)
    die_with_parent()  # SIGTERM when the command dies, even by SIGKILL
    if os.getppid() != parent:  # it died before the request took effect
        raise SystemExit(1)


def _exit_worker(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _scan_chunk(chunk: list[tuple[str, str]]) -> tuple[list[Finding], list[Problem], list[Flows], dict[str, str]]:
    """One worker's files. The cyclic collector is off while they are read (a parsed tree holds no
    cycle: reference counting frees it), then runs once over what they allocated."""
    assert _RULES is not None, "the worker was started without rules"
    findings: list[Finding] = []
    problems: list[Problem] = []
    flows: list[Flows] = []
    sums: dict[str, str] = {}
    gc.disable()
    try:
        for path, shown in chunk:
            f, p, fl, sums[path] = scan_file_flows(Path(path), shown, _RULES, _NAMES)
            findings += f
            problems += p
            flows.append(fl)
    finally:
        gc.enable()
        gc.collect(0)  # what the chunk allocated and left alive is all in the youngest generation
    return findings, problems, flows, sums
