"""Side by side: our built-site check against what a user would otherwise pick, in one run.

  ./dev bench [--sizes 100,1000,5000] [--runs 3] [--slow-runs 1] [--out docs/data/benchmarks.yml]

For each size, peer_site.py writes a clean project and a faulty one (each fault of
peer_site.FAULTS once). Timed, each ``--runs`` times as its own process (peak memory from
``os.wait4``): ``mkdocs build`` alone, with our hook, with the render-only hook (render_hook.py) and
with that plus mkdocs-htmlproofer-plugin (external URLs off), all on the clean project; then, on
the site built from the faulty project: ``python -m kb check-site`` as a process, ``check_site()``
inside one process, a floor process that only reads and lower-cases every HTML file, and
linkchecker over http://127.0.0.1 with and without its AnchorCheck plugin. Which faults each tool
caught is read from its own output (peer_output.py). The result is a KB record, written to
``--out`` and shown on docs/about/performance.md.

Peers at ``--slow-size`` pages and above (htmlproofer, linkchecker) run ``--slow-runs`` times.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.server
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_output import Finding, caught, others, parse_htmlproofer, parse_kb, parse_linkchecker  # noqa: E402
from peer_site import FAULTS, Generated, Injected, generate  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from kb.site.sitecheck import PARALLEL_FROM  # noqa: E402

PY = sys.executable
BIN = Path(PY).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "scripts")}
ENV.pop("HANDBOOK_REPO_URL", None)
# Python's default: modules are compiled once and the bytecode kept. The peers' packages were
# compiled when pip installed them; without this, a machine that sets the variable would make our
# own modules (run from scripts/) compile again on every run, and only ours.
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
TOOLS = ("mkdocs", "mkdocs-material", "pymdown-extensions", "LinkChecker", "mkdocs-htmlproofer-plugin")

FLOOR = """
import os, sys
n = 0
for d, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".html"):
            with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                n += len(f.read().lower())
print(n)
"""
# lexbor's parse of the same files, split as check-site splits them: with ``workers=2`` and at least
# ``PARALLEL_FROM`` files, a forked second process parses the first half. Only the parse: no check can
# be faster than the parser it stands on (issue 39: check-site takes at most 2x this).
FLOOR_LEXBOR = """
import os, sys
from selectolax.lexbor import LexborHTMLParser
site, processes = sys.argv[1], int(sys.argv[2])
paths = sorted(os.path.join(d, n) for d, _, names in os.walk(site) for n in names if n.endswith(".html"))
def parse(part):
    n = 0
    for path in part:
        with open(path, encoding="utf-8", errors="replace") as f:
            n += LexborHTMLParser(f.read()).root is not None
    return n
half = len(paths) // 2 if processes >= 2 else 0
pid = os.fork() if half else 0
if half and pid == 0:
    os._exit(0 if parse(paths[:half]) == half else 1)
n = parse(paths[half:])
if half and os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]):
    sys.exit("the second process did not parse its half")
print(n + half)
"""
IN_PROCESS = """
import json, sys, time
from pathlib import Path
from kb.mkdocs.project import built_sources, validate_project
from kb.site.sitecheck import check_site
root, site, runs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
hints = built_sources(validate_project(root, package=False).pages, True)
times = []
for _ in range(runs):
    start = time.perf_counter()
    check_site(site, hints, shown="site")
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""
VALIDATE = """
import json, sys, time
from pathlib import Path
from kb.mkdocs.project import validate_project
from kb.render.render import clear_caches
root, runs = Path(sys.argv[1]), int(sys.argv[2])
times = []
for _ in range(runs):
    clear_caches()  # each run from cold, as the build runs it once
    start = time.perf_counter()
    validate_project(root, package=False)
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""
HEADER = """\
# Written by ./dev bench (benchmarks/peers.py) from one run on the machine named below; shown on
# about/performance.md. Rerun the command to refresh it; do not edit the numbers by hand.
"""
LINKCHECKERRC = """\
# Written by benchmarks/peers.py. The server sends a LinkChecker header, so this rate applies.
[checking]
threads=10
maxrequestspersecond=10000
[filtering]
checkextern=0
"""


@dataclass
class Run:
    seconds: float
    peak_kib: int
    code: int
    out: str
    err: str
    timed_out: bool = False


def run(cmd: list[str], cwd: Path, timeout: float | None = None) -> Run:
    """Run ``cmd`` as a child process; its wall time, its own peak resident memory, its output.
    After ``timeout`` seconds the child (and anything it started) is stopped."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=out, stderr=err, start_new_session=True)
        stopped = threading.Event()

        def stop() -> None:  # Ctrl-C first, so the tool reports what it found so far; then kill
            stopped.set()
            os.killpg(proc.pid, signal.SIGINT)
            kill.start()

        kill = threading.Timer(30, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer = threading.Timer(timeout, stop) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        if timer:
            timer.cancel()
        if kill.is_alive():
            kill.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        return Run(seconds, usage.ru_maxrss, proc.returncode, text, errors, stopped.is_set())


class Timing:
    """The runs of one tool at one size."""

    def __init__(self, tool: str, size: int) -> None:
        self.tool, self.size = tool, size
        self.seconds: list[float] = []
        self.peak_kib = 0
        self.all: list[Run] = []
        self.stopped_after: float | None = None  # set when a run hit the time limit

    def add(self, r: Run, seconds: float | None = None) -> None:
        if r.timed_out:
            self.stopped_after = r.seconds
        else:
            self.seconds.append(r.seconds if seconds is None else seconds)
        self.peak_kib = max(self.peak_kib, r.peak_kib)
        self.all.append(r)

    @property
    def first(self) -> Run | None:
        return self.all[0] if self.all else None

    @property
    def median(self) -> float | None:
        return None if self.stopped_after is not None else statistics.median(self.seconds)

    def record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {"tool": self.tool, "pages": self.size}
        if self.stopped_after is not None:
            rec["stopped_after_s"] = round(self.stopped_after, 1)
        else:
            rec |= {
                "runs": len(self.seconds),
                "median_s": round(statistics.median(self.seconds), 3),
                "min_s": round(min(self.seconds), 3),
                "max_s": round(max(self.seconds), 3),
            }
        return rec | {"peak_mib": round(self.peak_kib / 1024, 1)}


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def timed(
    tool: str, size: int, cmd: list[str], cwd: Path, runs: int, ok: tuple[int, ...] = (0,), limit: float | None = None
) -> Timing:
    """Run ``cmd`` ``runs`` times; a run stopped at ``limit`` seconds ends the series (no median then)."""
    t = Timing(tool, size)
    for i in range(runs):
        r = run(cmd, cwd, limit)
        if r.timed_out:
            t.add(r)
            say(f"  {tool}: stopped after {r.seconds:.0f} s (the --peer-limit)")
            break
        if r.code not in ok or "Traceback (most recent call last)" in r.err:
            sys.exit(f"{tool} at {size} pages exited {r.code}:\n{r.err[-3000:]}\n{r.out[-2000:]}")
        t.add(r)
        say(f"  {tool}: run {i + 1}/{runs} {r.seconds:.2f} s, {r.peak_kib / 1024:.0f} MiB")
    return t


HOOK_CHECK = re.compile(r"built-site check took (\d+(?:\.\d+)?) s")


def hook_check(hook: Timing) -> Timing:
    """The built-site check as our hook timed it inside each build (its INFO line): the time the
    check adds to the build, without the noise of two whole builds subtracted from each other."""
    t = Timing("hook-check", hook.size)
    for r in hook.all:
        found = HOOK_CHECK.findall(r.err)
        if len(found) != 1:
            sys.exit(f"the build with our hook printed {len(found)} 'built-site check took' lines (expected 1)")
        t.add(r, float(found[0]))
    say(f"  hook-check: median {t.median:.3f} s inside the build")
    return t


def timed_inside(tool: str, size: int, script: str, args: list[str], cwd: Path, runs: int) -> Timing:
    """Time a function inside one process (the script prints its times as JSON); peak memory of that process."""
    r = run([PY, "-c", script, *args, str(runs)], cwd)
    if r.code:
        sys.exit(f"{tool} at {size} pages failed:\n{r.err[-3000:]}")
    t = Timing(tool, size)
    for seconds in json.loads(r.out):
        t.add(r, seconds)
    say(f"  {tool}: median {t.median:.3f} s over {runs} runs inside one process")
    return t


def mkdocs(config: str, site: str) -> list[str]:
    return [PY, "-m", "mkdocs", "build", "-f", config, "-d", site]


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly, with the header that tells linkchecker it may exceed 10 requests/s."""

    def end_headers(self) -> None:
        self.send_header("LinkChecker", "benchmark")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (linkchecker stopped at the time limit) is no error of the site."""


class Server:
    """A threaded http.server on 127.0.0.1 (a free port) serving ``site`` while in a ``with``."""

    def __init__(self, site: Path) -> None:
        handler = lambda *a, **kw: Handler(*a, directory=str(site), **kw)  # noqa: E731
        self.httpd = QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __enter__(self) -> Server:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def linkchecker_configs(folder: Path) -> tuple[Path, Path]:
    """Two linkcheckerrc files, without and with the AnchorCheck plugin (readable by everyone:
    linkchecker reads them as root, then switches to the user nobody)."""
    folder.mkdir(exist_ok=True)
    plain, anchors = folder / "linkcheckerrc", folder / "linkcheckerrc-anchors"
    plain.write_text(LINKCHECKERRC, encoding="utf-8")
    anchors.write_text(LINKCHECKERRC + "[AnchorCheck]\n", encoding="utf-8")
    for path in (folder, plain, anchors):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return plain, anchors


def html_size(site: Path) -> tuple[int, float]:
    files = list(site.rglob("*.html"))
    return len(files), sum(f.stat().st_size for f in files) / 2**20


def bench_size(
    size: int, args: argparse.Namespace, work: Path
) -> tuple[list[Timing], dict[str, list[Finding]], list[Injected], dict[str, Any]]:
    say(f"{size} pages: generating the clean and the faulty project")
    clean = generate(work / f"clean-{size}", size)
    faulty: Generated = generate(work / f"faulty-{size}", size, faulty=True)
    runs = args.runs
    slow = args.slow_runs if size >= args.slow_size else runs
    c, f = clean.root, faulty.root
    out: list[Timing] = []
    out.append(timed("build", size, mkdocs("mkdocs.plain.yml", "site-plain"), c, slow))
    hook = timed("build-hook", size, mkdocs("mkdocs.yml", "site"), c, slow)
    out += [hook, hook_check(hook)]
    out.append(timed("build-render", size, mkdocs("mkdocs.render.yml", "site-render"), c, slow))
    proofer = mkdocs("mkdocs.htmlproofer.yml", "site-proofer")
    out.append(timed("build-htmlproofer", size, proofer, c, slow, limit=args.peer_limit))
    pages, mib = html_size(c / "site")
    found: dict[str, list[Finding]] = {}
    say(f"{size} pages: the faulty project ({pages} HTML files, {mib:.1f} MiB clean)")
    r = run([PY, "-m", "kb", "--root", ".", "validate"], f)
    found["kb-validate"] = parse_kb(r.err + r.out)
    r = run(mkdocs("mkdocs.render.yml", "site"), f)
    if r.code:
        sys.exit(f"render-only build of the faulty project failed:\n{r.err[-3000:]}")
    r = run(proofer, f, args.peer_limit)
    found["htmlproofer"] = parse_htmlproofer(r.err + r.out)
    stopped = {"htmlproofer"} if r.timed_out else set()
    check = timed("check-site", size, [PY, "-m", "kb", "--root", ".", "check-site", "site"], f, runs, ok=(0, 1))
    assert check.first is not None
    found["kb-check-site"] = parse_kb(check.first.err, site_prefix="site/")
    out.append(check)
    out.append(timed_inside("check-site-inprocess", size, IN_PROCESS, [".", "site"], f, runs))
    out.append(timed("floor", size, [PY, "-c", FLOOR, "site"], f, runs))
    processes = str(2 if pages >= PARALLEL_FROM else 1)  # as check_site(workers=2) splits them
    out.append(timed("floor-lexbor", size, [PY, "-c", FLOOR_LEXBOR, "site", processes], f, runs))
    out.append(timed_inside("kb-validate", size, VALIDATE, ["."], c, runs))
    plain_rc, anchors_rc = linkchecker_configs(work / "linkchecker")
    with Server(f / "site") as server:
        for tool, rc in (("linkchecker", plain_rc), ("linkchecker-anchors", anchors_rc)):
            cmd = [str(BIN / "linkchecker"), "-f", str(rc), "--no-status", "-o", "csv", server.url]
            t = timed(tool, size, cmd, f, slow, ok=(0, 1), limit=args.peer_limit)
            assert t.first is not None
            found[tool] = parse_linkchecker(t.first.out)
            if t.first.timed_out:
                stopped.add(tool)
            out.append(t)
    site = {"pages": size, "html_files": pages, "html_mib": round(mib, 1), "stopped": sorted(stopped)}
    return out, found, faulty.injected, site


def ratio(rid: str, what: str, value: float | None, target: float, compare: str) -> dict[str, Any]:
    return {
        "id": rid,
        "what": what,
        "value": None if value is None else round(value, 2),
        "target": target,
        "compare": compare,
    }


def percent(share: float | None) -> float | None:
    return None if share is None else 100 * share


def ratios(timings: list[Timing], at: int, large: int) -> list[dict[str, Any]]:
    """The six targets, from medians of this run (None where the sizes needed were not run)."""
    med = {(t.tool, t.size): t.median for t in timings}

    def m(tool: str, size: int = at) -> float | None:
        return med.get((tool, size))

    def div(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None or b <= 0 else a / b

    def sub(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a - b

    base = m("build-render")
    return [
        ratio(
            "check-vs-floor",
            f"check-site process / floor process, {at} pages",
            div(m("check-site"), m("floor")),
            2.5,
            "at-most",
        ),
        ratio(
            "check-vs-lexbor",
            f"check-site process / lexbor's parse of the same HTML files in as many processes, {at} pages",
            div(m("check-site"), m("floor-lexbor")),
            2,
            "at-most",
        ),
        ratio(
            "linkchecker-vs-check",
            f"linkchecker without anchors / check-site process, {at} pages",
            div(m("linkchecker"), m("check-site")),
            100,
            "at-least",
        ),
        ratio(
            "htmlproofer-vs-hook",
            f"time htmlproofer adds to the build (that build minus the render-only build) / time our "
            f"hook's built-site check takes inside the build (timed by the hook), {at} pages",
            div(sub(m("build-htmlproofer"), base), m("hook-check")),
            60,
            "at-least",
        ),
        ratio(
            "kb-share-of-build",
            f"KB validation and rendering (validate_project) as % of the build with our hook, {at} pages",
            percent(div(m("kb-validate"), m("build-hook"))),
            5,
            "at-most",
        ),
        ratio(
            "check-scaling",
            f"check-site process at {large} pages / at {at} pages",
            div(m("check-site", large), m("check-site")),
            5.5,
            "at-most",
        ),
    ]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
        ram = f", {int(mem.split()[1]) / 2**20:.0f} GiB RAM"
    except (OSError, StopIteration):
        ram = ""
    python = platform.python_version()
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}){ram}, Python {python}"


def versions() -> list[dict[str, str]]:
    out = []
    for name in TOOLS:
        try:
            out.append({"name": name, "version": metadata.version(name)})
        except metadata.PackageNotFoundError:
            out.append({"name": name, "version": "not installed"})
    return out


def record(
    args: argparse.Namespace,
    timings: list[Timing],
    found: dict[int, dict[str, list[Finding]]],
    injected: list[Injected],
    sites: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    """One KB record for docs/data/benchmarks.yml."""
    sizes = sorted(sites)
    checkers = ("kb-validate", "kb-check-site", "htmlproofer", "linkchecker", "linkchecker-anchors")
    faults = []
    where = {inj.fault.id: inj for inj in injected}
    for fault in FAULTS:
        inj = where[fault.id]
        faults.append(
            {
                "id": fault.id,
                "fault": fault.what,
                "injected": f"{inj.file}:{inj.line}",
                "caught_by": [c for c in checkers if all(fault.id in caught(found[s][c], injected) for s in sizes)],
            }
        )
    findings = [
        {
            "checker": c,
            "other_findings": max(others(found[s][c], injected) for s in sizes),
            "stopped_at": [s for s in sizes if c in sites[s]["stopped"]],
        }
        for c in checkers
    ]
    today = dt.date.today().isoformat()
    return {
        "id": f"run-{today}",
        "measured": today,
        "machine": machine(),
        "command": " ".join(["./dev bench", *args.argv]),
        "sizes": sizes,
        "runs": args.runs,
        "slow_runs": args.slow_runs,
        "slow_size": args.slow_size,
        "tools": versions(),
        "sites": [{k: v for k, v in sites[s].items() if k != "stopped"} for s in sizes],
        "timings": [t.record() for t in timings],
        "faults": faults,
        "findings": findings,
        "ratios": ratios(timings, args.ratio_size, args.ratio_size * 5),
        "note": f"Load average over the last minute at the end of the run: {os.getloadavg()[0]:.2f}.",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000", help="site sizes in pages, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="runs of each timed command")
    parser.add_argument(
        "--slow-runs", type=int, default=1, help="runs of the builds, htmlproofer and linkchecker at --slow-size and up"
    )
    parser.add_argument("--slow-size", type=int, default=5000)
    parser.add_argument(
        "--peer-limit",
        type=float,
        default=900,
        help="stop a peer run (htmlproofer, linkchecker) after this many seconds",
    )
    parser.add_argument("--ratio-size", type=int, default=1000, help="the size the ratios are taken at")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data" / "benchmarks.yml")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    args.argv = sys.argv[1:]
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if shutil.which("linkchecker", path=str(BIN)) is None:
        sys.exit("linkchecker is not installed in this venv: run ./dev bench (it installs requirements-bench.txt)")
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        timings: list[Timing] = []
        found: dict[int, dict[str, list[Finding]]] = {}
        sites: dict[int, dict[str, Any]] = {}
        injected: list[Injected] = []
        for size in sizes:
            t, found[size], injected, sites[size] = bench_size(size, args, work / str(size))
            timings += t
    rec = record(args, timings, found, injected, sites)
    text = yaml.safe_dump([rec], sort_keys=False, allow_unicode=True, width=110)
    args.out.write_text(HEADER + text, encoding="utf-8")
    say(f"wrote {args.out}")
    for r in rec["ratios"]:
        say(f"  {r['what']}: {r['value']} (target {r['compare']} {r['target']})")
    for f in rec["faults"]:
        say(f"  {f['id']}: caught by {', '.join(f['caught_by']) or 'nobody'}")


if __name__ == "__main__":
    main()
