"""What our hook costs: a build with it against plain MkDocs on ``python -m kb render --out``, and the
time from a one-page edit under ``mkdocs serve`` to the page being served with it.

    PYTHONPATH=scripts .venv/bin/python benchmarks/hookbench.py [--runs 3] [--json OUT.json]

Times are medians of ``--runs``; each build's CPU time (user + system, of the child) is given as well
as its wall time, since on a shared machine the wall time mostly measures the other tenants.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run; exits when the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def builds(tmp: Path, runs: int) -> dict[str, Any]:
    env = {**ENV, "PYTHONPATH": str(ROOT / "scripts")}
    rendered = tmp / "rendered"
    timed([sys.executable, "-m", "kb", "render", "--out", str(rendered)], ROOT, env)
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d"]
    hook, plain = [], []
    for _ in range(runs):  # alternating, so that both see the same machine state
        hook.append(timed([*mkdocs, str(tmp / "hook")], ROOT, env))
        plain.append(timed([*mkdocs, str(tmp / "plain")], rendered, {**ENV, "PYTHONPATH": ""}))
    out: dict[str, Any] = {}
    for name, runs_of in (("hook", hook), ("plain", plain)):
        out[f"{name}_wall_s"] = round(statistics.median(w for w, _ in runs_of), 3)
        out[f"{name}_cpu_s"] = round(statistics.median(c for _, c in runs_of), 3)
    out["ratio_wall"] = round(out["hook_wall_s"] / out["plain_wall_s"], 3)
    out["ratio_cpu"] = round(out["hook_cpu_s"] / out["plain_cpu_s"], 3)
    # pair by pair, for the record
    out["ratios_cpu"] = [round(h / p, 3) for (_, h), (_, p) in zip(hook, plain, strict=True)]
    return out


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8", "replace"))
    except OSError:
        return ""


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """Virtual environments, Git and caches anywhere; built sites only at the top (not site*.py)."""
    skip = {n for n in names if n in (".venv", ".git", "__pycache__", "node_modules")}
    if Path(folder) == ROOT:
        skip |= {n for n in names if n.startswith("site") and (ROOT / n).is_dir()}
    return skip


def edit_to_reload(tmp: Path, runs: int) -> dict[str, Any]:
    """Serve a copy of the project, append a marker to one page, time until the server returns it."""
    root = tmp / "project"
    shutil.copytree(ROOT, root, ignore=_not_copied)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**ENV, "PYTHONPATH": str(root / "scripts")}
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", f"127.0.0.1:{port}"]
    server = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/migrate/quickstart/"
    times = []
    try:
        end = time.monotonic() + 300
        while "<html" not in _get(url) and time.monotonic() < end:
            time.sleep(0.2)
        page = root / "docs" / "migrate" / "quickstart.md"
        for n in range(runs):
            marker = f"hookbench-marker-{n}-{time.time_ns()}"
            time.sleep(2)  # let the watcher settle after the previous build
            start = time.perf_counter()
            page.write_text(page.read_text("utf-8") + f"\n{marker}\n", "utf-8")
            while marker not in _get(url):
                if time.perf_counter() - start > 120:
                    sys.exit("the edit never showed")
                time.sleep(0.05)
            times.append(time.perf_counter() - start)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"edit_to_reload_s": round(statistics.median(times), 3), "edit_runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--write", action="store_true", help="record the CPU ratio in docs/data/speed.yml")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {**builds(Path(tmp), args.runs), **edit_to_reload(Path(tmp), args.runs)}
    result["edit_within_plain_build"] = result["edit_to_reload_s"] <= result["plain_wall_s"]
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", "utf-8")
    if args.write:
        import speedrecord

        speedrecord.write([hook_record(result, f"{COMMAND} --runs {args.runs} --write")])


COMMAND = "PYTHONPATH=scripts .venv/bin/python benchmarks/hookbench.py"  # as the performance page gives it


def hook_record(result: dict[str, Any], command: str) -> dict[str, Any]:
    """The CPU ratio of each pair of builds (hook, plain) as the hook-cost record of the speed table."""
    import speedrecord

    note = (
        f"Median CPU time: {result['hook_cpu_s']:.2f} s with the hook, {result['plain_cpu_s']:.2f} s plain; "
        f"wall time {result['hook_wall_s']:.2f} s and {result['plain_wall_s']:.2f} s ({result['ratio_wall']:.2f}x)."
    )
    return speedrecord.figure_record("hook-cost", result["ratios_cpu"], speedrecord.HOOK_TARGET, "x", command, note)


if __name__ == "__main__":
    main()
