"""Benchmarks, printed rather than asserted (timings vary by machine).

  python benchmarks/bench.py sitecheck [--pages 1000]   built-site check on a generated site
  python benchmarks/bench.py overhead                    KB validation + rendering vs mkdocs build

Run with the project's venv and PYTHONPATH=scripts (./dev test sets both; or see README).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gen_site import generate  # noqa: E402
from kb.project import validate_project  # noqa: E402
from kb.sitecheck import check_site  # noqa: E402

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "scripts")}


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def build(config: Path, site: Path, strict: bool = True) -> None:
    args = [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(site)] + (
        ["--strict"] if strict else []
    )
    result = subprocess.run(args, env=ENV, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"build of {config} failed:\n{result.stderr[-3000:]}")


def bench_sitecheck(pages: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = generate(Path(tmp) / "p", pages)
        start = time.perf_counter()
        build(project / "mkdocs.yml", project / "site")
        html = list((project / "site").rglob("*.html"))
        size = sum(p.stat().st_size for p in html)
        print(
            f"generated and built {len(html)} HTML pages ({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s"
        )
        times = timed(lambda: check_site(project / "site"), runs)
        problems = check_site(project / "site")
        print(
            f"kb check-site: median {statistics.median(times):.3f} s over {runs} runs "
            f"(min {min(times):.3f}, max {max(times):.3f}); {len(problems)} problem(s)"
        )


def bench_overhead(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "mkdocs-nohook.yml"
        text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
        # Without the hook, shortcodes stay comments and KB anchors are missing: build it non-strict.
        text = text.replace("hooks:\n  - scripts/hooks.py\n", "").replace("strict: true", "strict: false")
        bare.write_text(text, encoding="utf-8")
        shutil.copy(bare, ROOT / ".bench-nohook.yml")
        try:
            plain = timed(lambda: build(ROOT / ".bench-nohook.yml", Path(tmp) / "a", strict=False), runs)
        finally:
            (ROOT / ".bench-nohook.yml").unlink()
        full = timed(lambda: build(ROOT / "mkdocs.yml", Path(tmp) / "b"), runs)
        kb = timed(lambda: validate_project(ROOT), runs * 3)
        project = validate_project(ROOT)
        site = timed(lambda: check_site(Path(tmp) / "b"), runs * 3)
        p, f, k, s = (statistics.median(x) for x in (plain, full, kb, site))
        print(f"mkdocs build without the hook: median {p:.2f} s; with the hook: {f:.2f} s ({runs} runs each)")
        print(
            f"KB validation + shortcode rendering of {len(project.pages)} pages: median {k * 1000:.0f} ms "
            f"= {100 * k / p:.1f}% of the plain build"
        )
        print(f"built-site check of the real site: median {s * 1000:.0f} ms = {100 * s / p:.1f}% of the plain build")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("sitecheck")
    a.add_argument("--pages", type=int, default=1000)
    a.add_argument("--runs", type=int, default=5)
    b = sub.add_parser("overhead")
    b.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.what == "sitecheck":
        bench_sitecheck(args.pages, args.runs)
    else:
        bench_overhead(args.runs)


if __name__ == "__main__":
    main()
