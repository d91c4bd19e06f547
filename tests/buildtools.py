"""Run the project's checks the way the commands in README.md and CONTRIBUTING.md do, in a subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}

# A time limit in a test only guards against a hang, so it is wide: on the shared 2-core machine at
# load 4-10 work that takes 0.3 s alone can take 10 s and more. Each guarded case is linear and
# takes well under a second alone; the regressions they catch took minutes or never ended.
# Speed targets are measured in benchmarks/, not asserted here.
HANG_S = 60


def interruptible() -> None:
    """A child's ``preexec_fn``: Ctrl-C (SIGINT) back to its default. A shell that starts a command
    in the background (``cmd &``, nohup) makes it ignore SIGINT, and its children inherit that, so a
    test that sends SIGINT would see it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    scripts = cwd / "scripts" if (cwd / "scripts").is_dir() else Path(__file__).resolve().parents[1] / "scripts"
    env = {**ENV, "PYTHONPATH": str(scripts)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def validate(root: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "kb", "validate"], root)


def build(root: Path, site: Path, config: str = "mkdocs.yml") -> subprocess.CompletedProcess:
    """A strict build (never -q: quiet mode hides warnings from --strict's count)."""
    return run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", config, "-d", str(site)], root)


def check(root: Path) -> tuple[int, str]:
    """validate, then (if that passed) build: `./dev build` (CONTRIBUTING.md) in one call. Returns (rc, output)."""
    first = validate(root)
    if first.returncode != 0:
        return first.returncode, first.stdout + first.stderr
    second = build(root, root / "site")
    return second.returncode, second.stdout + second.stderr


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the run) when the block takes longer than ``seconds``."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
