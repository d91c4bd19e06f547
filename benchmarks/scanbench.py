"""The scanner against its floor and its peer, side by side on one real tree (printed, not asserted).

  python benchmarks/scanbench.py [--runs 5] [--fix-runs 3] [--tree DIR] [--fix-tree DIR] [--no-torchfix]

The tree is real code nobody here wrote: by default every ``.py`` file of the installed torch
package (about 2,300 files), copied into a temporary folder. Three measurements, each a median of
alternating runs so that both sides see the same machine state:

- **scan vs floor**: ``python -m kb scan --format json TREE`` against a process that only reads
  and ``ast.parse``s every file, with the same number of worker processes. Target: at most 1.6x (issue 34).
- **--fix vs TorchFix 0.7.0 --fix**: each on a fresh copy of the tree. TorchFix runs from its own
  virtual environment (``.cache/bench-torchfix``, pinned in requirements-torchfix.txt: it needs
  libcst < 1.6). Target: ours at least 10x faster. Each tool fixes its own rules.
- how many files ``--fix`` parsed with LibCST (only those with a fixable finding).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT / "scripts")}
TORCHFIX_VENV = ROOT / ".cache" / "bench-torchfix"

FLOOR = r"""
import ast, os, sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

def parse(chunk):
    n = 0
    for path in chunk:
        with open(path, "rb") as f:
            raw = f.read()
        try:
            ast.parse(raw.decode("utf-8-sig"), path)
            n += 1
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
            pass
    return n

files = sorted(os.path.join(r, f) for r, _, fs in os.walk(sys.argv[1]) for f in fs if f.endswith(".py"))
jobs = len(os.sched_getaffinity(0))
size = max(8, min(250, len(files) // (jobs * 32) + 1))  # the scan's own chunks (kb.scan.scanrun.scan_all)
chunks = [files[i : i + size] for i in range(0, len(files), size)]
with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
    print(sum(pool.map(parse, chunks)))
"""


def copy_tree(src: Path, dest: Path) -> int:
    n = 0
    for path in src.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        n += 1
    return n


def run(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0, 1)) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    took = time.perf_counter() - start
    if result.returncode not in ok:
        sys.exit(f"{' '.join(cmd[:4])}... failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return took


def torchfix() -> Path:
    python = TORCHFIX_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_VENV)], check=True)
        req = ROOT / "benchmarks" / "requirements-torchfix.txt"
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(req)], check=True)
    return TORCHFIX_VENV / "bin" / "torchfix"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fix-runs", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="a folder of Python code (default: the installed torch package)")
    parser.add_argument("--fix-tree", type=Path, help="the tree for the --fix comparison (default: --tree)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip the TorchFix comparison")
    args = parser.parse_args()
    import torch  # the venv's torch: its sources are the default tree

    src = args.tree or Path(torch.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "tree"
        files = copy_tree(src, base)
        print(f"tree: {files} .py files from {src}")
        scan = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--format", "json", "tree"]
        floor = [sys.executable, "-c", FLOOR, "tree"]
        run(scan, Path(tmp))  # warm the page cache and bytecode
        run(floor, Path(tmp), ok=(0,))
        ours, ref = [], []
        for _ in range(args.runs):
            ref.append(run(floor, Path(tmp), ok=(0,)))
            ours.append(run(scan, Path(tmp)))
        s, f = statistics.median(ours), statistics.median(ref)
        print(f"scan {s:.2f} s, ast.parse floor {f:.2f} s: {s / f:.2f}x the floor (target <= 1.6x)")
        report = json.loads(subprocess.run(scan, cwd=tmp, env=ENV, capture_output=True, text=True).stdout)
        fixable = {x["path"] for x in report["findings"] if x["fixable"]}
        print(f"--fix parses with LibCST only the {len(fixable)} of {files} files with a fixable finding")
        if args.fix_tree:
            shutil.rmtree(base)
            files = copy_tree(args.fix_tree, base)
            print(f"fix tree: {files} .py files from {args.fix_tree}")
        fix_ours, fix_peer = [], []
        tf = None if args.no_torchfix else torchfix()
        for i in range(args.fix_runs):
            for who, times in (("ours", fix_ours), ("torchfix", fix_peer)):
                if who == "torchfix" and tf is None:
                    continue
                tree = Path(tmp) / f"fix-{who}-{i}"
                shutil.copytree(base, tree)
                if who == "ours":
                    cmd = [
                        sys.executable,
                        "-m",
                        "kb",
                        "--root",
                        str(ROOT),
                        "scan",
                        "--fix",
                        "--format",
                        "json",
                        tree.name,
                    ]
                else:
                    cmd = [str(tf), "--fix", tree.name]
                times.append(run(cmd, Path(tmp), ok=(0, 1)))
                shutil.rmtree(tree)
        if not fix_ours:
            return  # --fix-runs 0: the scan alone
        o = statistics.median(fix_ours)
        print(f"kb scan --fix: {o:.2f} s")
        if fix_peer:
            p = statistics.median(fix_peer)
            print(f"TorchFix 0.7.0 --fix: {p:.2f} s: ours is {p / o:.1f}x faster (target >= 10x)")


if __name__ == "__main__":
    main()
