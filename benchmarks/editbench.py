"""Edit to reload under ``./dev serve``: the median time from appending a marker to one page to the
served page showing it, over edits of different pages (issue 39's target: <= 1 s, 1.5 s the floor).

    PYTHONPATH=scripts .venv/bin/python benchmarks/editbench.py [--pages 5] [--rounds 1] [--json OUT.json]
        [--write]         # record the run in docs/data/speed.yml, which about/performance.md shows
        [--project PATH]  # another checkout, e.g. one from `git archive`, to compare before and after
        [--timeout S]     # a large site (bench.py scale --keep) takes minutes to serve first

The server runs on a copy of the project (its .venv linked in) on a free port, so the checkout is
never touched; each page is restored after its edit all the same, and the restore is waited for, so
that every edit starts from the site as it was. hookbench.py times one page edited again and again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import yaml  # noqa: E402

from hookbench import ROOT, _get, _not_copied  # noqa: E402
from peers import machine  # noqa: E402

# Different sections and sizes; the first ten are used by --pages 10.
PAGES = [
    "migrate/quickstart.md",
    "frameworks/accelerate.md",
    "reference/faq.md",
    "understand/architecture.md",
    "migrate/precision.md",
    "limits/index.md",
    "figures/charts.md",
    "reference/hardware.md",
    "migrate/serving.md",
    "about/contributing.md",
]
COMMAND = "PYTHONPATH=scripts .venv/bin/python benchmarks/editbench.py"  # as the performance page gives it
SPEED_FILE = ROOT / "docs" / "data" / "speed.yml"
SPEED_HEADER = """\
# Written by benchmarks/editbench.py --write (edit-to-reload), benchmarks/bench.py glossary --build
# --write (glossary-build), benchmarks/hookbench.py --write (hook-cost), benchmarks/bench.py weight --write
# (the three *-weight kinds) and benchmarks/bench.py scale --sizes 40,1000 --write (scale-build), each from
# one run on the machine it names; shown on about/performance.md.
# Rerun a record's command to refresh it; do not edit the numbers by hand.
"""
TARGET_S, FLOOR_S = 1.0, 1.5  # issue 39: a one-page edit served in at most 1 s; 1.5 s is acceptable
SETTLE_S = 2.0  # after each restore is served: let the watcher and the background site check finish
TIMEOUT_S = 180.0


def url_of(base: str, page: str) -> str:
    """The served address of docs/PAGE with directory URLs."""
    stem = page.removesuffix(".md")
    stem = stem.removesuffix("index").rstrip("/") if stem.endswith("index") else stem
    return f"{base}/{stem}/" if stem else f"{base}/"


def wait_for(url: str, test: Any, start: float) -> float:
    """Seconds from ``start`` until ``test(body)`` holds for the served page."""
    while not test(_get(url)):
        if time.perf_counter() - start > TIMEOUT_S:
            sys.exit(f"{url}: the edit never showed in {TIMEOUT_S:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - start


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_edit(root: Path, base: str, page: str, n: int, pid: int) -> tuple[float, float]:
    """Append a unique marker to docs/PAGE, time until it is served (wall s, and the server's CPU
    s meanwhile, which the machine's other load changes less), then restore and wait for that."""
    path, url = root / "docs" / page, url_of(base, page)
    original = path.read_bytes()
    marker = f"editbench-marker-{n}-{time.time_ns()}"
    cpu = cpu_of(pid)
    start = time.perf_counter()
    try:
        path.write_bytes(original + f"\n{marker}\n".encode())
        took = wait_for(url, lambda body: marker in body, start)
        cpu = cpu_of(pid) - cpu
    finally:
        path.write_bytes(original)
    wait_for(url, lambda body: "<html" in body and marker not in body, time.perf_counter())
    return took, cpu


def serve(root: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    cmd = ["./dev", "serve", "-a", f"127.0.0.1:{port}"]
    log = open(root / "serve.log", "wb")  # noqa: SIM115 - kept open for the server's life
    return subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)


def measure(tmp: Path, pages: list[str], rounds: int, project: Path = ROOT) -> dict[str, Any]:
    root = tmp / "project"
    shutil.copytree(project, root, ignore=_not_copied)
    (root / ".venv").symlink_to((ROOT / ".venv").resolve())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = serve(root, port)
    times: list[float] = []
    cpus: list[float] = []
    per_page: dict[str, list[float]] = {p: [] for p in pages}
    try:
        start = time.perf_counter()
        first = wait_for(url_of(base, pages[0]), lambda body: "<html" in body, start)
        time.sleep(SETTLE_S)
        for r in range(rounds):
            for i, page in enumerate(pages):
                took, cpu = one_edit(root, base, page, r * len(pages) + i, server.pid)
                times.append(took)
                cpus.append(cpu)
                per_page[page].append(round(took, 3))
                time.sleep(SETTLE_S)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if not times:
        sys.exit(f"no edit measured; the server's log:\n{(root / 'serve.log').read_text('utf-8', 'replace')[-3000:]}")
    return {
        "edit_to_reload_median_s": round(statistics.median(times), 3),
        "edit_to_reload_max_s": round(max(times), 3),
        "server_cpu_per_edit_median_s": round(statistics.median(cpus), 3),
        "edits": len(times),
        "first_serve_s": round(first, 3),
        "per_page_s": per_page,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    global TIMEOUT_S  # noqa: PLW0603 - one setting for the whole run
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5, help=f"how many different pages (at most {len(PAGES)})")
    parser.add_argument("--rounds", type=int, default=1, help="edits of each page")
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--write", action="store_true", help="record the run in docs/data/speed.yml")
    parser.add_argument("--project", type=Path, default=ROOT, help="the project to serve (default: this one)")
    parser.add_argument(
        "--timeout", type=float, default=TIMEOUT_S, help="seconds to wait for the first serve and for each edit"
    )
    args = parser.parse_args()
    TIMEOUT_S = args.timeout
    if not 1 <= args.pages <= len(PAGES):
        sys.exit(f"--pages: expected 1 to {len(PAGES)}, got {args.pages}")
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(Path(tmp), PAGES[: args.pages], args.rounds, args.project.resolve())
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", "utf-8")
    if args.write:
        command = f"{COMMAND} --pages {args.pages} --rounds {args.rounds} --write"
        write_run(SPEED_FILE, speed_record(result, command, datetime.date.today()))
        print(f"recorded in {SPEED_FILE.relative_to(ROOT)}")


def speed_record(result: dict[str, Any], command: str, day: datetime.date) -> dict[str, Any]:
    """The run as a record of the KB's speed table (kb.core.schema.SpeedRun)."""
    times = [t for page in result["per_page_s"].values() for t in page]
    return {
        "id": f"edit-to-reload-{day.isoformat()}",
        "what": "edit-to-reload",
        "measured": day.isoformat(),
        "machine": machine(),
        "command": command,
        "runs": result["edits"],
        "median_s": result["edit_to_reload_median_s"],
        "min_s": round(min(times), 3),
        "max_s": result["edit_to_reload_max_s"],
        "target_s": TARGET_S,
        "floor_s": FLOOR_S,
        "note": f"Load average over the last minute at the end of the run: {result['load_average_1m']}.",
    }


def write_run(path: Path, record: dict[str, Any]) -> None:
    """Replace the file's record of the same kind of run with ``record`` (the others stay)."""
    try:
        old = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        sys.exit(f"{path}:{line}: not valid YAML, so the run was not recorded (expected a list of runs)")
    kept = [r for r in old or [] if isinstance(r, dict) and r.get("what") != record["what"]]
    body = yaml.safe_dump([*kept, record], sort_keys=False, allow_unicode=True, width=110)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(SPEED_HEADER + body, "utf-8")
    os.replace(partial, path)  # whole or not at all


if __name__ == "__main__":
    main()
